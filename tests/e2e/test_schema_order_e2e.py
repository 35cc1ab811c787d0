"""The procedures the proxy answers from its catalog list labels, relationship types and
patterns in the database's order (issue 21): the order of its own `db.labels()` /
`db.relationshipTypes()`, never alphabetical. FalkorDB (like Neo4j, whose APOC follows it)
lists them as they were created, so through the proxy neo4j-graphrag's ordered comparisons of
`apoc.meta.data` rows hold; ArcadeDB lists its types in an order of its own (not creation),
which the proxy keeps as it is. Real FalkorDB and ArcadeDB, the real neo4j driver."""

from __future__ import annotations

import os
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
    """The backend as a direct client sees it: its own db.labels / db.relationshipTypes."""

    def __init__(self, name: str, column: Any, backend: dict[str, Any]) -> None:
        self.name, self._column, self.backend = name, column, backend

    def labels(self) -> list[str]:
        return list(self._column("CALL db.labels()"))

    def types(self) -> list[str]:
        return list(self._column("CALL db.relationshipTypes()"))


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

            yield Database("falkordb", falkor_column, {"cypher": graph_url(server, graph)})
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
            yield Database("arcadedb", arcade_column, backend)
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
    """FalkorDB in the order of creation (as Neo4j does); ArcadeDB in an order of its own."""
    if database.name == "falkordb":
        assert (database.labels(), database.types()) == (CREATED_LABELS, CREATED_TYPES)
    else:
        assert sorted(database.labels()) == sorted(CREATED_LABELS)
        assert sorted(database.types()) == sorted(CREATED_TYPES)


def test_labels_and_types_come_in_the_databases_order(
    driver: neo4j.Driver, database: Database
) -> None:
    labels, types = database.labels(), database.types()
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
    driver: neo4j.Driver, database: Database
) -> None:
    """neo4j-graphrag's relationship query: per start label in the database's order, its
    types in the database's order (what APOC does over Neo4j's token order)."""
    rows = [(o["start"], o["type"], o["end"]) for o in column(driver, REL_QUERY)]
    assert set(rows) == PATTERNS
    labels, types = database.labels(), database.types()
    assert rows == sorted(rows, key=lambda p: (labels.index(p[0]), types.index(p[1])))
    if database.name == "falkordb":  # created in order: what graphrag's tests expect of Neo4j
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
