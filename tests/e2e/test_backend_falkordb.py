"""FalkorDBBackend against a real FalkorDB: value mapping, parameters, batches, errors,
counters, transactions, and surviving a server restart."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from datetime import date, datetime, time
from pathlib import Path
from typing import Any, TypeVar

import pytest

from query_guard.backend import BackendError, BackendUnavailable, collect
from query_guard.backends.embedded import EmbeddedFalkorDB
from query_guard.backends.falkordb import FalkorDBBackend, parse_url
from query_guard.backends.falkordb_codec import (
    backend_error,
    cypher_literal,
    parse_statistics,
    query_type,
)
from query_guard.values import Duration, GraphNode, GraphPath, GraphRelationship, Point

T = TypeVar("T")


def with_backend(url: str, body: Callable[[FalkorDBBackend], Awaitable[T]], **kw: Any) -> T:
    """Run `body(backend)` on a fresh backend in a fresh event loop."""

    async def main() -> T:
        backend = FalkorDBBackend(url, **kw)
        await backend.start()
        try:
            return await body(backend)
        finally:
            await backend.close()

    return asyncio.run(main())


async def rows_of(backend: FalkorDBBackend, query: str, **params: Any) -> list[list[Any]]:
    return await collect(await backend.run(query, params))


# ---------------------------------------------------------------------- reads


def test_nodes_relationships_and_paths_map_to_the_neutral_model(movies_url: str) -> None:
    query = (
        "MATCH p = (a:Person {name: 'Keanu Reeves'})-[r:ACTED_IN]->(m:Movie {title: 'The Matrix'}) "
        "RETURN a, r, m, p"
    )
    rows = with_backend(movies_url, lambda b: rows_of(b, query))
    assert len(rows) == 1
    a, r, m, p = rows[0]
    assert isinstance(a, GraphNode) and a.labels == ("Person",)
    assert a.properties == {"name": "Keanu Reeves", "born": 1964}
    assert isinstance(r, GraphRelationship) and r.type == "ACTED_IN"
    assert r.properties == {"roles": ["Neo"]}
    assert (r.start_id, r.end_id) == (a.id, m.id)
    assert (r.start_element_id, r.end_element_id) == (a.element_id, m.element_id)
    assert m.properties["title"] == "The Matrix" and m.labels == ("Movie",)
    assert isinstance(p, GraphPath)
    assert p.nodes == (a, m) and p.relationships == (r,)


def test_scalars_temporal_and_spatial_values(movies_url: str) -> None:
    query = (
        "RETURN 1, 2.5, 'é 日本', true, null, [1, 'x', [2]], {a: {b: 1}}, "
        "date('2024-01-02'), localdatetime('2024-01-02T03:04:05'), localtime('03:04:05'), "
        "duration('P1Y2M3DT4H5M6S'), point({latitude: 52.5, longitude: 13.4}), "
        "vecf32([1.0, 2.0]), 1.0 / 0, duration('P1M'), duration('PT90M')"
    )
    (row,) = with_backend(movies_url, lambda b: rows_of(b, query))
    assert row[:7] == [1, 2.5, "é 日本", True, None, [1, "x", [2]], {"a": {"b": 1}}]
    assert row[7] == date(2024, 1, 2)
    assert row[8] == datetime(2024, 1, 2, 3, 4, 5) and row[8].tzinfo is None
    assert row[9] == time(3, 4, 5)
    assert row[10] == Duration(months=14, days=3, seconds=4 * 3600 + 5 * 60 + 6)
    # FalkorDB stores point coordinates as 32-bit floats.
    assert row[11].srid == 4326 and row[11].z is None
    assert (row[11].x, row[11].y) == (pytest.approx(13.4, abs=1e-5), 52.5)
    assert row[12] == [1.0, 2.0]
    assert math.isinf(row[13])
    assert row[14:] == [Duration(months=1), Duration(seconds=5400)]


@pytest.mark.parametrize(
    "value",
    [
        0,
        -(2**63),
        2**63 - 1,
        -1.5,
        1e20,
        1e-7,
        True,
        False,
        None,
        "",
        "it's",
        'say "hi"',
        "back\\slash \\n not a newline",
        "line\nbreak\ttab",
        "unicode é 日本 🎬",
        "$x CYPHER y=1 RETURN",
        [],
        [1, "two", None, [3.5, False]],
        {"a": 1, "b c": ["x"], "nested": {"k": None}},
    ],
)
def test_parameters_round_trip(movies_url: str, value: Any) -> None:
    (row,) = with_backend(movies_url, lambda b: rows_of(b, "RETURN $v AS v", v=value))
    assert row == [value]
    assert type(row[0]) is type(value)


@pytest.mark.parametrize(
    "value", [date(2024, 1, 1), b"bytes", float("nan"), Point(4326, 1.0, 2.0), 2**64]
)
def test_parameters_falkordb_cannot_take_are_refused(movies_url: str, value: Any) -> None:
    with pytest.raises(BackendError) as info:
        with_backend(movies_url, lambda b: rows_of(b, "RETURN $v", v=value))
    assert info.value.code == "Neo.ClientError.Statement.TypeError"


def test_parameters_filter_the_movie_graph(movies_url: str) -> None:
    query = (
        "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) WHERE m.title IN $titles AND p.born >= $born "
        "RETURN p.name ORDER BY p.name"
    )
    rows = with_backend(
        movies_url, lambda b: rows_of(b, query, titles=["The Matrix", "Nope"], born=1961)
    )
    assert [r[0] for r in rows] == [
        "Carrie-Anne Moss", "Emil Eifrem", "Keanu Reeves", "Laurence Fishburne"
    ]  # fmt: skip


def test_results_come_in_batches(movies_url: str) -> None:
    async def body(b: FalkorDBBackend) -> None:
        stream = await b.run("UNWIND range(1, 2500) AS x RETURN x", {})
        assert stream.keys == ["x"]
        sizes = []
        while stream.has_more():
            sizes.append(len(await stream.fetch(1000)))
        assert sizes == [1000, 1000, 500]
        assert await stream.fetch(10) == []
        everything = await b.run("UNWIND range(1, 5) AS x RETURN x", {})
        assert await everything.fetch(-1) == [[1], [2], [3], [4], [5]]
        dropped = await b.run("UNWIND range(1, 5) AS x RETURN x", {})
        assert await dropped.fetch(2) == [[1], [2]]
        await dropped.discard()
        assert not dropped.has_more() and await dropped.fetch(5) == []
        assert dropped.summary().query_type == "r"

    with_backend(movies_url, body)


def test_database_argument_selects_another_graph(movies_url: str, fresh_graph: tuple) -> None:
    name, _ = fresh_graph

    async def body(b: FalkorDBBackend) -> tuple[list, list]:
        await collect(await b.run("CREATE (:Only {here: true})", {}, database=name))
        mine = await collect(await b.run("MATCH (n) RETURN count(n)", {}, database=name))
        movies = await collect(await b.run("MATCH (n:Only) RETURN count(n)", {}))
        return mine, movies

    assert with_backend(movies_url, body) == ([[1]], [[0]])


def test_concurrent_queries_share_a_small_pool(movies_url: str) -> None:
    async def body(b: FalkorDBBackend) -> list[list[list[Any]]]:
        queries = [rows_of(b, "RETURN $i * 2", i=i) for i in range(40)]
        return await asyncio.gather(*queries)

    results = with_backend(movies_url, body, max_connections=3)
    assert results == [[[i * 2]] for i in range(40)]


# ---------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("MATCH (n) RETRN n", "Neo.ClientError.Statement.SyntaxError"),
        ("RETURN 1; RETURN 2", "Neo.ClientError.Statement.SyntaxError"),
        ("MATCH (n) RETURN m", "Neo.ClientError.Statement.SemanticError"),
        ("RETURN nosuchfunction(1)", "Neo.ClientError.Statement.SemanticError"),
        ("CALL no.such.procedure()", "Neo.ClientError.Procedure.ProcedureNotFound"),
        ("RETURN $missing", "Neo.ClientError.Statement.ParameterMissing"),
        ("UNWIND [1, 0] AS x RETURN 1 / x", "Neo.ClientError.Statement.ArithmeticError"),
    ],
)
def test_errors_carry_neo4j_codes(movies_url: str, query: str, code: str) -> None:
    with pytest.raises(BackendError) as info:
        with_backend(movies_url, lambda b: rows_of(b, query))
    assert info.value.code == code
    assert not isinstance(info.value, BackendUnavailable)


def test_syntax_errors_are_worded_like_neo4j(movies_url: str) -> None:
    with pytest.raises(BackendError) as info:
        with_backend(movies_url, lambda b: rows_of(b, "MATCH (n) RETRN n"))
    lines = info.value.message.splitlines()
    assert lines[0].startswith("Invalid input 'R'") and "(line 1, column 14" in lines[0]
    assert lines[1] == '"MATCH (n) RETRN n"'
    assert lines[2].index("^") == len('"MATCH (n) RET')  # where RETRN stops matching


def test_query_timeout_is_reported(movies_url: str) -> None:
    # (FalkorDB checks its timeout between records, so an aggregate over one huge UNWIND
    # would overrun it by seconds; this query yields records all the time.)
    query = "UNWIND range(1, 3000) AS x UNWIND range(1, 3000) AS y RETURN x, y"
    with pytest.raises(BackendError) as info:
        with_backend(movies_url, lambda b: rows_of(b, query), query_timeout_ms=20)
    assert info.value.code == "Neo.ClientError.Transaction.TransactionTimedOut"


# ---------------------------------------------------------------------- writes, schema ids


def test_write_counters_and_query_type(fresh_graph: tuple) -> None:
    _, url = fresh_graph

    async def body(b: FalkorDBBackend) -> None:
        created = await b.run("CREATE (a:A {x: 1})-[:R {w: 2}]->(b:B) RETURN a, b", {})
        rows = await collect(created)
        # Labels, type and keys created by this very query decode to their names.
        assert [n.labels for n in rows[0]] == [("A",), ("B",)]
        assert rows[0][0].properties == {"x": 1}
        summary = created.summary()
        assert summary.query_type == "rw"
        assert summary.counters == {
            "labels-added": 2, "nodes-created": 2, "relationships-created": 1,
            "properties-set": 2,
        }  # fmt: skip
        deleted = await b.run("MATCH (n:A) DETACH DELETE n", {})
        await collect(deleted)
        assert deleted.summary().counters == {"nodes-deleted": 1, "relationships-deleted": 1}
        assert deleted.summary().query_type == "w"
        noop = await b.run("MATCH (n:Nothing) SET n.x = 1", {})
        await collect(noop)
        assert noop.summary().counters == {} and noop.summary().query_type == "w"
        index = await b.run("CREATE INDEX FOR (b:B) ON (b.x)", {})
        assert index.summary().query_type == "s"

    with_backend(url, body)


def test_graph_recreated_with_other_ids_decodes_the_new_names(fresh_graph: tuple) -> None:
    name, url = fresh_graph

    async def body(b: FalkorDBBackend) -> None:
        await collect(await b.run("CREATE (:First {p: 1}), (:Second {q: 2})", {}))
        assert await rows_of(b, "MATCH (n:First) RETURN labels(n), n") != []
        await b.delete_graph(name)
        # Same name, ids assigned in the other order: a stale cache would swap the names.
        other = FalkorDBBackend(url)
        await collect(await other.run("CREATE (:Second {q: 2}), (:First {p: 1})", {}))
        await other.close()
        (row,) = await rows_of(b, "MATCH (n:First) RETURN n")
        assert row[0].labels == ("First",) and row[0].properties == {"p": 1}

    with_backend(url, body)


def test_rows_are_decoded_per_batch_with_ids_the_query_created(fresh_graph: tuple) -> None:
    _, url = fresh_graph

    async def body(b: FalkorDBBackend) -> None:
        query = "UNWIND range(1, 3) AS i CREATE (n:Fresh {k: i})-[:NEW {w: i}]->(:Other) RETURN n"
        stream = await b.run(query, {})
        first = await stream.fetch(1)  # decoding needs the label / key ids made just now
        rest = await stream.fetch(5)
        assert [n.labels for [n] in first + rest] == [("Fresh",)] * 3
        assert [n.properties for [n] in first + rest] == [{"k": 1}, {"k": 2}, {"k": 3}]
        assert not stream.has_more()
        (row,) = await rows_of(b, "MATCH ()-[r:NEW {w: 2}]->(o:Other) RETURN r.w, labels(o)")
        assert row == [2, ["Other"]]

    with_backend(url, body)


def test_odd_parameter_names_are_refused(movies_url: str) -> None:
    for params in ({"a b": 1}, {1: 2}, {"x=1 RETURN 2 //": 1}):
        with pytest.raises(BackendError) as info:
            with_backend(movies_url, lambda b, p=params: collect_run(b, "RETURN 1", p))
        assert info.value.code == "Neo.ClientError.Statement.TypeError"


async def collect_run(b: FalkorDBBackend, query: str, params: dict[Any, Any]) -> list[list[Any]]:
    return await collect(await b.run(query, params))


def test_read_only_backend_lets_falkordb_refuse_writes(fresh_graph: tuple) -> None:
    _, url = fresh_graph

    async def body(b: FalkorDBBackend) -> None:
        writer = FalkorDBBackend(url)
        await collect(await writer.run("CREATE (:Seed)", {}))
        await writer.close()
        assert await rows_of(b, "MATCH (n) RETURN count(n)") == [[1]]
        with pytest.raises(BackendError) as info:
            await b.run("CREATE (:Sneaky)", {})
        assert info.value.code == "Neo.ClientError.Statement.AccessMode"
        tx = await b.begin()
        with pytest.raises(BackendError):
            await tx.run("MATCH (n) DETACH DELETE n", {})
        await tx.rollback()
        assert await rows_of(b, "MATCH (n) RETURN count(n)") == [[1]]

    with_backend(url, body, read_only=True)


# ---------------------------------------------------------------------- transactions


def test_read_only_transaction_reads_and_rolls_back(movies_url: str) -> None:
    async def body(b: FalkorDBBackend) -> None:
        tx = await b.begin(metadata={"question": "how many movies?"})
        assert await collect(await tx.run("MATCH (m:Movie) RETURN count(m)", {})) == [[38]]
        await tx.rollback()
        tx = await b.begin()
        await collect(await tx.run("RETURN 1", {}))
        assert await tx.commit() is None
        with pytest.raises(BackendError):
            await tx.run("RETURN 1", {})

    with_backend(movies_url, body)


def test_writes_in_a_transaction_apply_at_once_and_cannot_be_rolled_back(
    fresh_graph: tuple,
) -> None:
    _, url = fresh_graph

    async def body(b: FalkorDBBackend) -> None:
        tx = await b.begin()
        await collect(await tx.run("MATCH (n:Nothing) DELETE n", {}))
        await collect(await tx.run("CREATE (:T {v: 1})", {}))
        # Read-your-writes inside the transaction, and visible outside it already.
        assert await collect(await tx.run("MATCH (t:T) RETURN t.v", {})) == [[1]]
        assert await rows_of(b, "MATCH (t:T) RETURN count(t)") == [[1]]
        with pytest.raises(BackendError) as info:
            await tx.rollback()
        assert info.value.code == "Neo.DatabaseError.Transaction.TransactionRollbackFailed"
        assert "1 statement(s)" in info.value.message
        assert await rows_of(b, "MATCH (t:T) RETURN count(t)") == [[1]]

    with_backend(url, body)


# ---------------------------------------------------------------------- availability


def test_unreachable_server_is_unavailable() -> None:
    from query_guard.backends.embedded import free_port

    url = f"falkordb://127.0.0.1:{free_port()}/g"
    with pytest.raises(BackendUnavailable) as info:
        with_backend(url, lambda b: rows_of(b, "RETURN 1"))
    assert info.value.code == "Neo.TransientError.General.DatabaseUnavailable"


def test_backend_recovers_when_the_server_comes_back(tmp_path: Path) -> None:
    server = EmbeddedFalkorDB(tmp_path, demo_graphs={}, graph="g").start()
    try:

        async def body(b: FalkorDBBackend) -> None:
            await collect(await b.run("CREATE (:Survivor)", {}))
            await asyncio.sleep(1.1)  # the AOF is fsynced every second
            port = server.port
            server.kill()
            for _ in range(2):  # stays unavailable, no hang, while the server is down
                with pytest.raises(BackendUnavailable):
                    await b.run("MATCH (n) RETURN count(n)", {})
            await asyncio.to_thread(server.start)
            assert server.port == port
            assert await rows_of(b, "MATCH (n:Survivor) RETURN count(n)") == [[1]]

        with_backend(server.url, body, max_connections=2)
    finally:
        server.stop()


# ---------------------------------------------------------------------- pure helpers


def test_cypher_literals() -> None:
    assert cypher_literal('a"b\\c') == '"a\\"b\\\\c"'
    assert cypher_literal({"k": [1, True, None]}) == "{`k`:[1,true,null]}"
    with pytest.raises(BackendError):
        cypher_literal({"bad`key": 1})


def test_statistics_query_type_and_urls() -> None:
    stats = [b"Properties set: 2", b"Properties removed: 1", b"Cached execution: 1"]
    assert parse_statistics(stats) == {"properties-set": 3}
    assert query_type("MATCH (n) WHERE n.name = 'SET' RETURN n", {}, True) == "r"
    assert query_type("MATCH (n) RETURN n.set", {}, True) == "r"
    assert query_type("MATCH (n) SET n.x = 1", {}, False) == "w"
    assert parse_url("falkordb://u:p%40ss@db:7000/my%20graph") == (
        "db",
        7000,
        "my graph",
        "u",
        "p@ss",
    )
    assert parse_url("falkordb://localhost")[1:3] == (6379, "movies")
    assert backend_error("Unknown function 'x'").code.endswith("SemanticError")
