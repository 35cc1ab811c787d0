"""The real neo4j driver (sync and async) against BoltFrontend.

The database here is `MemoryBackend`, a test double implementing the Backend protocol (echoes
parameters, yields graph values, streams generated rows, keeps a tiny transactional list), so
these tests exercise the wire protocol, not a database. Runs with neo4j 6.x and 5.x drivers.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import socket
import time
import warnings
from collections.abc import Iterator
from typing import Any
from zoneinfo import ZoneInfo

import neo4j
import pytest
import pytz
from neo4j import exceptions as nex

from query_guard.backend import BackendError, BackendUnavailable, ResultSummary
from query_guard.model import Action, Finding, Severity, Verdict
from query_guard.run.limits import Limits
from query_guard.values import Duration, GraphNode, GraphPath, GraphRelationship, Point, Temporal
from tests.background_loop import BoltProxy

AUTH = ("neo4j", "password")
EPOCH_DAY = dt.date(1970, 1, 1).toordinal()
DRIVER_MAJOR = int(neo4j.__version__.split(".")[0])

# -- the in-memory database double ------------------------------------------------------------

ALICE = GraphNode(1, ("Person",), {"name": "Alice"}, "4:mem:1")
BOB = GraphNode(2, ("Person",), {"name": "Bob"}, "4:mem:2")
ACME = GraphNode(3, ("Company",), {"name": "Acme"}, "4:mem:3")
KNOWS = GraphRelationship(10, "KNOWS", 1, 2, {"since": 2020}, "5:mem:10", "4:mem:1", "4:mem:2")
WORKS_AT = GraphRelationship(11, "WORKS_AT", 3, 2, {}, "5:mem:11", "4:mem:3", "4:mem:2")
TYPES_ROW = [
    dt.date(2024, 2, 29),
    dt.time(12, 30, 15, 250000),
    dt.time(8, 0, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
    dt.datetime(2024, 3, 1, 9, 15, 0, 123000),
    dt.datetime(2024, 3, 1, 9, 15, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    dt.datetime(2024, 7, 1, 9, 15, tzinfo=ZoneInfo("Europe/Stockholm")),
    Duration(months=14, days=3, seconds=3661, nanoseconds=5),
    Point(7203, 1.0, 2.0),
    Point(4979, 12.5, 55.7, 10.0),
]


class MemoryStream:
    def __init__(
        self,
        backend: MemoryBackend,
        query: str,
        keys: list[str],
        rows: Iterator[list[Any]],
        summary: ResultSummary | None = None,
    ) -> None:
        self.keys = keys
        self._backend = backend
        self._query = query
        self._rows = rows
        self._next: list[Any] | None = next(rows, None)
        self._summary = summary or ResultSummary()

    async def fetch(self, n: int) -> list[list[Any]]:
        self._backend.fetches.append((self._query, n))
        out: list[list[Any]] = []
        while self._next is not None and (n < 0 or len(out) < n):
            out.append(self._next)
            self._next = next(self._rows, None)
        return out

    async def discard(self) -> None:
        self._next = None

    def has_more(self) -> bool:
        return self._next is not None

    def summary(self) -> ResultSummary:
        return self._summary


class MemoryTransaction:
    def __init__(self, backend: MemoryBackend) -> None:
        self.backend = backend
        self.pending: list[Any] = []

    async def run(self, query: str, parameters: dict[str, Any]) -> MemoryStream:
        if query == "ADD $v":
            self.pending.append(parameters["v"])
            return MemoryStream(
                self.backend, query, [], iter(()), ResultSummary("w", {"nodes-created": 1})
            )
        return await self.backend.run(query, parameters)

    async def commit(self) -> str | None:
        self.backend.data += self.pending
        self.backend.commits += 1
        return f"mem:{self.backend.commits}"

    async def rollback(self) -> None:
        self.pending = []


class MemoryBackend:
    """A database double speaking the neutral result model (see module docstring)."""

    name = "memory"

    def __init__(self) -> None:
        self.runs: list[tuple[str, dict[str, Any], str | None]] = []
        self.fetches: list[tuple[str, int]] = []
        self.data: list[Any] = []
        self.commits = 0
        self.available = True
        self.in_flight = 0
        self.max_in_flight = 0

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def run(
        self, query: str, parameters: dict[str, Any], database: str | None = None
    ) -> MemoryStream:
        self.runs.append((query, parameters, database))
        if not self.available:
            raise BackendUnavailable("memory backend is down")
        if query == "FAIL":
            raise BackendError("/ by zero", "Neo.ClientError.Statement.ArithmeticError")
        if query == "ECHO":
            keys = sorted(parameters)
            return self._stream(query, keys, [[parameters[k] for k in keys]])
        if query.startswith("ROWS"):
            count = int(query.split()[1])
            return MemoryStream(self, query, ["i"], ([i] for i in range(count)))
        if query == "GRAPH":
            path = GraphPath((ALICE, BOB, ACME), (KNOWS, WORKS_AT))
            return self._stream(query, ["a", "r", "p"], [[ALICE, KNOWS, path]])
        if query == "TYPES":
            return self._stream(query, [f"t{i}" for i in range(len(TYPES_ROW))], [TYPES_ROW])
        if query == "COUNT":
            return self._stream(query, ["n"], [[len(self.data)]])
        if query == "SLOW":
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            await asyncio.sleep(0.05)
            self.in_flight -= 1
            return self._stream(query, ["ok"], [[1]])
        return self._stream(query, ["query"], [[query]])

    def _stream(self, query: str, keys: list[str], rows: list[list[Any]]) -> MemoryStream:
        return MemoryStream(self, query, keys, iter(rows))

    async def begin(
        self, database: str | None = None, metadata: dict[str, Any] | None = None
    ) -> MemoryTransaction:
        return MemoryTransaction(self)


def guard(query: str, parameters: dict[str, Any]) -> Verdict:
    def block(code: str, message: str, hint: str | None = None) -> Verdict:
        finding = Finding(code, Severity.ERROR, message, (0, len(query)), hint=hint)
        return Verdict(Action.BLOCK, query, (finding,), query)

    if "DELETE" in query:
        return block("SEC.WRITE", "DELETE is not allowed: the proxy is read-only")
    if query.startswith("```"):
        return block("SYN.PARSE", "invalid input '`' at line 1, column 1", "remove the fence")
    if "UNKNOWN_REL" in query:
        return block("SCH.NO_PATH", "no relationship UNKNOWN_REL between the labels")
    if query == "LIMITLESS":
        finding = Finding("LIM.INJECTED", Severity.WARNING, "appended LIMIT 3", (9, 9))
        return Verdict(Action.REWRITE, "ROWS 3", (finding,), query)
    return Verdict(Action.ALLOW, query, (), query)


# -- a server on a background event loop ------------------------------------------------------


def memory_server(**options: Any) -> BoltProxy:
    """The Bolt front over the in-memory backend, with the fake guard above."""
    return BoltProxy(guard, MemoryBackend(), **options)


@pytest.fixture(scope="module")
def server() -> Iterator[BoltProxy]:
    # the fake guard appends no LIMIT: no row cap, so 100,000 rows can stream
    srv = memory_server(handshake_timeout=1.0, limits=Limits(max_result_rows=0))
    yield srv
    srv.stop()


@pytest.fixture(scope="module", params=[(4, 4), (5, 0), (5, 4), (5, 6), (5, 8)], ids=str)
def versioned(request: pytest.FixtureRequest) -> Iterator[BoltProxy]:
    srv = memory_server(versions=(request.param,))
    srv.version = request.param  # type: ignore[attr-defined]
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def _quiet_driver_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated/preview summary APIs differ across 5.x/6.x
        yield


def single(driver: neo4j.Driver, query: str, **params: Any) -> tuple[neo4j.Record, Any]:
    with driver.session() as session:
        result = session.run(query, params)
        record = result.single(strict=True)
        return record, result.consume()


# -- connecting -------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["bolt", "neo4j"])
def test_sync_driver_connects_and_negotiates_the_newest_version(
    server: BoltProxy, scheme: str
) -> None:
    with neo4j.GraphDatabase.driver(server.url(scheme), auth=AUTH) as driver:
        driver.verify_connectivity()
        records, summary, keys = driver.execute_query("ROWS 3")
        assert [r["i"] for r in records] == [0, 1, 2] and keys == ["i"]
        assert summary.server.protocol_version == (5, 8)
        assert summary.server.agent.startswith("Neo4j/")
        assert summary.database == "neo4j"


def test_session_auth_switches_user_with_logoff_logon(server: BoltProxy) -> None:
    with neo4j.GraphDatabase.driver(server.url(), auth=AUTH) as driver:
        assert driver.verify_authentication(auth=("someone", "else"))
        with driver.session(auth=("other", "secret")) as session:
            assert session.run("ROWS 1").single(strict=True)["i"] == 0
        assert single(driver, "ROWS 1")[0]["i"] == 0


def test_routing_table_points_every_role_at_the_proxy(server: BoltProxy) -> None:
    with neo4j.GraphDatabase.driver(server.url("neo4j"), auth=AUTH) as driver:
        driver.execute_query("ROWS 1", routing_=neo4j.RoutingControl.READ)
        driver.execute_query("ROWS 1", routing_=neo4j.RoutingControl.WRITE)
        table = driver._pool.routing_tables["neo4j"]  # type: ignore[attr-defined]
        expected = {f"127.0.0.1:{server.port}"}
        for role in (table.routers, table.readers, table.writers):
            assert {str(a) for a in role} == expected


def test_classic_handshake_without_manifest(
    server: BoltProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Drivers before the manifest (< 5.27) offer four plain ranges; reach into the driver to
    # make it offer exactly that: 5.3 down to 5.0, then 4.4.
    from neo4j._sync.io import Bolt

    offer = b"\x00\x03\x03\x05\x00\x00\x04\x04" + bytes(8)
    monkeypatch.setattr(Bolt, "get_handshake", classmethod(lambda cls: offer))
    with neo4j.GraphDatabase.driver(server.url(), auth=AUTH) as driver:
        _, summary = single(driver, "ROWS 1")
    assert summary.server.protocol_version == (5, 3)


@pytest.mark.parametrize("scheme", ["bolt", "neo4j"])
def test_async_driver(server: BoltProxy, scheme: str) -> None:
    async def body() -> None:
        async with neo4j.AsyncGraphDatabase.driver(server.url(scheme), auth=AUTH) as driver:
            records, summary, _ = await driver.execute_query("ECHO", x=[1, "two", None])
            assert records[0]["x"] == [1, "two", None]
            assert summary.server.protocol_version == (5, 8)
            async with driver.session() as session:
                tx = await session.begin_transaction()
                await tx.run("ADD $v", v="async")
                await tx.commit()
                result = await session.run("ROWS 2500")
                assert [r["i"] async for r in result] == list(range(2500))

    before = list(server.backend.data)
    asyncio.run(body())
    assert server.backend.data == [*before, "async"]


# -- transactions -----------------------------------------------------------------------------


def test_explicit_transactions_commit_and_rollback(server: BoltProxy) -> None:
    backend = server.backend
    with neo4j.GraphDatabase.driver(server.url(), auth=AUTH) as driver, driver.session() as s:
        start = len(backend.data)
        with s.begin_transaction() as tx:
            tx.run("ADD $v", v=1).consume()
            tx.run("ADD $v", v=2)
            tx.commit()
        assert backend.data[start:] == [1, 2]
        assert s.last_bookmarks()
        with s.begin_transaction() as tx:
            tx.run("ADD $v", v=3)
            tx.rollback()
        assert backend.data[start:] == [1, 2]

        def work(tx: neo4j.ManagedTransaction) -> int:
            tx.run("ADD $v", v=4).consume()
            return tx.run("COUNT").single(strict=True)["n"]

        assert s.execute_write(work) == len(backend.data[: start + 2])  # pending not visible
        assert backend.data[start:] == [1, 2, 4]


# -- values -----------------------------------------------------------------------------------

PARAMETERS: dict[str, Any] = {
    "null": None,
    "true": True,
    "tiny": -16,
    "i8": -128,
    "i16": 32767,
    "i32": -(2**31),
    "i64": 2**63 - 1,
    "float": 1.5e300,
    "text": "Grüße, 世界 " + "x" * 70_000,
    "bytes": bytes(range(256)) * 300,
    "list": [1, [2.5, ["deep", None]], {"k": [True]}],
    "map": {"a": {"b": {"c": [1, 2, 3]}}, "empty": {}},
    "date": dt.date(1, 1, 1),
    "local_time": dt.time(23, 59, 59, 999999),
    # pytz: the driver calls tzinfo.utcoffset(time), which datetime.timezone refuses
    "time": dt.time(1, 2, 3, tzinfo=pytz.FixedOffset(330)),
    "local_datetime": dt.datetime(9999, 12, 31, 23, 59, 59),
    "datetime": dt.datetime(2024, 1, 1, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=-3))),
    # pytz, not ZoneInfo: the driver hands its own DateTime to ZoneInfo.utcoffset(), which the
    # C zoneinfo misreads (wrong instants, even segfaults) -- a driver bug, not a protocol one
    "zoned": pytz.timezone("Europe/Berlin").localize(dt.datetime(2024, 10, 27, 12, 30)),
    "duration": dt.timedelta(days=3, seconds=7, microseconds=11),
}


def test_parameters_of_every_type_round_trip(versioned: BoltProxy) -> None:
    params = dict(PARAMETERS)
    params["neo_duration"] = neo4j.time.Duration(months=13, days=2, seconds=5, nanoseconds=9)
    params["cartesian"] = neo4j.spatial.CartesianPoint((1.0, 2.0))
    params["wgs84_3d"] = neo4j.spatial.WGS84Point((12.0, 55.0, 7.0))
    with neo4j.GraphDatabase.driver(versioned.url(), auth=AUTH) as driver:
        record, summary = single(driver, "ECHO", **params)
    assert summary.server.protocol_version == versioned.version  # type: ignore[attr-defined]
    received = versioned.backend.runs[-1][1]
    # temporal values arrive as the client sent them (Bolt 5 form: UTC seconds, nanoseconds)
    assert received["date"] == Temporal(0x44, (dt.date(1, 1, 1).toordinal() - EPOCH_DAY,))
    zoned_at = int(PARAMETERS["zoned"].timestamp())
    assert received["zoned"] == Temporal(0x69, (zoned_at, 0, "Europe/Berlin"))
    assert received["neo_duration"] == Duration(13, 2, 5, 9)
    assert received["duration"] == Duration(0, 3, 7, 11000)
    assert received["cartesian"] == Point(7203, 1.0, 2.0)
    assert received["wgs84_3d"] == Point(4979, 12.0, 55.0, 7.0)
    back = dict(record)
    for key, sent in PARAMETERS.items():
        got = back[key]
        if key == "duration":
            assert (got.days, got.seconds, got.nanoseconds) == (3, 7, 11000)
        elif key == "zoned":
            assert got.to_native().astimezone(dt.UTC) == sent.astimezone(dt.UTC)
            assert str(got.tzinfo) == "Europe/Berlin"
        elif hasattr(got, "to_native"):
            assert got.to_native() == sent, key
            if isinstance(sent, (dt.time, dt.datetime)):
                assert got.utcoffset() == sent.utcoffset(), key
        else:
            assert got == sent, key
    assert back["neo_duration"] == params["neo_duration"]
    assert back["cartesian"] == params["cartesian"]
    assert back["wgs84_3d"] == params["wgs84_3d"]


def test_results_of_every_neutral_type(versioned: BoltProxy) -> None:
    with neo4j.GraphDatabase.driver(versioned.url(), auth=AUTH) as driver:
        record, _ = single(driver, "TYPES")
    values = list(record.values())
    assert values[0].to_native() == TYPES_ROW[0]
    assert values[1].to_native() == TYPES_ROW[1]
    assert values[2].to_native() == TYPES_ROW[2] and values[2].utcoffset() == dt.timedelta(hours=-5)
    assert values[3].to_native() == TYPES_ROW[3]
    assert values[4].to_native() == TYPES_ROW[4]
    assert values[5].to_native() == TYPES_ROW[5] and str(values[5].tzinfo) == "Europe/Stockholm"
    assert values[6] == neo4j.time.Duration(months=14, days=3, seconds=3661, nanoseconds=5)
    assert isinstance(values[7], neo4j.spatial.CartesianPoint) and tuple(values[7]) == (1.0, 2.0)
    assert isinstance(values[8], neo4j.spatial.WGS84Point) and values[8].z == 10.0


def test_graph_values_arrive_as_driver_graph_types(versioned: BoltProxy) -> None:
    bolt5 = versioned.version >= (5, 0)  # type: ignore[attr-defined]
    with neo4j.GraphDatabase.driver(versioned.url(), auth=AUTH) as driver:
        record, _ = single(driver, "GRAPH")
    node, rel, path = record["a"], record["r"], record["p"]
    assert isinstance(node, neo4j.graph.Node)
    assert node.labels == {"Person"} and node["name"] == "Alice"
    assert isinstance(rel, neo4j.graph.Relationship)
    assert rel.type == "KNOWS" and rel["since"] == 2020
    assert rel.start_node is not None and rel.end_node is not None
    if bolt5:
        assert node.element_id == "4:mem:1" and rel.element_id == "5:mem:10"
        assert rel.start_node.element_id == "4:mem:1" and rel.end_node.element_id == "4:mem:2"
    assert isinstance(path, neo4j.graph.Path)
    assert [n["name"] for n in path.nodes] == ["Alice", "Bob", "Acme"]
    assert [r.type for r in path.relationships] == ["KNOWS", "WORKS_AT"]
    works_at = path.relationships[1]  # walked against its direction: Acme -> Bob
    assert works_at.start_node is not None and works_at.start_node["name"] == "Acme"
    assert works_at.end_node is not None and works_at.end_node["name"] == "Bob"


# -- the guard --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "error", "code", "text"),
    [
        (
            "MATCH (n) DELETE n",
            nex.Forbidden,
            "Neo.ClientError.Security.Forbidden",
            "SEC.WRITE: DELETE is not allowed: the proxy is read-only",
        ),
        (
            "```cypher MATCH (n)",
            nex.CypherSyntaxError,
            "Neo.ClientError.Statement.SyntaxError",
            "SYN.PARSE: invalid input '`' at line 1, column 1 (hint: remove the fence)",
        ),
        (
            "MATCH ()-[:UNKNOWN_REL]->()",
            nex.ClientError,
            "Neo.ClientError.Statement.SemanticError",
            "SCH.NO_PATH: no relationship",
        ),
    ],
)
def test_blocked_query_raises_the_right_error(
    versioned: BoltProxy, query: str, error: type[Exception], code: str, text: str
) -> None:
    runs_before = len(versioned.backend.runs)
    with neo4j.GraphDatabase.driver(versioned.url(), auth=AUTH) as driver:
        with pytest.raises(error) as caught:
            driver.execute_query(query)
        assert caught.value.code == code  # type: ignore[attr-defined]
        assert caught.value.message.startswith(text)  # type: ignore[attr-defined]
        gql_status = getattr(caught.value, "gql_status", None)
        if versioned.version >= (5, 7) and gql_status is not None:  # type: ignore[attr-defined]
            assert gql_status.startswith("42")
        with driver.session() as session:
            tx = session.begin_transaction()
            with pytest.raises(error):
                tx.run(query).consume()
            tx.close()
        assert single(driver, "ROWS 1")[0]["i"] == 0  # the connection pool is still healthy
    assert [r[0] for r in versioned.backend.runs[runs_before:]] == ["ROWS 1"]


def test_rewritten_query_reports_its_findings_in_the_summary(versioned: BoltProxy) -> None:
    with neo4j.GraphDatabase.driver(versioned.url(), auth=AUTH) as driver:
        records, summary, _ = driver.execute_query("LIMITLESS")
    assert [r["i"] for r in records] == [0, 1, 2]
    assert versioned.backend.runs[-1][0] == "ROWS 3"
    [note] = summary.notifications
    assert note["code"] == "LIM.INJECTED" and note["severity"] == "WARNING"
    if hasattr(summary, "gql_status_objects"):
        statuses = list(summary.gql_status_objects)
        warning = next(s for s in statuses if s.is_notification)
        assert "LIM.INJECTED" in warning.status_description
        assert warning.position is not None and warning.position.column == 10
    event = versioned.events[-1]
    assert event["action"] == "rewrite" and event["final_query"] == "ROWS 3"


@pytest.mark.parametrize("scheme", ["bolt", "neo4j"])
def test_backend_errors_and_outages_keep_the_connection(server: BoltProxy, scheme: str) -> None:
    uri = server.url(scheme)
    with neo4j.GraphDatabase.driver(uri, auth=AUTH) as driver, driver.session() as s:
        with pytest.raises(nex.ClientError) as caught:
            s.run("FAIL").consume()
        assert caught.value.code == "Neo.ClientError.Statement.ArithmeticError"
        assert s.run("ROWS 1").single(strict=True)["i"] == 0
        server.backend.available = False
        try:
            with pytest.raises((nex.TransientError, nex.ServiceUnavailable)):
                s.run("ROWS 1").consume()
        finally:
            server.backend.available = True
        assert s.run("ROWS 2").value() == [0, 1]


# -- streaming and load -----------------------------------------------------------------------


def test_large_result_streams_in_pull_batches(server: BoltProxy) -> None:
    backend = server.backend
    with neo4j.GraphDatabase.driver(server.url(), auth=AUTH) as driver, driver.session() as s:
        result = s.run("ROWS 100000")
        total = sum(1 for _ in result)
    assert total == 100_000
    sizes = [n for query, n in backend.fetches if query == "ROWS 100000"]
    assert len(sizes) >= 100 and max(sizes) == 1000 and all(n > 0 for n in sizes)


def test_fifty_concurrent_sessions(server: BoltProxy) -> None:
    async def one(driver: neo4j.AsyncDriver, i: int) -> int:
        async with driver.session() as session:
            await (await session.run("SLOW")).consume()
            result = await session.run("ECHO", i=i)
            return (await result.single(strict=True))["i"]

    async def body() -> list[int]:
        async with neo4j.AsyncGraphDatabase.driver(server.url(), auth=AUTH) as driver:
            return await asyncio.gather(*(one(driver, i) for i in range(50)))

    assert asyncio.run(body()) == list(range(50))
    assert server.backend.max_in_flight > 10


def test_two_hundred_sequential_connections(server: BoltProxy) -> None:
    for i in range(200):
        with neo4j.GraphDatabase.driver(server.url(), auth=AUTH) as driver:
            assert single(driver, "ECHO", i=i)[0]["i"] == i
    deadline = time.monotonic() + 5
    while server.frontend.connections and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.frontend.connections == 0


# -- hostile clients --------------------------------------------------------------------------


def raw_connection(server: BoltProxy) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    try:
        while sock.recv(65536):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def test_hostile_clients_do_not_stop_the_server(server: BoltProxy) -> None:
    with raw_connection(server) as sock:  # garbage instead of a handshake
        sock.sendall(b"\x16\x03\x01\x02\x00" + bytes(300))
        assert closed_by_server(sock)
    with raw_connection(server) as sock:  # truncated handshake, then silence
        sock.sendall(b"\x60\x60\xb0\x17\x00\x00")
        assert closed_by_server(sock)  # handshake timeout (1 s here)
    with raw_connection(server) as sock:  # truncated handshake, client hangs up
        sock.sendall(b"\x60\x60")
    with raw_connection(server) as sock:  # valid handshake, then an oversized message
        sock.sendall(b"\x60\x60\xb0\x17" + bytes((0, 0, 8, 5)) + bytes(12))
        assert sock.recv(4) == b"\x00\x00\x08\x05"
        chunk = b"\xff\xff" + b"\x00" * 0xFFFF
        with contextlib.suppress(OSError):
            for _ in range(16 * 1024 * 1024 // 0xFFFF + 2):
                sock.sendall(chunk)
        assert closed_by_server(sock)
    with raw_connection(server) as sock:  # valid handshake, then garbage messages
        sock.sendall(b"\x60\x60\xb0\x17" + bytes((0, 0, 8, 5)) + bytes(12))
        assert sock.recv(4) == b"\x00\x00\x08\x05"
        sock.sendall(b"\x00\x04\xde\xad\xbe\xef\x00\x00")
        assert closed_by_server(sock)
    with neo4j.GraphDatabase.driver(server.url(), auth=AUTH) as driver:
        assert single(driver, "ROWS 1")[0]["i"] == 0


def test_audit_events(server: BoltProxy) -> None:
    with neo4j.GraphDatabase.driver(server.url(), auth=AUTH) as driver:
        with contextlib.suppress(nex.Forbidden):
            driver.execute_query("MATCH (n) DETACH DELETE n")
        driver.execute_query(neo4j.Query("ECHO", metadata={"question": "who?"}), x=1)
    blocked, allowed = server.events[-2:]
    assert allowed["detail"]["tx_metadata"] == {"question": "who?"}
    assert blocked["action"] == "block" and blocked["codes"] == ["SEC.WRITE"]
    assert blocked["backend_ms"] is None and blocked["guard_ms"] >= 0
    assert allowed["action"] == "allow" and allowed["final_query"] == "ECHO"
    assert allowed["client"].startswith("127.0.0.1:") and allowed["in_transaction"] is True
    assert isinstance(allowed["backend_ms"], int)
