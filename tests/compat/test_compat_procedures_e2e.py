"""Proxy-answered system procedures end to end: the introspection statements LLM-app libraries
send (see tests/compat/test_compat_procedures.py) through the Bolt proxy with the real neo4j driver,
on the embedded FalkorDB and on ArcadeDB, return rows shaped the way the libraries read them
and equal to the schema the proxy discovered (what `query-guard schema` prints)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
from neo4j import exceptions as nex

from query_guard.backends.arcadedb import ArcadeDBServer, unavailable_reason
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from query_guard.schema.catalog import SchemaCatalog
from tests.compat.test_compat_procedures import (
    COMPONENTS,
    LLAMA_NODE_PROPS,
    LLAMA_PATTERNS,
    LLAMA_REL_PROPS,
    META_GRAPH,
    META_SCHEMA,
    META_SUBGRAPH,
    NODE_PROPS,
    PARAMS,
    PATTERNS,
    REL_PROPS,
    SCHEMA_NODES,
    SHOW_CONSTRAINTS,
)

_ARCADEDB = unavailable_reason()


@pytest.fixture(scope="module", params=["falkordb", "arcadedb"])
def proxy(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ProxyThread]:
    tmp = tmp_path_factory.mktemp(f"compat-{request.param}")
    table: dict[str, Any] = {
        "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp)},
        "audit": {"path": str(tmp / "audit.jsonl")},
    }
    if request.param == "falkordb":
        with ProxyThread(parse_config(table)) as running:
            yield running
        return
    if _ARCADEDB is not None:
        pytest.skip(f"ArcadeDB cannot run here: {_ARCADEDB}")
    server = ArcadeDBServer(Path(tmp) / "arcadedb")
    server.start()
    try:
        table["backend"] = {
            "cypher": server.url,
            "database": server.database,
            "credentials": "configured",
            "user": "root",
            "password_env": "QG_TEST_COMPAT_ARCADEDB_PASSWORD",
        }
        os.environ["QG_TEST_COMPAT_ARCADEDB_PASSWORD"] = server.root_password
        with ProxyThread(parse_config(table)) as running:
            yield running
    finally:
        server.stop()


@pytest.fixture(scope="module")
def driver(proxy: ProxyThread) -> Iterator[neo4j.Driver]:
    with neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=("neo4j", "x")) as drv:
        yield drv


@pytest.fixture(scope="module")
def catalog(proxy: ProxyThread) -> SchemaCatalog:
    schema = proxy.server.schema
    assert schema is not None and schema.node_property_types, "discovery found no types"
    return schema


def run(driver: neo4j.Driver, query: str) -> tuple[list[str], list[dict[str, Any]]]:
    with driver.session() as session:
        result = session.run(query, PARAMS)
        records = [r.data() for r in result]
        return list(result.keys()), records


def _props(rows: list[dict[str, Any]], key: str) -> dict[str, set[tuple[str, str]]]:
    return {
        r["output"][key]: {(p["property"], p["type"]) for p in r["output"]["properties"]}
        for r in rows
    }


@pytest.mark.parametrize(("query", "key"), [(NODE_PROPS, "label"), (LLAMA_NODE_PROPS, "labels")])
def test_node_properties_with_types(
    driver: neo4j.Driver, catalog: SchemaCatalog, query: str, key: str
) -> None:
    _, rows = run(driver, query)
    got = _props(rows, key)
    assert got["Person"] == {("name", "STRING"), ("born", "INTEGER")}
    assert got == {
        label: set(types.items()) for label, types in catalog.node_property_types.items() if types
    }


@pytest.mark.parametrize("query", [REL_PROPS, LLAMA_REL_PROPS])
def test_relationship_properties_with_types(
    driver: neo4j.Driver, catalog: SchemaCatalog, query: str
) -> None:
    _, rows = run(driver, query)
    got = _props(rows, "type")
    assert got["ACTED_IN"] == {("roles", "LIST")}
    assert got == {
        t: set(types.items()) for t, types in catalog.relationship_property_types.items() if types
    }


@pytest.mark.parametrize("query", [PATTERNS, LLAMA_PATTERNS])
def test_relationship_patterns_equal_the_schema(
    driver: neo4j.Driver, catalog: SchemaCatalog, query: str
) -> None:
    _, rows = run(driver, query)
    got = [(r["output"]["start"], r["output"]["type"], r["output"]["end"]) for r in rows]
    assert sorted(got) == sorted({(r.start, r.type, r.end) for r in catalog.relationships})
    assert ("Person", "ACTED_IN", "Movie") in got


def test_show_constraints_and_schema_nodes_answer_with_no_rows(
    proxy: ProxyThread, driver: neo4j.Driver
) -> None:
    # ArcadeDB names no columns of an empty result; FalkorDB names them all
    named = proxy.server.config.backend["cypher"] == ""
    keys, rows = run(driver, SHOW_CONSTRAINTS)
    assert rows == []
    assert keys[:3] == (["id", "name", "type"] if named else [])
    keys, rows = run(driver, SCHEMA_NODES)
    assert rows == []
    wanted = {"label", "properties", "type", "size", "valuesSelectivity", "distinctValues"}
    assert set(keys) == (wanted if named else set())


@pytest.mark.parametrize("query", [META_GRAPH, META_SUBGRAPH])
def test_meta_graph_counts(driver: neo4j.Driver, catalog: SchemaCatalog, query: str) -> None:
    _, rows = run(driver, query)
    assert len(rows) == 1
    counts = {r["name"]: r["count"] for r in rows[0]["relationships"]}
    assert counts == dict(catalog.relationship_counts)
    assert {n["name"] for n in rows[0]["nodes"]} == set(catalog.labels)


def test_meta_schema_value(driver: neo4j.Driver, catalog: SchemaCatalog) -> None:
    _, rows = run(driver, META_SCHEMA)
    value = rows[0]["value"]
    person = value["Person"]
    assert person["type"] == "node"
    assert person["count"] == catalog.node_counts["Person"]
    assert person["properties"]["born"]["type"] == "INTEGER"
    assert person["relationships"]["ACTED_IN"]["direction"] == "out"
    assert person["relationships"]["ACTED_IN"]["labels"] == ["Movie"]
    assert value["Movie"]["relationships"]["ACTED_IN"]["direction"] == "in"
    assert value["ACTED_IN"]["type"] == "relationship"
    assert value["ACTED_IN"]["properties"]["roles"]["type"] == "LIST"


def test_dbms_components_reports_a_recent_neo4j(driver: neo4j.Driver) -> None:
    keys, rows = run(driver, COMPONENTS)
    assert keys == ["name", "versions", "edition"]
    major, minor, *_ = (int(x) for x in rows[0]["versions"][0].split("."))
    assert (major, minor) >= (5, 18)


def test_db_procedures_with_yield_where_and_standalone(
    driver: neo4j.Driver, catalog: SchemaCatalog
) -> None:
    _, rows = run(driver, "CALL db.labels() YIELD label WHERE label <> 'Movie' RETURN label")
    assert [r["label"] for r in rows] == [x for x in catalog.label_order if x != "Movie"]
    _, rows = run(driver, "CALL db.relationshipTypes()")
    assert {r["relationshipType"] for r in rows} == set(catalog.relationship_types)
    _, rows = run(driver, "CALL db.propertyKeys() YIELD propertyKey AS k RETURN collect(k) AS ks")
    assert {"name", "born", "title", "roles"} <= set(rows[0]["ks"])
    _, rows = run(driver, "CALL db.schema.nodeTypeProperties() YIELD nodeType, propertyName, "
                          "propertyTypes WHERE propertyName = 'born' RETURN *")  # fmt: skip
    assert rows == [{"nodeType": ":`Person`", "propertyName": "born", "propertyTypes": ["Long"]}]
    _, rows = run(driver, "CALL apoc.meta.stats() YIELD relCount, labels, relTypes")
    assert rows[0]["relCount"] == sum(catalog.relationship_counts.values())
    assert rows[0]["labels"] == dict(catalog.node_counts)
    assert rows[0]["relTypes"]["()-[:ACTED_IN]->()"] == catalog.relationship_counts["ACTED_IN"]
    _, rows = run(driver, "CALL db.schema.visualization()")
    assert {n["name"] for n in rows[0]["nodes"]} == set(catalog.labels)
    assert {(r["start"], r["type"], r["end"]) for r in rows[0]["relationships"]} == {
        (r.start, r.type, r.end) for r in catalog.relationships
    }
    query = (
        "CALL db.schema.relTypeProperties() YIELD relType, propertyName "
        "WHERE propertyName IS NOT NULL RETURN relType, propertyName"
    )
    _, rows = run(driver, query)
    assert {"relType": ":`ACTED_IN`", "propertyName": "roles"} in rows


def test_a_call_after_match_runs_once_per_row(driver: neo4j.Driver, catalog: SchemaCatalog) -> None:
    _, rows = run(
        driver, "MATCH (m:Movie) CALL db.labels() YIELD label RETURN count(*) AS n, count(m) AS m"
    )
    movies = catalog.node_counts["Movie"]
    assert rows == [{"n": movies * len(catalog.labels), "m": movies * len(catalog.labels)}]


def test_enhanced_schema_value_sampling_runs(driver: neo4j.Driver) -> None:
    """langchain's enhanced schema samples each label's values with plain Cypher."""
    query = (
        "MATCH (n:`Person`)\n"
        "WITH collect(distinct substring(toString(n.`name`), 0, 50)) AS `name_values`,\n"
        "     min(n.`born`) AS `born_min`,\n     max(n.`born`) AS `born_max`,\n"
        "     count(distinct n.`born`) AS `born_distinct`\n"
        "RETURN {`name`: {values: `name_values`[..10], distinct_count: size(`name_values`)}, "
        "`born`: {min: toString(`born_min`), max: toString(`born_max`), "
        "distinct_count: `born_distinct`}} AS output"
    )
    _, rows = run(driver, query)
    output = rows[0]["output"]
    assert len(output["name"]["values"]) == 10
    assert output["name"]["distinct_count"] == 133
    assert output["born"]["min"] < output["born"]["max"]


def test_show_procedures_with_yield_where_return(driver: neo4j.Driver) -> None:
    query = (
        "SHOW PROCEDURES YIELD name, description AS d ORDER BY name "
        "WHERE name STARTS WITH 'dbms.' OR name = 'apoc.meta.data' RETURN name, d"
    )
    _, rows = run(driver, query)
    assert [r["name"] for r in rows] == ["apoc.meta.data", "dbms.components"]
    assert rows[1]["d"] == "the database's name, versions and edition"
    _, rows = run(driver, "SHOW FUNCTIONS")
    assert {r["name"] for r in rows} == {"apoc.any.property", "apoc.any.properties"}


def test_unknown_yield_column_is_refused_with_the_columns(driver: neo4j.Driver) -> None:
    with pytest.raises(nex.ClientError, match="relationshipType"):
        run(driver, "CALL db.relationshipTypes() YIELD type RETURN type")


def test_falkordb_dialect_shims(proxy: ProxyThread, driver: neo4j.Driver) -> None:
    query = (
        "MATCH (p:Person {name: 'Keanu Reeves'}) "
        "CALL (p) { MATCH (p)-[:ACTED_IN]->(m:Movie) RETURN count(m) AS films } "
        "RETURN elementId(p) AS id, films"
    )
    if proxy.server.config.backend["cypher"] != "":
        pytest.skip("the shims apply to FalkorDB only")
    _, rows = run(driver, query)
    with driver.session() as session:
        record = session.run("MATCH (p:Person {name: 'Keanu Reeves'}) RETURN p").single()
    assert record is not None
    assert rows == [{"id": record["p"].element_id, "films": 7}]
