"""`SHOW INDEXES` / `SHOW CONSTRAINTS` through the proxy list the database's own indexes and
constraints, with Neo4j 5's default columns: on FalkorDB (a graph of the test-started server
given a range, full-text, vector and relationship index and two constraints) read from
`db.indexes()` / `db.constraints()`, on ArcadeDB from its own SHOW over Bolt. YIELD, WHERE,
RETURN and the kind filters (`SHOW VECTOR INDEXES`) work as on Neo4j; langchain-neo4j's
`Neo4jGraph` reads the constraints into its schema metadata."""

from __future__ import annotations

import datetime
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
import redis
from langchain_neo4j import Neo4jGraph

from query_guard.backends.arcadedb import ArcadeDBServer, unavailable_reason
from query_guard.backends.embedded import EmbeddedFalkorDB
from query_guard.cli.main import main as query_guard
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.indexes import (
    CONSTRAINT_ALL,
    CONSTRAINT_COLUMNS,
    INDEX_ALL,
    INDEX_COLUMNS,
    generated_name,
    neo4j_row,
)

AUTH = ("neo4j", "anything")
PASSWORD_ENV = "QG_TEST_COMPAT_INDEXES_ARCADEDB_PASSWORD"
FALKORDB_SETUP = (
    "CREATE (:Person {name: 'Ann', born: 1970})-[:KNOWS {since: 2001}]->"
    "(:Person {name: 'Bob', born: 1980})-[:LIKES]->(:Movie {title: 'Heat', tagline: 'x'})",
    "CREATE INDEX FOR (p:Person) ON (p.name)",
    "CREATE INDEX FOR (p:Person) ON (p.born)",
    "CREATE INDEX FOR ()-[k:KNOWS]-() ON (k.since)",
    "CREATE FULLTEXT INDEX FOR (m:Movie) ON (m.title, m.tagline)",
    "CREATE VECTOR INDEX FOR (p:Person) ON (p.embedding) "
    "OPTIONS {dimension: 3, similarityFunction: 'euclidean'}",
)
FALKORDB_CONSTRAINTS = (
    ("UNIQUE", "NODE", "Person", "name"),
    ("MANDATORY", "RELATIONSHIP", "KNOWS", "since"),
)


def _index(name: str, kind: str, entity: str, label: str, props: list[str]) -> dict[str, Any]:
    provider = {"RANGE": "range-1.0", "FULLTEXT": "fulltext-1.0", "VECTOR": "vector-2.0"}[kind]
    return {
        "name": name, "state": "ONLINE", "populationPercent": 100.0, "type": kind,
        "entityType": entity, "labelsOrTypes": [label], "properties": props,
        "indexProvider": provider, "owningConstraint": None, "lastRead": None, "readCount": None,
    }  # fmt: skip


# FalkorDB's indexes and constraints are unnamed: they get names as Neo4j generates them
FULLTEXT_MOVIE = generated_name("index", "FULLTEXT", "NODE", "Movie", "title", "tagline")
RANGE_KNOWS = generated_name("index", "RANGE", "RELATIONSHIP", "KNOWS", "since")
RANGE_BORN = generated_name("index", "RANGE", "NODE", "Person", "born")
RANGE_NAME = generated_name("index", "RANGE", "NODE", "Person", "name")
VECTOR_PERSON = generated_name("index", "VECTOR", "NODE", "Person", "embedding")
KNOWS_SINCE = generated_name(
    "constraint", "RELATIONSHIP_PROPERTY_EXISTENCE", "RELATIONSHIP", "KNOWS", "since"
)
PERSON_NAME = generated_name("constraint", "UNIQUENESS", "NODE", "Person", "name")

# what FALKORDB_SETUP creates, as Neo4j lists it (ids: 1… in name order)
FALKORDB_INDEXES = sorted([
    _index(FULLTEXT_MOVIE, "FULLTEXT", "NODE", "Movie", ["title", "tagline"]),
    _index(RANGE_KNOWS, "RANGE", "RELATIONSHIP", "KNOWS", ["since"]),
    _index(RANGE_BORN, "RANGE", "NODE", "Person", ["born"]),
    _index(RANGE_NAME, "RANGE", "NODE", "Person", ["name"]),
    _index(VECTOR_PERSON, "VECTOR", "NODE", "Person", ["embedding"]),
], key=lambda r: r["name"])  # fmt: skip
FALKORDB_CONSTRAINT_ROWS = sorted([
    {"name": KNOWS_SINCE, "type": "RELATIONSHIP_PROPERTY_EXISTENCE",
     "entityType": "RELATIONSHIP", "labelsOrTypes": ["KNOWS"], "properties": ["since"],
     "ownedIndex": None, "propertyType": None},
    {"name": PERSON_NAME, "type": "UNIQUENESS", "entityType": "NODE",
     "labelsOrTypes": ["Person"], "properties": ["name"], "ownedIndex": None,
     "propertyType": None},
], key=lambda r: r["name"])  # fmt: skip


def _names_in_order(*names: str) -> list[str]:
    """The names as SHOW lists them (by name)."""
    return sorted(names)


@pytest.fixture(scope="module")
def falkordb_graph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`falkordb://…/indexed` on a FalkorDB started for this module, with FALKORDB_SETUP run and
    both constraints operational."""
    server = EmbeddedFalkorDB(tmp_path_factory.mktemp("falkordb-indexes"), auth=False)
    server.start()
    try:
        with redis.Redis(host=server.host, port=server.port) as client:
            for statement in FALKORDB_SETUP:
                client.execute_command("GRAPH.QUERY", "indexed", statement)
            for kind, entity, label, prop in FALKORDB_CONSTRAINTS:
                client.execute_command(
                    "GRAPH.CONSTRAINT", "CREATE", "indexed", kind, entity, label,
                    "PROPERTIES", 1, prop,
                )  # fmt: skip
            _wait_operational(client)
        yield f"falkordb://{server.host}:{server.port}/indexed"
    finally:
        server.stop()


def _wait_operational(client: redis.Redis) -> None:
    """FalkorDB builds a constraint in the background (status PENDING until it holds)."""
    for _ in range(200):
        rows = client.execute_command("GRAPH.QUERY", "indexed", "CALL db.constraints()")[1]
        if len(rows) == len(FALKORDB_CONSTRAINTS) and all(b"OPERATIONAL" in r for r in rows):
            return
        time.sleep(0.05)
    raise AssertionError(f"constraints not operational: {rows}")


def start_proxy(backend: dict[str, Any], data_dir: Path) -> ProxyThread:
    raw = {"server": {"bolt": "127.0.0.1:0", "data_dir": str(data_dir)}, "backend": backend}
    raw["audit"] = {"path": str(data_dir / "audit.jsonl")}
    return ProxyThread(parse_config(raw)).start()


@pytest.fixture(scope="module")
def falkordb_proxy(
    falkordb_graph: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ProxyThread]:
    proxy = start_proxy({"cypher": falkordb_graph}, tmp_path_factory.mktemp("proxy-indexes"))
    try:
        yield proxy
    finally:
        proxy.stop()


def rows(proxy: ProxyThread, query: str) -> tuple[list[str], list[dict[str, Any]]]:
    with neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=AUTH) as driver:
        result = driver.execute_query(query)
    return list(result.keys), [r.data() for r in result.records]


def numbered(expected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": i, **row} for i, row in enumerate(expected, 1)]


# ---------------------------------------------------------------------- FalkorDB


def _default(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> list[dict[str, Any]]:
    return [{c: r[c] for c in columns} for r in rows]


def test_query_guard_schema_lists_falkordb_indexes_and_constraints(
    falkordb_graph: str, tmp_path: Path
) -> None:
    out = tmp_path / "schema.json"
    assert query_guard(["schema", "--uri", falkordb_graph, "--out", str(out)]) == 0
    schema = json.loads(out.read_text("utf-8"))
    assert _default(schema["indexes"], INDEX_COLUMNS) == numbered(FALKORDB_INDEXES)
    assert _default(schema["constraints"], CONSTRAINT_COLUMNS) == numbered(FALKORDB_CONSTRAINT_ROWS)


def test_show_indexes_and_constraints_on_falkordb(falkordb_proxy: ProxyThread) -> None:
    keys, found = rows(falkordb_proxy, "SHOW INDEXES")
    assert keys == list(INDEX_COLUMNS)
    assert found == numbered(FALKORDB_INDEXES)
    keys, found = rows(falkordb_proxy, "SHOW CONSTRAINTS")
    assert keys == list(CONSTRAINT_COLUMNS)
    assert found == numbered(FALKORDB_CONSTRAINT_ROWS)


def test_apoc_schema_nodes_lists_the_indexes_as_neo4j_graphrag_reads_them(
    falkordb_proxy: ProxyThread,
) -> None:
    """neo4j-graphrag's index query; `size` 0 (the proxy does not know it) keeps the clients
    from asking `apoc.schema.properties.distinct`, which the proxy does not serve."""
    _, found = rows(
        falkordb_proxy,
        "CALL apoc.schema.nodes() YIELD label, properties, type, size, valuesSelectivity "
        "WHERE type = 'RANGE' RETURN *, size * valuesSelectivity as distinctValues",
    )
    assert sorted((r["label"], r["properties"], r["size"], r["distinctValues"]) for r in found) == [
        ("Person", ["born"], 0, 0.0), ("Person", ["name"], 0, 0.0),
    ]  # fmt: skip
    _, found = rows(falkordb_proxy, "CALL apoc.schema.relationships() YIELD type, properties")
    assert [(r["type"], r["properties"]) for r in found] == [("KNOWS", ["since"])]


def test_show_yield_star_and_the_non_default_columns(falkordb_proxy: ProxyThread) -> None:
    """`YIELD *` lists every column Neo4j 5 has; `options` can be named (neo4j-graphrag reads
    a vector index's dimensions from it); an unnamed index gets Neo4j's generated name."""
    keys, found = rows(falkordb_proxy, "SHOW INDEXES YIELD *")
    assert keys == list(INDEX_ALL)
    assert all(r["name"].startswith("index_") and len(r["name"]) == 14 for r in found)
    keys, found = rows(falkordb_proxy, "SHOW CONSTRAINTS YIELD *")
    assert keys == list(CONSTRAINT_ALL)
    by_name = {r["name"]: r for r in found}
    assert by_name[PERSON_NAME]["createStatement"] == (
        f"CREATE CONSTRAINT `{PERSON_NAME}` FOR (n:`Person`) REQUIRE n.`name` IS UNIQUE"
    )
    _, found = rows(
        falkordb_proxy,
        "SHOW VECTOR INDEXES YIELD name, type, entityType, labelsOrTypes, properties, options "
        "WHERE type = 'VECTOR' RETURN name, options",
    )
    assert found == [
        {"name": VECTOR_PERSON, "options": {"indexProvider": "vector-2.0", "indexConfig": {}}}
    ]


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("SHOW RANGE INDEXES YIELD name RETURN name",
         _names_in_order(RANGE_KNOWS, RANGE_BORN, RANGE_NAME)),
        ("SHOW VECTOR INDEXES YIELD name", [VECTOR_PERSON]),
        ("SHOW FULLTEXT INDEXES YIELD name", [FULLTEXT_MOVIE]),
        ("SHOW TEXT INDEXES YIELD name", []),
        ("SHOW INDEXES YIELD name, entityType WHERE entityType = 'RELATIONSHIP' RETURN name",
         [RANGE_KNOWS]),
        # (LIMIT 5 keeps every row: FalkorDB filters a `WITH … LIMIT n WITH * WHERE …`
        # before the LIMIT, which Cypher does not; the proxy's rewrite is Cypher's)
        ("SHOW INDEXES YIELD name, labelsOrTypes AS on ORDER BY name DESC LIMIT 5 "
         "WHERE 'Person' IN on RETURN name",
         _names_in_order(RANGE_BORN, RANGE_NAME, VECTOR_PERSON)[::-1]),
        ("SHOW NODE UNIQUE CONSTRAINTS YIELD name", [PERSON_NAME]),
        ("SHOW RELATIONSHIP UNIQUE CONSTRAINTS YIELD name", []),
        ("SHOW REL EXIST CONSTRAINTS YIELD name", [KNOWS_SINCE]),
        ("SHOW PROPERTY EXISTENCE CONSTRAINTS YIELD name", [KNOWS_SINCE]),
        ("SHOW KEY CONSTRAINTS YIELD name", []),
    ],
)  # fmt: skip
def test_show_kinds_yield_where_return(
    falkordb_proxy: ProxyThread, query: str, names: list[str]
) -> None:
    _, found = rows(falkordb_proxy, query)
    assert [r["name"] for r in found] == names


def test_langchain_neo4jgraph_reads_the_constraints(falkordb_proxy: ProxyThread) -> None:
    """Neo4jGraph keeps SHOW CONSTRAINTS in its schema metadata (add_graph_documents checks it
    for its base-entity constraint)."""
    graph = Neo4jGraph(f"bolt://{falkordb_proxy.address}", *AUTH)
    try:
        constraints = graph.structured_schema["metadata"]["constraint"]
    finally:
        graph.close()
    assert _default(constraints, CONSTRAINT_COLUMNS) == numbered(FALKORDB_CONSTRAINT_ROWS)


# ---------------------------------------------------------------------- ArcadeDB


@pytest.fixture(scope="module")
def arcadedb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArcadeDBServer]:
    """A private ArcadeDB (the movie graph) given an index on Person.name."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"ArcadeDB cannot run here: {reason}")
    server = ArcadeDBServer(tmp_path_factory.mktemp("arcadedb-indexes"))
    server.start()
    try:
        with neo4j.GraphDatabase.driver(server.url, auth=server.auth) as driver:
            driver.execute_query(
                "CREATE INDEX FOR (p:Person) ON (p.name)", database_=server.database
            )
        yield server
    finally:
        server.stop()


def test_show_indexes_and_constraints_on_arcadedb_are_its_own(
    arcadedb: ArcadeDBServer, tmp_path: Path
) -> None:
    os.environ[PASSWORD_ENV] = arcadedb.root_password
    backend = {"cypher": arcadedb.url, "database": arcadedb.database}
    backend |= {"credentials": "configured", "user": "root", "password_env": PASSWORD_ENV}
    proxy = start_proxy(backend, tmp_path)
    try:
        with neo4j.GraphDatabase.driver(arcadedb.url, auth=arcadedb.auth) as driver:
            for show in ("SHOW INDEXES", "SHOW CONSTRAINTS"):
                own = driver.execute_query(show, database_=arcadedb.database).records
                assert own, f"ArcadeDB lists nothing for {show}"
                assert rows(proxy, show)[1] == [r.data() for r in own]
        keys, found = rows(proxy, "SHOW INDEXES YIELD name, options")
        assert keys == ["name", "options"] and all(isinstance(r["options"], dict) for r in found)
        _, found = rows(proxy, "SHOW INDEXES YIELD name, type, properties WHERE type = 'RANGE'")
        assert {"type": "RANGE", "properties": ["name"]} in [
            {k: r[k] for k in ("type", "properties")} for r in found
        ]
    finally:
        proxy.stop()


def test_a_bolt_backend_row_keeps_what_json_holds() -> None:
    """Neo4j's `lastRead` is a date-time: the catalog (saved as JSON) keeps it as null and
    every other column as the database gave it; a missing column is null."""
    read = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    row = {"id": 3, "name": "index_1", "type": "RANGE", "properties": ["name"], "lastRead": read}
    kept = neo4j_row(row, INDEX_COLUMNS)
    assert list(kept) == list(INDEX_COLUMNS)
    assert kept["lastRead"] is None and kept["state"] is None
    assert {k: kept[k] for k in ("id", "name", "type", "properties")} == {
        k: row[k] for k in ("id", "name", "type", "properties")
    }
    catalog = SchemaCatalog.from_dict({"nodes": {}, "relationships": [], "indexes": [kept]})
    assert json.loads(json.dumps(catalog.to_dict()))["indexes"] == [kept]
