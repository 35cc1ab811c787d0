"""End to end through the real path: neo4j driver (sync and async) → query-guard (ProxyServer
on port 0, tmp data_dir) → the embedded FalkorDB it starts itself.

Reads must return exactly what the same query returns straight from FalkorDB (over RESP with
`FalkorDBBackend`, the comparison normalised into the neutral result model); writes, procedures,
multi-statements are refused with Neo4j status codes; rewrites surface as notifications; the
proxy survives its database dying and coming back; a 100,000-row result streams with bounded
memory.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
from neo4j import exceptions as nex
from neo4j import graph as ng

from query_guard.backend import collect
from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from query_guard.values import GraphNode, GraphPath, GraphRelationship
from tests.driver_values import to_neutral
from tests.e2e.test_server import ServeProcess

AUTH = ("neo4j", "anything")  # the embedded setup does not check credentials

# ≥ 15 reads over the movie graph: nodes, relationships, paths, aggregates, lists, maps,
# parameters. Each is schema-conformant, so the guard at most appends a LIMIT.
READ_QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("MATCH (m:Movie) RETURN m", {}),
    ("MATCH (p:Person)-[r:ACTED_IN]->(m:Movie) RETURN p.name AS name, r, m.title AS title", {}),
    ("MATCH p = (a:Person)-[:DIRECTED]->(m:Movie) RETURN p", {}),
    ("MATCH (m:Movie) RETURN count(m) AS movies", {}),
    ("MATCH (p:Person)-[:ACTED_IN]->(m:Movie) RETURN m.title AS title, count(p) AS cast", {}),
    ("MATCH (m:Movie {title: $title}) RETURN m.title AS t, m.released AS r, m.tagline AS tag",
     {"title": "The Matrix"}),
    ("MATCH (p:Person) WHERE p.born >= $lo AND p.born < $hi "
     "RETURN p.name AS name, p.born AS born ORDER BY born, name", {"lo": 1960, "hi": 1970}),
    ("MATCH (p:Person)-[r:REVIEWED]->(m:Movie) "
     "RETURN avg(r.rating) AS mean, min(r.rating) AS lo, max(r.rating) AS hi, count(*) AS n", {}),
    ("MATCH (a:Person)-[:FOLLOWS]->(b:Person) RETURN a.name AS follower, b.name AS followed", {}),
    ("MATCH (m:Movie) WHERE m.released > 2000 RETURN m.released AS year, count(*) AS n "
     "ORDER BY year", {}),
    ("RETURN [1, 2.5, 'x', true, null] AS list, {a: 1, b: [1, 2], c: {d: 'e'}} AS map", {}),
    ("UNWIND range(1, 10) AS i RETURN i, i * i AS sq ORDER BY i", {}),
    ("MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie)<-[:DIRECTED]-(d:Person) "
     "RETURN DISTINCT d.name AS director ORDER BY director", {}),
    ("MATCH p = (a:Person {name: 'Keanu Reeves'})-[:ACTED_IN*1..2]-(x) "
     "RETURN length(p) AS len, count(*) AS n ORDER BY len", {}),
    ("MATCH (p:Person)-[r:ACTED_IN]->(m:Movie {title: 'The Matrix'}) "
     "RETURN p, r.roles AS roles ORDER BY p.name", {}),
    ("MATCH (m:Movie) OPTIONAL MATCH (m)<-[:PRODUCED]-(p:Person) "
     "RETURN m.title AS title, count(p) AS producers ORDER BY title", {}),
    ("MATCH (p:Person) WHERE p.name STARTS WITH $prefix "
     "RETURN p.name AS name, size(p.name) AS len ORDER BY name", {"prefix": "Tom"}),
    ("MATCH (p:Person) WITH p.born AS born, count(*) AS n WHERE n > 3 "
     "RETURN born, n ORDER BY born", {}),
    ("MATCH (a:Person)-[r]->(m:Movie {title: 'Top Gun'}) "
     "RETURN type(r) AS t, labels(a) AS l, count(*) AS n ORDER BY t", {}),
    ("MATCH (p:Person)-[:DIRECTED]->(m:Movie) WITH p, collect(m.title) AS films "
     "WHERE size(films) > 2 RETURN p.name AS name, size(films) AS n ORDER BY name", {}),
    ("MATCH (m:Movie) RETURN m.title AS title, [w IN split(m.title, ' ') | toUpper(w)] AS words "
     "ORDER BY title", {}),
    ("MATCH (a:Person)-[r:ACTED_IN]->(m:Movie)<-[r2:ACTED_IN]-(b:Person {name: $name}) "
     "RETURN a.name AS co, count(m) AS films ORDER BY films DESC, co", {"name": "Keanu Reeves"}),
]  # fmt: skip


def canon(value: Any, element_ids: bool = False) -> Any:
    """A hashable, comparable form of a neutral-model value (graph entities by id, labels,
    properties; element ids too when the backend's are stable across protocols)."""
    if isinstance(value, GraphNode):
        eid = value.element_id if element_ids else None
        return ("N", value.id, eid, tuple(sorted(value.labels)), canon(value.properties))
    if isinstance(value, GraphRelationship):
        eid = value.element_id if element_ids else None
        props = canon(value.properties)
        return ("R", value.id, eid, value.type, value.start_id, value.end_id, props)
    if isinstance(value, GraphPath):
        nodes = tuple(canon(n, element_ids) for n in value.nodes)
        return ("P", nodes, tuple(canon(r, element_ids) for r in value.relationships))
    if isinstance(value, dict):
        return ("M", tuple(sorted((k, canon(v, element_ids)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return ("L", tuple(canon(v, element_ids) for v in value))
    return (type(value).__name__, value)


def canon_rows(query: str, rows: list[list[Any]], element_ids: bool = False) -> list[Any]:
    """Rows in comparable form: in their order when the query orders them, else sorted."""
    out = [tuple(canon(v, element_ids) for v in row) for row in rows]
    return out if "ORDER BY" in query else sorted(out, key=repr)


def driver_rows(records: list[neo4j.Record]) -> list[list[Any]]:
    return [[to_neutral(v) for v in record.values()] for record in records]


def proxy_config(data_dir: Path, **guard: Any) -> Any:
    return parse_config(
        {
            "server": {"bolt": "127.0.0.1:0", "data_dir": str(data_dir)},
            "audit": {"path": str(data_dir / "audit.jsonl")},
            "guard": guard,
        }
    )


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyThread]:
    with ProxyThread(proxy_config(tmp_path_factory.mktemp("e2e-falkordb"))) as running:
        yield running


@pytest.fixture(scope="module")
def driver(proxy: ProxyThread) -> Iterator[neo4j.Driver]:
    with neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=AUTH) as drv:
        yield drv


@pytest.fixture(scope="module")
def direct(proxy: ProxyThread) -> dict[str, list[Any]]:
    """Every read query's rows straight from FalkorDB (RESP), in comparable form."""

    async def run_all() -> dict[str, list[Any]]:
        backend = FalkorDBBackend(proxy.server.embedded.url)
        await backend.start()
        try:
            return {
                q: canon_rows(q, await collect(await backend.run(q, params)))
                for q, params in READ_QUERIES
            }
        finally:
            await backend.close()

    return proxy.call(run_all())


# ---------------------------------------------------------------------- reads


@pytest.mark.parametrize(("query", "params"), READ_QUERIES)
def test_sync_read_matches_direct(
    driver: neo4j.Driver, direct: dict[str, list[Any]], query: str, params: dict[str, Any]
) -> None:
    with driver.session() as session:
        records = list(session.run(query, params))
    assert direct[query], f"the query should return rows: {query}"
    assert canon_rows(query, driver_rows(records)) == direct[query]


def test_async_reads_match_direct(proxy: ProxyThread, direct: dict[str, list[Any]]) -> None:
    async def run() -> dict[str, list[Any]]:
        out = {}
        url = f"neo4j://{proxy.address}"
        async with neo4j.AsyncGraphDatabase.driver(url, auth=AUTH) as drv:
            for query, params in READ_QUERIES:
                async with drv.session() as session:
                    result = await session.run(query, params)
                    out[query] = canon_rows(query, driver_rows([r async for r in result]))
        return out

    assert asyncio.run(run()) == direct


def test_graph_values_are_the_drivers_own_types(driver: neo4j.Driver) -> None:
    with driver.session() as session:
        record = session.run(
            "MATCH p = (a:Person {name: 'Keanu Reeves'})-[r:ACTED_IN]->(m:Movie "
            "{title: 'The Matrix'}) RETURN a, r, m, p"
        ).single(strict=True)
    a, r, m, p = record["a"], record["r"], record["m"], record["p"]
    assert isinstance(a, ng.Node) and a.labels == {"Person"} and a["born"] == 1964
    assert isinstance(r, ng.Relationship) and r.type == "ACTED_IN" and r["roles"] == ["Neo"]
    assert r.start_node is not None and r.start_node.element_id == a.element_id
    assert r.end_node is not None and r.end_node.element_id == m.element_id
    assert isinstance(p, ng.Path) and [n.element_id for n in p.nodes] == [
        a.element_id, m.element_id,
    ]  # fmt: skip
    assert p.relationships[0].element_id == r.element_id


# ---------------------------------------------------------------------- the guard on the wire


def _refused(driver: neo4j.Driver, query: str) -> nex.Neo4jError:
    with driver.session() as session, pytest.raises(nex.Neo4jError) as info:
        session.run(query).consume()
    return info.value


def test_write_is_forbidden_and_never_reaches_the_database(driver: neo4j.Driver) -> None:
    err = _refused(driver, "CREATE (:Movie {title: 'Leak'})")
    assert err.code == "Neo.ClientError.Security.Forbidden"
    assert "SEC.WRITE" in (err.message or "")
    with driver.session() as session:
        leaked = session.run("MATCH (m:Movie {title: 'Leak'}) RETURN count(m) AS n").single()
    assert leaked is not None and leaked["n"] == 0


def test_dbms_procedure_and_multi_statement_are_refused(driver: neo4j.Driver) -> None:
    err = _refused(driver, "CALL dbms.security.createUser('eve', 'pw', false)")
    assert err.code == "Neo.ClientError.Security.Forbidden"
    assert "SEC.PROCEDURE" in (err.message or "")
    err = _refused(driver, "MATCH (m:Movie) RETURN m.title; MATCH (p:Person) DETACH DELETE p")
    assert err.code == "Neo.ClientError.Security.Forbidden"
    assert "SEC.MULTI_STATEMENT" in (err.message or "")


def _codes(summary: neo4j.ResultSummary) -> set[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        legacy = {n["code"] for n in summary.notifications or []}
    described = {g.status_description for g in summary.gql_status_objects}
    return legacy | {c for c in _ALL_CODES if any(c in d for d in described)}


_ALL_CODES = ("SYN.FENCE", "DIR.REVERSED", "LIM.INJECTED", "LIM.CAPPED")


def test_fenced_query_is_stripped_and_runs(driver: neo4j.Driver) -> None:
    with driver.session() as session:
        result = session.run("```cypher\nMATCH (m:Movie) RETURN count(m) AS n\n```")
        record = result.single(strict=True)
        summary = result.consume()
    assert record["n"] == 38
    assert "SYN.FENCE" in _codes(summary)


def test_rewrite_is_reported_in_notifications_and_gql_statuses(driver: neo4j.Driver) -> None:
    with driver.session() as session:
        result = session.run("MATCH (m:Movie)-[:DIRECTED]->(p:Person) RETURN count(*) AS n")
        record = result.single(strict=True)
        summary = result.consume()
    assert record["n"] == 44  # the arrow was flipped to the stored direction
    assert "DIR.REVERSED" in _codes(summary)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert any(n["code"] == "DIR.REVERSED" for n in summary.notifications or [])
    assert any("DIR.REVERSED" in g.status_description for g in summary.gql_status_objects)


def test_neo4j_scheme_routes_through_the_proxy(proxy: ProxyThread) -> None:
    with neo4j.GraphDatabase.driver(f"neo4j://{proxy.address}", auth=AUTH) as drv:
        drv.verify_connectivity()
        records, summary, _ = drv.execute_query(
            "MATCH (m:Movie) RETURN count(m) AS n", routing_=neo4j.RoutingControl.READ
        )
    assert records[0]["n"] == 38
    host, port = proxy.address.rsplit(":", 1)
    assert summary.server.address == (host, int(port))  # the routing table named the proxy


def test_explicit_and_managed_transactions_and_bookmarks(driver: neo4j.Driver) -> None:
    with driver.session() as session:
        with session.begin_transaction() as tx:
            n = tx.run("MATCH (m:Movie) RETURN count(m) AS n").single(strict=True)["n"]
            names = tx.run("MATCH (p:Person) RETURN p.name AS name LIMIT 3").value()
            tx.commit()
        assert n == 38 and len(names) == 3
        tx = session.begin_transaction()
        tx.run("MATCH (p:Person) RETURN p LIMIT 1").consume()
        tx.rollback()
        count = session.execute_read(
            lambda t: t.run("MATCH ()-[r]->() RETURN count(r) AS n").single(strict=True)["n"]
        )
        assert count == 253
        bookmarks = session.last_bookmarks()  # FalkorDB has none to give; must not break
    with driver.session(bookmarks=bookmarks) as session:
        assert session.run("RETURN 1 AS one").single(strict=True)["one"] == 1


# ---------------------------------------------------------------------- resilience, memory


def test_backend_killed_and_restarted(proxy: ProxyThread, driver: neo4j.Driver) -> None:
    embedded = proxy.server.embedded
    embedded.kill()
    with driver.session() as session, pytest.raises(nex.Neo4jError) as info:
        session.run("MATCH (m:Movie) RETURN count(m) AS n").consume()
    assert info.value.code == "Neo.TransientError.General.DatabaseUnavailable"
    proxy.call(embedded.astart())
    with driver.session() as session:
        assert session.run("MATCH (m:Movie) RETURN count(m) AS n").single(strict=True)["n"] == 38


def test_100k_rows_stream_with_bounded_memory(tmp_path: Path) -> None:
    """The proxy's own memory (a `query-guard serve` process) while a client pulls 100,000
    rows. FalkorDB answers over RESP with the whole result at once, so the FalkorDB backend
    holds one result's raw reply (rows are decoded per pulled batch). The bound is that one
    buffered result; the Bolt
    side adds only 1,000-record batches (the ArcadeDB test shows true streaming)."""
    serve = ServeProcess(tmp_path, default_limit=0, max_limit=0)
    growth_mib = stream_100k_rows(serve, AUTH)
    assert growth_mib < 96, f"proxy peak RSS grew {growth_mib:.0f} MiB"


def stream_100k_rows(serve: ServeProcess, auth: tuple[str, str]) -> float:
    """Stream `UNWIND range(1, 100000)` through a running `serve` process, check every row
    arrived, stop the process; the proxy's peak RSS growth during the stream, in MiB."""
    try:
        with neo4j.GraphDatabase.driver(f"bolt://{serve.address}", auth=auth) as drv:
            with drv.session() as session:
                session.run("UNWIND range(1, 1000) AS i RETURN i").consume()  # warm up
            before = serve.status("VmRSS")
            total = rows = 0
            with drv.session() as session:
                for record in session.run("UNWIND range(1, 100000) AS i RETURN i"):
                    total += record[0]
                    rows += 1
            growth_mib = (serve.status("VmHWM") - before) / 1024
    finally:
        assert serve.stop() == 0
    assert rows == 100_000 and total == 100_000 * 100_001 // 2
    return growth_mib
