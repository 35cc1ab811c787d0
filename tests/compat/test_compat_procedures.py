"""Proxy-answered system procedures, without a database: the exact introspection statements
LLM-app libraries send (langchain-neo4j `Neo4jGraph`, neo4j-graphrag `get_schema`, llama-index
`Neo4jPropertyGraphStore`, mcp-neo4j-cypher) become queries that parse and return the same
columns; `[compat]` settings; the typed, counted schema catalog and `query-guard schema`.
End to end through the Bolt proxy: tests/compat/test_compat_procedures_e2e.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import redis

from query_guard.backends.embedded import EmbeddedFalkorDB
from query_guard.backends.factory import discover_from_uri
from query_guard.build import build_guard
from query_guard.cli.main import main
from query_guard.config.load import parse_config
from query_guard.cypher import ast
from query_guard.cypher.query import CypherQuery
from query_guard.schema.catalog import SchemaCatalog

# --- what the libraries send (neo4j-graphrag 1.x / langchain-neo4j, llama-index, mcp) -------

NODE_PROPS = (
    "CALL apoc.meta.data({sample: $SAMPLE}) YIELD label, other, elementType, type, property "
    "WHERE NOT type = 'RELATIONSHIP' AND elementType = 'node' AND NOT label IN $EXCLUDED_LABELS "
    "WITH label AS nodeLabel, collect({property:property, type:type}) AS properties "
    "RETURN {label: nodeLabel, properties: properties} AS output"
)
REL_PROPS = (
    "CALL apoc.meta.data({sample: $SAMPLE}) YIELD label, other, elementType, type, property "
    "WHERE NOT type = 'RELATIONSHIP' AND elementType = 'relationship' "
    "AND NOT label in $EXCLUDED_LABELS "
    "WITH label AS relType, collect({property:property, type:type}) AS properties "
    "RETURN {type: relType, properties: properties} AS output"
)
PATTERNS = (
    "CALL apoc.meta.data({sample: $SAMPLE}) YIELD label, other, elementType, type, property "
    "WHERE type = 'RELATIONSHIP' AND elementType = 'node' "
    "UNWIND other AS other_node WITH * WHERE NOT label IN $EXCLUDED_LABELS "
    "AND NOT other_node IN $EXCLUDED_LABELS "
    "RETURN {start: label, type: property, end: toString(other_node)} AS output"
)
LLAMA_NODE_PROPS = """
CALL apoc.meta.data($config)
YIELD label, other, elementType, type, property
WHERE NOT type = "RELATIONSHIP" AND elementType = "node"
  AND NOT label IN $EXCLUDED_LABELS
WITH label AS nodeLabels, collect({property:property, type:type}) AS properties
RETURN {labels: nodeLabels, properties: properties} AS output
"""
LLAMA_REL_PROPS = """
CALL apoc.meta.data($config)
YIELD label, other, elementType, type, property
WHERE NOT type = "RELATIONSHIP" AND elementType = "relationship"
      AND NOT label in $EXCLUDED_LABELS
WITH label AS nodeLabels, collect({property:property, type:type}) AS properties
RETURN {type: nodeLabels, properties: properties} AS output
"""
LLAMA_PATTERNS = """
CALL apoc.meta.data($config)
YIELD label, other, elementType, type, property
WHERE type = "RELATIONSHIP" AND elementType = "node"
UNWIND other AS other_node
WITH * WHERE NOT label IN $EXCLUDED_LABELS
    AND NOT other_node IN $EXCLUDED_LABELS
RETURN {start: label, type: property, end: toString(other_node)} AS output
"""
SHOW_CONSTRAINTS = "SHOW CONSTRAINTS"
SCHEMA_NODES = (
    "CALL apoc.schema.nodes() YIELD label, properties, type, size, valuesSelectivity "
    "WHERE type = 'RANGE' RETURN *, size * valuesSelectivity as distinctValues"
)
META_GRAPH = (
    "CALL apoc.meta.graph({sample: 1000, maxRels: 100}) YIELD nodes, relationships "
    "RETURN nodes, [rel in relationships | {name:apoc.any.property(rel, 'type'), "
    "count: apoc.any.property(rel, 'count')}] AS relationships"
)
META_SUBGRAPH = (
    "CALL apoc.meta.subGraph({}) YIELD nodes, relationships "
    "RETURN nodes, [rel in relationships | {name:apoc.any.property(rel, 'type'), "
    "count: apoc.any.property(rel, 'count')}] AS relationships"
)
META_SCHEMA = "CALL apoc.meta.schema({sample: None}) YIELD value RETURN value"
COMPONENTS = "CALL dbms.components()"

LIBRARY_STATEMENTS = [
    NODE_PROPS, REL_PROPS, PATTERNS, LLAMA_NODE_PROPS, LLAMA_REL_PROPS, LLAMA_PATTERNS,
    SHOW_CONSTRAINTS, SCHEMA_NODES, META_GRAPH, META_SUBGRAPH, META_SCHEMA, COMPONENTS,
]  # fmt: skip
EXCLUDED = ["_Bloom_Perspective_", "_Bloom_Scene_"]
PARAMS = {"SAMPLE": 1000, "EXCLUDED_LABELS": EXCLUDED, "config": {"sample": 1000}}

# --------------------------------------------------------------------------- unit


def _returned(text: str) -> list[str]:
    """The column names of the statement's final RETURN (None for `RETURN *`)."""
    single = CypherQuery.parse(text).script.statements[0]
    assert isinstance(single, ast.SingleQuery)
    last = single.clauses[-1]
    assert isinstance(last, ast.Return)
    return [
        (i.alias.name if i.alias else CypherQuery.parse(text).source(i.expr)) for i in last.items
    ]


@pytest.fixture(scope="module")
def typed_schema() -> SchemaCatalog:
    return SchemaCatalog.from_dict(
        {
            "nodes": {"Person": ["name", "born"], "Movie": ["title"]},
            "relationships": [
                {"start": "Person", "type": "ACTED_IN", "end": "Movie", "properties": ["roles"]}
            ],
            "property_types": {
                "nodes": {"Person": {"name": "STRING", "born": "INTEGER"}},
                "relationships": {"ACTED_IN": {"roles": "LIST"}},
            },
            "counts": {"nodes": {"Person": 3, "Movie": 2}, "relationships": {"ACTED_IN": 4}},
        }
    )


@pytest.mark.parametrize("statement", LIBRARY_STATEMENTS)
def test_library_statement_is_answered_as_a_query_that_parses(
    statement: str, typed_schema: SchemaCatalog
) -> None:
    verdict = build_guard(None, typed_schema, entry_points=False).check(statement)
    assert not verdict.blocked, verdict.findings
    assert "COMPAT.PROCEDURE" in verdict.codes
    rewritten = CypherQuery.parse(verdict.query)
    assert not list(rewritten.find(ast.CallProcedure))
    assert "apoc." not in verdict.query
    if " RETURN " in statement.replace("\n", " "):
        assert _returned(verdict.query.removesuffix(" LIMIT 1000")) == _returned(statement)


def test_procedures_pass_through_when_the_backend_serves_them() -> None:
    config = parse_config(
        {"compat": {"procedures": "backend"}, "guard": {"allowed_procedures": ["apoc.meta.*"]}}
    )
    verdict = build_guard(config, None, entry_points=False).check(META_SCHEMA)
    assert "COMPAT.PROCEDURE" not in verdict.codes
    assert "CALL apoc.meta.schema" in verdict.query
    refused = build_guard(parse_config({"compat": {"procedures": "backend"}}), None).check(
        COMPONENTS
    )
    assert refused.blocked and "SEC.UNKNOWN_PROCEDURE" in refused.codes


def test_disabling_the_rule_stops_serving() -> None:
    verdict = build_guard(None, None, disable=["compat_procedures"]).check(COMPONENTS)
    assert verdict.blocked and "SEC.UNKNOWN_PROCEDURE" in verdict.codes


def test_schema_statements_are_refused_by_default_and_acknowledged_on_request() -> None:
    statement = "CREATE CONSTRAINT IF NOT EXISTS FOR (n:`__Node__`) REQUIRE n.id IS UNIQUE"
    refused = build_guard(None, None).check(statement)
    assert refused.blocked and "SEC.WRITE" in refused.codes
    assert "read-only" in refused.findings[0].message
    config = parse_config({"compat": {"schema_statements": "acknowledge"}})
    acknowledged = build_guard(config, None).check(statement)
    assert not acknowledged.blocked
    assert "COMPAT.SCHEMA_STATEMENT" in acknowledged.codes
    assert "CONSTRAINT" not in acknowledged.query
    # not idempotent: still a schema command, still refused
    assert build_guard(config, None).check(statement.replace(" IF NOT EXISTS", "")).blocked


def test_compat_config_values_are_checked() -> None:
    from query_guard.errors import ConfigError

    with pytest.raises(ConfigError, match=r"compat\.procedures"):
        parse_config({"compat": {"procedures": "sometimes"}})


def test_old_schema_files_load_and_new_ones_round_trip(typed_schema: SchemaCatalog) -> None:
    old = SchemaCatalog.from_dict({"nodes": {"Person": ["name"]}, "relationships": []})
    assert old.property_type("Person", "name") == "ANY"
    assert "property_types" not in old.to_dict()
    again = SchemaCatalog.from_dict(typed_schema.to_dict())
    assert again.to_dict() == typed_schema.to_dict()
    assert again.property_type("ACTED_IN", "roles", relationship=True) == "LIST"
    assert again.node_counts == {"Movie": 2, "Person": 3}


def test_schema_command_prints_property_types_and_counts(movies_url: str, tmp_path: Path) -> None:
    out = tmp_path / "schema.json"
    assert main(["schema", "--uri", movies_url, "--out", str(out)]) == 0
    schema = json.loads(out.read_text())
    assert schema["property_types"]["nodes"]["Person"] == {"born": "INTEGER", "name": "STRING"}
    assert schema["property_types"]["relationships"]["ACTED_IN"] == {"roles": "LIST"}
    assert schema["counts"]["nodes"] == {"Movie": 38, "Person": 133}
    assert sum(schema["counts"]["relationships"].values()) == 253
    assert SchemaCatalog.load(out).property_type("Movie", "title") == "STRING"


def test_property_types_of_sparse_mixed_and_list_values(
    falkordb_server: EmbeddedFalkorDB, fresh_graph: tuple[str, str]
) -> None:
    name, url = fresh_graph
    with redis.Redis(host=falkordb_server.host, port=falkordb_server.port) as client:
        client.execute_command(
            "GRAPH.QUERY",
            name,
            "UNWIND range(1, 40) AS i CREATE (:Doc {id: i, "
            "code: CASE WHEN i % 2 = 0 THEN i ELSE toString(i) END, "
            "embedding: [x IN range(1, 64) | x * 0.5], "
            "note: CASE WHEN i = 40 THEN 'last' ELSE null END})",
        )
    schema = asyncio.run(discover_from_uri(url))
    assert schema["property_types"]["nodes"]["Doc"] == {
        "id": "INTEGER",
        "code": "STRING",  # strings and integers: the first one's type, as APOC reports one
        "embedding": "LIST",
        "note": "STRING",  # carried by one node of forty
    }
    assert schema["counts"]["nodes"] == {"Doc": 40}
