"""End to end with a real Bolt upstream: neo4j driver (sync and async) → query-guard
(`BoltRelayBackend`) → ArcadeDB from the `arcadedb-jvm` wheel, started by these tests with the
movie graph. Reads through the proxy must equal the same reads straight to ArcadeDB's Bolt — values,
element ids and graph types included; pass-through credentials reach ArcadeDB; a 100,000-row
result streams through the proxy (ArcadeDB has a cursor, so the proxy holds one batch).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
from neo4j import exceptions as nex
from neo4j import graph as ng

from query_guard.backends.arcadedb import ArcadeDBServer, unavailable_reason
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from tests.e2e.test_e2e_falkordb import READ_QUERIES, canon_rows, driver_rows, stream_100k_rows
from tests.e2e.test_server import ServeProcess

_REASON = unavailable_reason()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=f"ArcadeDB cannot run here: {_REASON}")
PASSWORD_ENV = "QG_TEST_ARCADEDB_PASSWORD"
CLIENT_AUTH = ("anyone", "anything")  # the proxy holds the upstream credentials (configured)


@pytest.fixture(scope="module")
def arcadedb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArcadeDBServer]:
    server = ArcadeDBServer(tmp_path_factory.mktemp("arcadedb"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


def bolt_backend(arcadedb: ArcadeDBServer, credentials: str = "configured") -> dict[str, str]:
    table = {"cypher": arcadedb.url, "database": arcadedb.database, "credentials": credentials}
    if credentials == "configured":
        table |= {"user": "root", "password_env": PASSWORD_ENV}
    return table


@pytest.fixture(scope="module")
def proxy(
    arcadedb: ArcadeDBServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ProxyThread]:
    os.environ[PASSWORD_ENV] = arcadedb.root_password
    tmp = tmp_path_factory.mktemp("e2e-arcadedb")
    config = parse_config(
        {
            "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp)},
            "backend": bolt_backend(arcadedb),
            "audit": {"path": str(tmp / "audit.jsonl")},
        }
    )
    try:
        with ProxyThread(config) as running:
            yield running
    finally:
        os.environ.pop(PASSWORD_ENV, None)


@pytest.fixture(scope="module")
def driver(proxy: ProxyThread) -> Iterator[neo4j.Driver]:
    with neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=CLIENT_AUTH) as drv:
        yield drv


@pytest.fixture(scope="module")
def direct(arcadedb: ArcadeDBServer) -> dict[str, list[Any]]:
    """Every read query's rows straight from ArcadeDB's Bolt, in comparable form."""
    out = {}
    with neo4j.GraphDatabase.driver(arcadedb.url, auth=arcadedb.auth) as drv:
        for query, params in READ_QUERIES:
            with drv.session(database=arcadedb.database) as session:
                rows = driver_rows(list(session.run(query, params)))
            out[query] = canon_rows(query, rows, element_ids=True)
    return out


def test_the_proxy_discovered_arcadedbs_schema(proxy: ProxyThread) -> None:
    schema = proxy.server.schema
    assert schema is not None
    assert {"Movie", "Person"} <= set(schema.to_dict()["nodes"])


@pytest.mark.parametrize(("query", "params"), READ_QUERIES)
def test_sync_read_matches_direct(
    driver: neo4j.Driver, direct: dict[str, list[Any]], query: str, params: dict[str, Any]
) -> None:
    with driver.session() as session:
        records = list(session.run(query, params))
    assert direct[query], f"the query should return rows: {query}"
    assert canon_rows(query, driver_rows(records), element_ids=True) == direct[query]


def test_async_reads_match_direct(proxy: ProxyThread, direct: dict[str, list[Any]]) -> None:
    async def run() -> dict[str, list[Any]]:
        out = {}
        url = f"neo4j://{proxy.address}"
        async with neo4j.AsyncGraphDatabase.driver(url, auth=CLIENT_AUTH) as drv:
            for query, params in READ_QUERIES:
                async with drv.session() as session:
                    result = await session.run(query, params)
                    rows = driver_rows([r async for r in result])
                    out[query] = canon_rows(query, rows, element_ids=True)
        return out

    assert asyncio.run(run()) == direct


def test_graph_values_keep_arcadedbs_element_ids(
    driver: neo4j.Driver, arcadedb: ArcadeDBServer
) -> None:
    query = (
        "MATCH p = (a:Person {name: 'Keanu Reeves'})-[r:ACTED_IN]->(m:Movie "
        "{title: 'The Matrix'}) RETURN a, r, m, p"
    )
    with driver.session() as session:
        through = session.run(query).single(strict=True)
    with neo4j.GraphDatabase.driver(arcadedb.url, auth=arcadedb.auth) as drv:
        records, _, _ = drv.execute_query(query, database_=arcadedb.database)
    a, r, m, p = through["a"], through["r"], through["m"], through["p"]
    assert isinstance(a, ng.Node) and isinstance(r, ng.Relationship) and isinstance(p, ng.Path)
    assert a.element_id == records[0]["a"].element_id and a.element_id.startswith("#")
    assert r.element_id == records[0]["r"].element_id and r["roles"] == ["Neo"]
    assert r.start_node is not None and r.start_node.element_id == a.element_id
    assert [n.element_id for n in p.nodes] == [a.element_id, m.element_id]


def test_guard_refuses_and_rewrites_in_front_of_arcadedb(driver: neo4j.Driver) -> None:
    with driver.session() as session:
        for query, code in [
            ("CREATE (:Movie {title: 'Leak'})", "SEC.WRITE"),
            ("CALL dbms.security.createUser('eve', 'pw', false)", "SEC.PROCEDURE"),
            ("MATCH (m:Movie) RETURN m; MATCH (m) DETACH DELETE m", "SEC.MULTI_STATEMENT"),
        ]:
            with pytest.raises(nex.Neo4jError) as info:
                session.run(query).consume()
            assert info.value.code == "Neo.ClientError.Security.Forbidden"
            assert code in (info.value.message or "")
        result = session.run(
            "```\nMATCH (m:Movie)-[:DIRECTED]->(p:Person) RETURN count(*) AS n\n```"
        )
        assert result.single(strict=True)["n"] == 44
        described = " ".join(g.status_description for g in result.consume().gql_status_objects)
    assert "SYN.FENCE" in described and "DIR.REVERSED" in described
    with driver.session() as session:
        assert session.run("MATCH (m:Movie {title: 'Leak'}) RETURN m").single() is None


def test_transactions_and_bookmarks_through_to_arcadedb(driver: neo4j.Driver) -> None:
    with driver.session() as session:
        with session.begin_transaction() as tx:
            n = tx.run("MATCH (m:Movie) RETURN count(m) AS n").single(strict=True)["n"]
            titles = tx.run("MATCH (m:Movie) RETURN m.title ORDER BY m.title LIMIT 2").value()
            tx.commit()
        explicit = session.last_bookmarks()
        tx = session.begin_transaction()
        tx.run("MATCH (p:Person) RETURN p LIMIT 1").consume()
        tx.rollback()
        rels = session.execute_read(
            lambda t: t.run("MATCH ()-[r]->() RETURN count(r) AS n").single(strict=True)["n"]
        )
    assert n == 38 and len(titles) == 2 and rels == 253
    # ArcadeDB's commit bookmark reaches the client (it gives none for auto-commit reads)
    assert explicit.raw_values
    assert all(b.startswith("arcade:") for b in explicit.raw_values)
    with driver.session(bookmarks=explicit) as session:
        assert session.run("RETURN 1 AS one").single(strict=True)["one"] == 1


def test_neo4j_scheme_routes_through_the_proxy(proxy: ProxyThread) -> None:
    with neo4j.GraphDatabase.driver(f"neo4j://{proxy.address}", auth=CLIENT_AUTH) as drv:
        records, summary, _ = drv.execute_query(
            "MATCH (p:Person) RETURN count(p) AS n", routing_=neo4j.RoutingControl.READ
        )
    assert records[0]["n"] == 133
    host, port = proxy.address.rsplit(":", 1)
    assert summary.server.address == (host, int(port))


def test_passthrough_credentials_reach_arcadedb(arcadedb: ArcadeDBServer, tmp_path: Path) -> None:
    config = parse_config(
        {
            "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp_path)},
            "backend": bolt_backend(arcadedb, "passthrough"),
            "audit": {"path": str(tmp_path / "audit.jsonl")},
        }
    )
    with ProxyThread(config) as running:
        url = f"bolt://{running.address}"
        with neo4j.GraphDatabase.driver(url, auth=arcadedb.auth) as drv:
            records, _, _ = drv.execute_query("MATCH (m:Movie) RETURN count(m) AS n")
            assert records[0]["n"] == 38
        with (
            neo4j.GraphDatabase.driver(url, auth=("root", "wrong-password")) as drv,
            drv.session() as session,
            pytest.raises(nex.Neo4jError) as info,
        ):
            session.run("MATCH (m:Movie) RETURN count(m) AS n").consume()
    assert info.value.code == "Neo.ClientError.Security.Unauthorized"


def test_100k_rows_stream_with_bounded_proxy_memory(
    arcadedb: ArcadeDBServer, tmp_path: Path
) -> None:
    """ArcadeDB streams over Bolt, and the proxy pulls 1,000-record batches from it as the
    client pulls from the proxy: the proxy's memory does not grow with the result."""
    serve = ServeProcess(
        tmp_path, backend=bolt_backend(arcadedb), env={PASSWORD_ENV: arcadedb.root_password},
        default_limit=0, max_limit=0,
    )  # fmt: skip
    growth_mib = stream_100k_rows(serve, CLIENT_AUTH)
    assert growth_mib < 50, f"proxy peak RSS grew {growth_mib:.0f} MiB"
