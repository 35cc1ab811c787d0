"""The relay backend (`BoltRelayBackend`): our own Bolt client in front of a real ArcadeDB,
behind a `BoltFrontend`, driven by the real neo4j driver. Records must pass through undecoded
when both sides speak Bolt 5 (and be decoded for a Bolt 4.4 client), reads must equal the same
reads straight to ArcadeDB, server errors keep their codes, transactions work, a restarted
upstream is served again, and pass-through credentials are checked at LOGON.
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

from query_guard.backend import BackendUnavailable, collect
from query_guard.backends.arcadedb import ArcadeDBServer
from query_guard.backends.bolt_relay import BoltRelayBackend
from query_guard.backends.bolt_results import decode_record
from query_guard.backends.bolt_upstream import SILENT, UpstreamConnection
from query_guard.backends.embedded import free_port
from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.repair.repairer import build_repairer
from query_guard.wire import bolt_messages as m
from query_guard.wire.bolt_handshake import SUPPORTED_VERSIONS, client_choice, client_request
from query_guard.wire.packstream import Structure, packb
from tests.background_loop import BoltProxy
from tests.e2e.test_e2e_falkordb import READ_QUERIES, canon_rows, driver_rows

ANYONE = ("anyone", "anything")  # the relay holds the upstream credentials (configured)


def relay_server(
    db: ArcadeDBServer,
    *,
    repair: bool = False,
    passthrough: bool = False,
    versions: tuple[tuple[int, int], ...] = SUPPORTED_VERSIONS,
    fetch_size: int = 1000,
) -> BoltProxy:
    """A BoltFrontend (guard, optional repair loop) over a BoltRelayBackend, on its own loop."""
    config = parse_config({"repair": {"enabled": repair}})
    guard = build_guard(config, None, entry_points=False)
    backend = BoltRelayBackend(
        db.url, None if passthrough else db.auth, db.database, read_only=True,
        passthrough=passthrough, fetch_size=fetch_size,
    )  # fmt: skip
    return BoltProxy(
        guard, backend, repairer=build_repairer(guard, config), start_backend=True,
        authenticate=backend.authenticate if passthrough else None, versions=versions,
    )  # fmt: skip


@pytest.fixture(scope="module")
def relay(arcadedb_server: ArcadeDBServer) -> Iterator[BoltProxy]:
    server = relay_server(arcadedb_server)
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _quiet_driver_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def rows_of(uri: str, auth: Any, query: str, params: dict[str, Any], **session: Any) -> list[Any]:
    with neo4j.GraphDatabase.driver(uri, auth=auth) as drv, drv.session(**session) as s:
        return canon_rows(query, driver_rows(list(s.run(query, params))), element_ids=True)


# -- the wire side, without a server ------------------------------------------------------


def test_client_handshake_offers_bolt_5_and_4_4() -> None:
    request = client_request()
    assert request[:4] == b"\x60\x60\xb0\x17" and len(request) == 20
    assert request[4:12] == bytes((0, 8, 8, 5, 0, 0, 4, 4))
    assert client_choice(bytes((0, 0, 4, 5))) == (5, 4)
    assert client_choice(bytes((0, 0, 4, 4))) == (4, 4)
    with pytest.raises(Exception, match="none of the offered"):
        client_choice(bytes(4))


def test_replies_split_anywhere_and_multi_chunk_records_are_relayed_whole() -> None:
    async def body() -> None:
        conn = UpstreamConnection()
        conn.version = (5, 4)
        conn._greeting.set_result(b"")
        records: list[bytes] = []
        pull = conn.queue(m.PULL, [{"n": 10}], records)
        big = "x" * 70_000  # more than one 65,535-byte chunk
        wire = bytearray()
        m.encode_records(wire, [[1, "a"], [big, None]], conn.codec)
        m.frame(wire, packb(Structure(m.SUCCESS, [{"type": "r", "t_last": 3}])))
        for i in range(0, len(wire), 7_001):  # fed in pieces that cut chunks and headers
            conn.data_received(bytes(wire[i : i + 7_001]))
        await pull.done
        assert pull.ok and pull.metadata == {"type": "r", "t_last": 3}
        assert [decode_record(r, conn.codec) for r in records] == [[1, "a"], [big, None]]
        assert b"".join(records) == bytes(wire[: sum(len(r) for r in records)])

    asyncio.run(body())


def test_equal_summaries_are_decoded_once_and_failures_still_need_a_reset() -> None:
    """A summary that recurs byte for byte (a read's PULL SUCCESS) is decoded once per
    connection: the second reply shares the first one's metadata."""

    async def body() -> None:
        conn = UpstreamConnection()
        conn.version = (5, 4)
        conn._greeting.set_result(b"")
        replies = [conn.queue(m.PULL, [{"n": 10}], []) for _ in range(3)]
        wire = bytearray()
        for _ in range(2):
            m.frame(wire, packb(Structure(m.SUCCESS, [{"type": "r", "db": "movies"}])))
        m.frame(wire, packb(Structure(m.FAILURE, [{"code": "Neo.X", "message": "no"}])))
        conn.data_received(bytes(wire))
        first, second, failed = replies
        await failed.done
        assert first.ok and first.metadata == {"type": "r", "db": "movies"}
        assert second.metadata is first.metadata
        assert not failed.ok and failed.metadata["message"] == "no" and conn.needs_reset

    asyncio.run(body())


class _Wire:
    """A transport that keeps what is written (no server: the test answers by hand)."""

    def __init__(self) -> None:
        self.sent = bytearray()

    def write(self, data: bytes) -> None:
        self.sent += data

    def get_extra_info(self, name: str) -> None:
        return None

    def is_closing(self) -> bool:
        return False

    def close(self) -> None: ...

    def abort(self) -> None: ...


def test_the_silence_watchdog_is_armed_once_for_many_replies_and_still_fires() -> None:
    """Replies that keep coming do not make and cancel a timer each (one for the whole run);
    a server that then says nothing still gets its waiting request cut off (SILENT)."""

    async def body() -> None:
        loop = asyncio.get_running_loop()
        armed: list[float] = []
        call_at = loop.call_at

        def counting(when: float, callback: Any, *args: Any, **kw: Any) -> Any:
            armed.append(when)
            return call_at(when, callback, *args, **kw)

        loop.call_at = counting  # type: ignore[method-assign]  # call_later goes through it
        conn = UpstreamConnection()
        conn.version = (5, 4)
        conn._greeting.set_result(b"")
        conn.connection_made(_Wire())  # type: ignore[arg-type]
        conn.silence = 0.2
        summary = bytearray()
        m.frame(summary, packb(Structure(m.SUCCESS, [{"type": "r"}])))
        for _ in range(20):
            reply = conn.queue(m.PULL, [{"n": 10}], [])
            conn.flush()
            conn.data_received(bytes(summary))
            await reply.done
            assert reply.ok
        assert len(armed) == 1
        reply = conn.queue(m.PULL, [{"n": 10}], [])
        conn.flush()
        await reply.done  # nothing comes: the watchdog ends the wait
        assert reply.tag == SILENT and conn.abandoned

    asyncio.run(body())


# -- against ArcadeDB -----------------------------------------------------------------------


def test_reads_equal_direct_and_pass_through_undecoded(
    relay: BoltProxy, arcadedb_server: ArcadeDBServer
) -> None:
    before = relay.backend.records_decoded
    for query, params in READ_QUERIES:
        direct = rows_of(
            arcadedb_server.url, arcadedb_server.auth, query, params,
            database=arcadedb_server.database,
        )  # fmt: skip
        assert direct, query
        assert rows_of(relay.uri, ANYONE, query, params) == direct, query
    assert relay.backend.records_decoded == before  # every record was relayed as it came


def test_repair_loop_peeks_at_two_records_and_the_rest_stays_raw(
    arcadedb_server: ArcadeDBServer,
) -> None:
    server = relay_server(arcadedb_server, repair=True)
    try:
        query = "MATCH (p:Person) RETURN p.name AS name ORDER BY name"
        with neo4j.GraphDatabase.driver(server.uri, auth=ANYONE) as drv, drv.session() as s:
            names = [r["name"] for r in s.run(query, fetch_size=10)]
            # an empty read goes through the loop (tier 1 reverses the arrow and finds rows;
            # without a schema that flip is speculative: the question opts in)
            flipped = s.run(neo4j.Query(
                "MATCH (m:Movie)-[:ACTED_IN]->(p:Person) RETURN count(*) AS n",
                metadata={"question": "How many acting credits are there?"},
            ))  # fmt: skip
            n = flipped.single(strict=True)["n"]
        assert len(names) == 133 and names == sorted(names)
        assert server.backend.records_decoded <= 2 + 3  # the peek, and the loop's attempts
        assert n == 172
    finally:
        server.stop()


def test_a_bolt_4_4_client_gets_decoded_records(arcadedb_server: ArcadeDBServer) -> None:
    server = relay_server(arcadedb_server, versions=((4, 4),))
    try:
        query = "MATCH (m:Movie {title: 'The Matrix'}) RETURN m, m.released AS year"
        with neo4j.GraphDatabase.driver(server.uri, auth=ANYONE) as drv, drv.session() as s:
            result = s.run(query)
            record = result.single(strict=True)
            assert result.consume().server.protocol_version == (4, 4)
        assert record["year"] == 1999 and record["m"]["title"] == "The Matrix"
        assert set(record["m"].labels) == {"Movie"}
        assert server.backend.records_decoded == 1
    finally:
        server.stop()


def test_server_errors_keep_their_code_and_the_connection_recovers(
    relay: BoltProxy, arcadedb_server: ArcadeDBServer
) -> None:
    query = "RETURN toUpper(1, 2, 3) AS x"  # passes the guard, fails in the database
    with (
        neo4j.GraphDatabase.driver(arcadedb_server.url, auth=arcadedb_server.auth) as drv,
        drv.session(database=arcadedb_server.database) as s,
        pytest.raises(nex.Neo4jError) as direct,
    ):
        s.run(query).consume()
    with neo4j.GraphDatabase.driver(relay.uri, auth=ANYONE) as drv, drv.session() as s:
        for _ in range(3):  # the failed upstream connection is reset and reused
            with pytest.raises(nex.Neo4jError) as through:
                s.run(query).consume()
            assert through.value.code == direct.value.code
            assert s.run("RETURN 1 AS one").single(strict=True)["one"] == 1


def test_transactions_partial_results_and_discards(relay: BoltProxy) -> None:
    with neo4j.GraphDatabase.driver(relay.uri, auth=ANYONE) as drv, drv.session() as s:
        with s.begin_transaction() as tx:
            first = tx.run("MATCH (p:Person) RETURN p.name AS name ORDER BY name", fetch_size=5)
            two = [next(first)["name"], next(first)["name"]]
            n = tx.run("MATCH (m:Movie) RETURN count(m) AS n").single(strict=True)["n"]
            rest = [r["name"] for r in first]  # the first result, still open, continues
            tx.commit()
        assert n == 38 and len(two) + len(rest) == 133 and s.last_bookmarks().raw_values
        tx = s.begin_transaction()
        tx.run("MATCH (p:Person) RETURN p LIMIT 5").consume()
        tx.rollback()
        partial = s.run("UNWIND range(1, 5000) AS i RETURN i", fetch_size=10)
        assert [next(partial)[0] for _ in range(3)] == [1, 2, 3]
        partial.consume()  # DISCARDs the rest upstream
        with pytest.raises(nex.Neo4jError), s.begin_transaction() as tx:
            tx.run("RETURN no_such_function(1) AS x").consume()
        assert s.run("RETURN 2 AS two").single(strict=True)["two"] == 2


def test_a_killed_upstream_is_unavailable_then_served_again(tmp_path: Path) -> None:
    db = ArcadeDBServer(tmp_path / "arcadedb", bolt_port=free_port("127.0.0.1"))
    db.start()
    server = relay_server(db)
    try:
        query = "MATCH (m:Movie) RETURN count(m) AS n"
        with neo4j.GraphDatabase.driver(server.uri, auth=ANYONE) as drv, drv.session() as s:
            assert s.run(query).single(strict=True)["n"] == 38
            db.kill()
            with pytest.raises(nex.Neo4jError) as info:
                s.run(query).consume()
            assert info.value.code == BackendUnavailable("x").code
            db.start()
            assert s.run(query).single(strict=True)["n"] == 38
    finally:
        server.stop()
        db.stop()


def test_passthrough_credentials_are_checked_at_logon(arcadedb_server: ArcadeDBServer) -> None:
    server = relay_server(arcadedb_server, passthrough=True)
    try:
        with neo4j.GraphDatabase.driver(server.uri, auth=arcadedb_server.auth) as drv:
            records, _, _ = drv.execute_query("MATCH (m:Movie) RETURN count(m) AS n")
            assert records[0]["n"] == 38
        with (
            neo4j.GraphDatabase.driver(server.uri, auth=("root", "wrong")) as drv,
            pytest.raises(nex.AuthError) as info,
        ):
            drv.verify_connectivity()  # HELLO / LOGON only: refused before any query
        assert info.value.code == "Neo.ClientError.Security.Unauthorized"
    finally:
        server.stop()


def test_schema_discovery_style_reads_decode_into_the_neutral_model(
    relay: BoltProxy,
) -> None:
    async def body() -> list[list[Any]]:
        stream = await relay.backend.run("MATCH (m:Movie) RETURN m.title AS t LIMIT 3", {})
        return await collect(stream)

    rows = relay.call(body())
    assert len(rows) == 3 and all(isinstance(r[0], str) for r in rows)
