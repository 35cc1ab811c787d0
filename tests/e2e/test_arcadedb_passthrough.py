"""In front of an authenticated ArcadeDB with pass-through credentials (the default): the schema
is discovered with the first client session's credentials, so the schema rules work from that
session's first query; EXPLAIN is answered with ArcadeDB's plan and never executed."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from typing import Any

import neo4j
import pytest
from neo4j.exceptions import ClientError, CypherTypeError

from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from query_guard.server import cypher_guard

REVERSED = "MATCH (m:Movie {title: 'The Matrix'})-[:ACTED_IN]->(p:Person) RETURN p.name AS name"
VECTOR_RELS = "CALL db.index.vector.queryRelationships('none', 1, [1.0])"
ACTORS = ["Carrie-Anne Moss", "Emil Eifrem", "Hugo Weaving", "Keanu Reeves", "Laurence Fishburne"]


@pytest.fixture(scope="module")
def proxy(arcadedb_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyThread]:
    tmp = tmp_path_factory.mktemp("arcadedb-passthrough")
    config = parse_config(
        {
            "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp)},
            "backend": {
                "cypher": arcadedb_server.url,
                "database": arcadedb_server.database,
                "credentials": "passthrough",
            },
            "guard": {"read_only": False},
            "repair": {"enabled": False},
        }
    )
    with ProxyThread(config) as running:
        yield running


@pytest.fixture(autouse=True)
def _quiet_driver_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_the_first_sessions_credentials_discover_the_schema_before_its_first_query(
    proxy: ProxyThread, arcadedb_server: Any
) -> None:
    server = proxy.server
    assert server.schema is None and "first authenticated client session" in server.schema_source
    assert server.guard is not None and server.source is not None
    waiting = cypher_guard(server.guard, server.source.note)(REVERSED, {})
    assert "SCH.NO_SCHEMA" in waiting.codes and "DIR.REVERSED" not in waiting.codes
    with neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=arcadedb_server.auth) as drv:
        records, summary, _ = drv.execute_query(REVERSED)
    assert sorted(r["name"] for r in records) == ACTORS  # fixed by the schema rules, not repair
    codes = {n["code"] for n in summary.notifications}
    assert "DIR.REVERSED" in codes and "SCH.NO_SCHEMA" not in codes
    assert server.schema is not None and {"Movie", "Person"} <= server.schema.labels


def test_explain_is_answered_with_arcadedbs_plan_and_never_executed(
    proxy: ProxyThread, arcadedb_server: Any
) -> None:
    with neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=arcadedb_server.auth) as drv:
        records, summary, keys = drv.execute_query(
            "EXPLAIN MATCH (p:Person) WHERE p.name = $name RETURN p.born AS born"
        )  # no parameters sent
        assert records == [] and keys == [] and summary.query_type == "r"
        assert summary.plan is not None and summary.plan["operatorType"]
        _, created, _ = drv.execute_query("EXPLAIN CREATE (:QgExplainProbe {n: 1})")
        assert created.query_type == "w"
        count, _, _ = drv.execute_query("MATCH (n:QgExplainProbe) RETURN count(n) AS c")
    assert count[0]["c"] == 0


def test_explain_of_a_schema_command_is_not_sent_to_arcadedb(
    arcadedb_server: Any, tmp_path: Any
) -> None:
    """ArcadeDB runs a schema command it is asked to EXPLAIN: the proxy asks it for plans of
    reads only, so `EXPLAIN CREATE INDEX` creates nothing, with writes allowed too."""
    config = parse_config({
        "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp_path)},
        "backend": {"cypher": arcadedb_server.url, "database": arcadedb_server.database},
        "guard": {"read_only": False},
    })  # fmt: skip
    with (
        ProxyThread(config) as running,
        neo4j.GraphDatabase.driver(f"bolt://{running.address}", auth=arcadedb_server.auth) as drv,
    ):
        _, summary, _ = drv.execute_query(
            "EXPLAIN CREATE INDEX qg_explain_probe IF NOT EXISTS FOR (n:QgExplainIndexProbe) "
            "ON (n.name)"
        )
        assert summary.query_type == "s" and summary.plan is None
    with neo4j.GraphDatabase.driver(arcadedb_server.url, auth=arcadedb_server.auth) as direct:
        indexes, _, _ = direct.execute_query("SHOW INDEXES", database_=arcadedb_server.database)
    assert not [r for r in indexes if "QgExplainIndexProbe" in str(r.values())]


@pytest.mark.parametrize(
    ("query", "raised", "code"),
    [
        ("RETURN toString([1, 2]) AS s", CypherTypeError, "Statement.TypeError"),
        (VECTOR_RELS, ClientError, "Procedure.ProcedureNotFound"),  # allowed, absent
    ],
)
def test_arcadedbs_error_is_answered_with_neo4js_code_and_its_own_message(
    proxy: ProxyThread, arcadedb_server: Any, query: str, raised: type, code: str
) -> None:
    """The entries of bolt_codes.TRANSLATED against the real ArcadeDB and the real driver:
    a direct connection gets ArcadeDB's code, the proxy answers Neo4j's (what clients catch:
    neo4j-graphrag's enhanced schema catches CypherTypeError), the message is ArcadeDB's."""
    with (
        neo4j.GraphDatabase.driver(arcadedb_server.url, auth=arcadedb_server.auth) as drv,
        pytest.raises(neo4j.exceptions.Neo4jError) as direct,
    ):
        drv.execute_query(query, database_=arcadedb_server.database)
    with (
        neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=arcadedb_server.auth) as drv,
        pytest.raises(raised) as through,
    ):
        drv.execute_query(query)
    assert direct.value.code != f"Neo.ClientError.{code}"  # else the entry is not needed
    assert through.value.code == f"Neo.ClientError.{code}"
    assert through.value.message == direct.value.message


def test_a_discovery_account_discovers_at_start(
    arcadedb_server: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QG_TEST_DISCOVERY_PASSWORD", arcadedb_server.root_password)
    config = parse_config(
        {
            "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp_path)},
            "backend": {
                "cypher": arcadedb_server.url,
                "database": arcadedb_server.database,
                "discovery_user": "root",
                "discovery_password_env": "QG_TEST_DISCOVERY_PASSWORD",
            },
        }
    )
    with ProxyThread(config) as running:
        server = running.server
        assert server.schema is not None and {"Movie", "Person"} <= server.schema.labels
        assert server.schema_source == "discovered at start with the discovery account root"
        assert server.source is not None and server.source.note() is None


def test_the_bolt_client_fetches_a_plan_without_running_the_statement(
    arcadedb_server: Any,
) -> None:
    from query_guard.backend import collect
    from query_guard.backends.bolt_relay import BoltRelayBackend

    backend = BoltRelayBackend(arcadedb_server.url, arcadedb_server.auth, arcadedb_server.database)

    async def go() -> tuple[Any, Any, list[list[Any]]]:
        try:
            read = await backend.explain("MATCH (p:Person {name: $name}) RETURN p", {})
            write = await backend.explain("CREATE (:QgExplainProbe {n: 2})")
            count = "MATCH (n:QgExplainProbe) RETURN count(n)"
            return read, write, await collect(await backend.run(count, {}))
        finally:
            await backend.close()

    read, write, rows = asyncio.run(go())
    assert read["operatorType"] and write["operatorType"] and rows == [[0]]
