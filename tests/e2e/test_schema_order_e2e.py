"""The procedures the proxy answers from its catalog list labels, relationship types and
patterns in the order they were created, as Neo4j (and APOC over it) does, never
alphabetically by default. FalkorDB lists them in `db.labels()` / `db.relationshipTypes()` as
they were created; ArcadeDB has no such listing (its `db.labels()` is its type map's hash
order, its schema, `schema:types` read here over its HTTP API, orders types by name), so the
proxy recovers creation from its record ids (`#bucket:position`: a type's buckets are numbered
on when it is created). Through the proxy neo4j-graphrag's and langchain-neo4j's ordered
comparisons of `apoc.meta.data` rows hold on both. Real FalkorDB and ArcadeDB, the real neo4j
driver."""

from __future__ import annotations

import base64
import json
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
import redis

from query_guard.backends.arcadedb import ArcadeDBServer, unavailable_reason
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from tests.conftest import graph_url

PASSWORD_ENV = "QG_TEST_ORDER_ARCADEDB_PASSWORD"
STATEMENTS = (  # labels and types created in an order that is not alphabetical
    "CREATE (:Zeta {z: 1})-[:ZREL {w: 1}]->(:Alpha {a: 1})",
    "CREATE (:Node {foo: 'bar'})-[:REL {foo: 1}]->(:Node {foo: 2})",
    "CREATE (:EmptyNode)-[:EMPTY_REL]->(:EmptyNode)",
    "CREATE (:Mid {m: 1})-[:AREL]->(:Beta {b: 1})",
    "CREATE INDEX FOR (n:Zeta) ON (n.z)",
    "CREATE INDEX FOR (n:Alpha) ON (n.a)",
    "CREATE INDEX FOR (n:Node) ON (n.foo)",  # FalkorDB's generated names: Node's comes first
)
CREATED_LABELS = ["Zeta", "Alpha", "Node", "EmptyNode", "Mid", "Beta"]
CREATED_TYPES = ["ZREL", "REL", "EMPTY_REL", "AREL"]
PATTERNS = {("Zeta", "ZREL", "Alpha"), ("Node", "REL", "Node"),
            ("EmptyNode", "EMPTY_REL", "EmptyNode"), ("Mid", "AREL", "Beta")}  # fmt: skip
# neo4j-graphrag's REL_QUERY (neo4j_graphrag.schema), which its e2e tests compare in order
REL_QUERY = (
    "CALL apoc.meta.data({maxRels: 1000, sample: 1000}) YIELD label, other, elementType, "
    "type, property WHERE type = 'RELATIONSHIP' AND elementType = 'node' "
    "UNWIND other AS other_node RETURN {start: label, type: property, end: toString(other_node)} "
    "AS output"
)


class Database:
    """The backend as a direct client sees it: its own db.labels / db.relationshipTypes, and
    its schema order (`schema`: FalkorDB's is its listing's, ArcadeDB's its schema:types')."""

    def __init__(self, name: str, column: Any, backend: dict[str, Any], schema: Any) -> None:
        self.name, self._column, self.backend, self._schema = name, column, backend, schema

    def labels(self) -> list[str]:
        return list(self._column("CALL db.labels()"))

    def types(self) -> list[str]:
        return list(self._column("CALL db.relationshipTypes()"))

    def label_order(self) -> list[str]:
        return self._schema("vertex") if self._schema else self.labels()

    def type_order(self) -> list[str]:
        return self._schema("edge") if self._schema else self.types()


def arcadedb_schema(server: ArcadeDBServer) -> Any:
    """ArcadeDB's own schema order of its vertex or edge types (SQL over its HTTP API)."""

    def names(kind: str) -> list[str]:
        command = f"SELECT name FROM schema:types WHERE type = '{kind}'"
        request = urllib.request.Request(
            f"http://{server.host}:{server.http_port}/api/v1/command/{server.database}",
            data=json.dumps({"language": "sql", "command": command}).encode(),
            headers={
                "Authorization": "Basic "
                + base64.b64encode(f"root:{server.root_password}".encode()).decode(),
                "Content-Type": "application/json",
            },
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return [row["name"] for row in json.load(answer)["result"]]

    return names


@pytest.fixture(scope="module", params=["falkordb", "arcadedb"])
def database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Database]:
    if request.param == "falkordb":
        server = request.getfixturevalue("falkordb_server")
        graph = "schema_order"
        with redis.Redis(host=server.host, port=server.port) as client:
            if client.exists(graph):
                client.execute_command("GRAPH.DELETE", graph)
            for statement in STATEMENTS:
                client.execute_command("GRAPH.QUERY", graph, statement)

            def falkor_column(query: str) -> list[str]:
                reply = client.execute_command("GRAPH.RO_QUERY", graph, query)
                return [row[0].decode() for row in reply[1]]

            backend = {"cypher": graph_url(server, graph)}
            yield Database("falkordb", falkor_column, backend, None)
            client.execute_command("GRAPH.DELETE", graph)
        return
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"ArcadeDB cannot run here: {reason}")
    arcade = ArcadeDBServer(Path(tmp_path_factory.mktemp("order")) / "arcadedb", load_movies=False)
    arcade.start()
    os.environ[PASSWORD_ENV] = arcade.root_password
    try:
        with neo4j.GraphDatabase.driver(arcade.url, auth=arcade.auth) as drv:
            for statement in STATEMENTS:
                drv.execute_query(statement, database_=arcade.database)

            def arcade_column(query: str) -> list[str]:
                records, _, _ = drv.execute_query(query, database_=arcade.database)
                return [r[0] for r in records]

            backend = {
                "cypher": arcade.url,
                "database": arcade.database,
                "credentials": "configured",
                "user": "root",
                "password_env": PASSWORD_ENV,
            }
            yield Database("arcadedb", arcade_column, backend, arcadedb_schema(arcade))
    finally:
        os.environ.pop(PASSWORD_ENV, None)
        arcade.stop()


@pytest.fixture(scope="module")
def driver(database: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[neo4j.Driver]:
    tmp = tmp_path_factory.mktemp(f"order-proxy-{database.name}")
    config = parse_config(
        {"server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp)}, "backend": database.backend}
    )
    with (
        ProxyThread(config) as running,
        neo4j.GraphDatabase.driver(f"bolt://{running.address}", auth=("neo4j", "x")) as drv,
    ):
        yield drv


def column(driver: neo4j.Driver, query: str) -> list[Any]:
    records, _, _ = driver.execute_query(query)
    return [r[0] for r in records]


def test_the_database_lists_what_was_created(database: Database) -> None:
    """FalkorDB in the order of creation (as Neo4j does); ArcadeDB's db.labels in its hash
    order, its schema by name (case-insensitively): neither is creation."""
    if database.name == "falkordb":
        assert (database.labels(), database.types()) == (CREATED_LABELS, CREATED_TYPES)
    else:
        assert sorted(database.labels()) == sorted(CREATED_LABELS)
        assert database.label_order() == sorted(CREATED_LABELS, key=str.casefold)
        assert database.type_order() == sorted(CREATED_TYPES, key=str.casefold)


def test_labels_and_types_come_in_the_order_they_were_created(driver: neo4j.Driver) -> None:
    labels, types = CREATED_LABELS, CREATED_TYPES
    assert column(driver, "CALL db.labels()") == labels
    assert column(driver, "CALL db.relationshipTypes()") == types
    [graph] = column(driver, "CALL apoc.meta.graph() YIELD nodes RETURN nodes")
    assert [n["name"] for n in graph] == labels
    [value] = column(driver, "CALL apoc.meta.schema()")
    assert list(value) == labels + types
    [stats] = column(driver, "CALL apoc.meta.stats() YIELD labels RETURN labels")
    assert list(stats) == labels
    [nodes] = column(driver, "CALL db.schema.visualization() YIELD nodes RETURN nodes")
    assert [n["name"] for n in nodes] == labels
    typed = column(driver, "CALL db.schema.nodeTypeProperties() YIELD nodeLabels "
                           "RETURN nodeLabels[0]")  # fmt: skip
    assert list(dict.fromkeys(typed)) == labels


def test_apoc_meta_data_patterns_follow_the_label_then_the_type_order(
    driver: neo4j.Driver,
) -> None:
    """neo4j-graphrag's relationship query: per start label in creation order, its types in
    creation order (what APOC does over Neo4j's token order, and graphrag's and langchain's
    `test_enhanced_schema_exception` expect)."""
    rows = [(o["start"], o["type"], o["end"]) for o in column(driver, REL_QUERY)]
    assert rows == [
        ("Zeta", "ZREL", "Alpha"),
        ("Node", "REL", "Node"),
        ("EmptyNode", "EMPTY_REL", "EmptyNode"),
        ("Mid", "AREL", "Beta"),
    ]


def test_apoc_schema_nodes_sorts_by_label_as_apoc_does(driver: neo4j.Driver) -> None:
    """APOC sorts apoc.schema.nodes' rows by label (neo4j-graphrag's index test reads the
    first row), whatever order the database created or lists its indexes in."""
    records, _, _ = driver.execute_query(
        "CALL apoc.schema.nodes() YIELD label, properties, type WHERE type = 'RANGE' "
        "RETURN label, properties"
    )
    found = [(r["label"], r["properties"]) for r in records]
    assert found == [("Alpha", ["a"]), ("Node", ["foo"]), ("Zeta", ["z"])]
