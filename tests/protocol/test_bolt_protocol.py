"""The Bolt server without sockets: bytes into `BoltProtocol`, bytes out of a mock transport.

Covers the handshake (classic and manifest v1), chunk framing, the server state machine
(FAILURE -> IGNORED -> RESET, INTERRUPTED, transactions with qids), guard verdicts and the
per-version shapes of failures and notifications."""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from query_guard.backend import BackendError, BackendUnavailable, ResultSummary
from query_guard.frontends.bolt.connection import BoltProtocol
from query_guard.frontends.bolt.context import ServerContext
from query_guard.model import Action, Finding, Severity, Verdict
from query_guard.values import Temporal
from query_guard.wire import bolt_messages as m
from query_guard.wire.bolt_handshake import MAGIC
from query_guard.wire.bolt_values import ValueCodec
from query_guard.wire.packstream import Structure, Unpacker

CODEC = ValueCodec()
HELLO = (m.HELLO, [{"user_agent": "test/1.0", "scheme": "none"}])
LOGON = (m.LOGON, [{"scheme": "basic", "principal": "u", "credentials": "p"}])


# -- test doubles ------------------------------------------------------------------------------


class MemoryStream:
    def __init__(self, keys: list[str], rows: list[list[Any]], log: list[Any]) -> None:
        self.keys = keys
        self._rows = rows
        self._log = log

    async def fetch(self, n: int) -> list[list[Any]]:
        self._log.append(("fetch", n))
        n = len(self._rows) if n < 0 else n
        out, self._rows = self._rows[:n], self._rows[n:]
        return out

    async def discard(self) -> None:
        self._log.append(("discard",))
        self._rows = []

    def has_more(self) -> bool:
        return bool(self._rows)

    def summary(self) -> ResultSummary:
        return ResultSummary(counters={"nodes-created": 1} if self.keys == [] else {})


class MemoryTx:
    def __init__(self, backend: MemoryBackend) -> None:
        self.backend = backend

    async def run(self, query: str, parameters: dict[str, Any]) -> MemoryStream:
        return await self.backend.run(query, parameters)

    async def commit(self) -> str | None:
        self.backend.log.append(("commit",))
        return "bookmark:1"

    async def rollback(self) -> None:
        self.backend.log.append(("rollback",))


class MemoryBackend:
    """RETURN rows of `n` integers, or echoes parameters; `FAIL`/`DOWN` raise."""

    name = "memory"

    def __init__(self) -> None:
        self.log: list[Any] = []

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def run(
        self, query: str, parameters: dict[str, Any], database: str | None = None
    ) -> MemoryStream:
        self.log.append(("run", query, parameters, database))
        if query == "FAIL":
            raise BackendError("boom", "Neo.ClientError.Statement.ArithmeticError")
        if query == "DOWN":
            raise BackendUnavailable("database is down")
        if query.startswith("ROWS"):
            return MemoryStream(["i"], [[i] for i in range(int(query.split()[1]))], self.log)
        if query == "WRITE":
            return MemoryStream([], [], self.log)
        keys = sorted(parameters)
        return MemoryStream(keys, [[parameters[k] for k in keys]], self.log)

    async def begin(
        self, database: str | None = None, metadata: dict[str, Any] | None = None
    ) -> MemoryTx:
        self.log.append(("begin", database, metadata))
        return MemoryTx(self)


def guard(query: str, parameters: dict[str, Any]) -> Verdict:
    if "DELETE" in query:
        finding = Finding("SEC.WRITE", Severity.ERROR, "writes are not allowed", (0, 6))
        return Verdict(Action.BLOCK, query, (finding,), query)
    if "((" in query:
        finding = Finding("SYN.PARSE", Severity.ERROR, "unexpected '('", (7, 8), hint="close it")
        return Verdict(Action.BLOCK, query, (finding,), query)
    if query.startswith("LIMITLESS"):
        finding = Finding("LIM.INJECTED", Severity.WARNING, "added LIMIT 2", (9, 9))
        return Verdict(Action.REWRITE, "ROWS 2", (finding,), query)
    return Verdict(Action.ALLOW, query, (), query)


class MockTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.data = bytearray()
        self.closed = False
        self.aborted = False
        self.reading = True
        self.protocol: BoltProtocol | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.data += data

    def _lose(self) -> None:
        if not self.closed:
            self.closed = True
            assert self.protocol is not None
            asyncio.get_running_loop().call_soon(self.protocol.connection_lost, None)

    def close(self) -> None:
        self._lose()

    def abort(self) -> None:
        self.aborted = True
        self._lose()

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 50000) if name == "peername" else default

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True


class Client:
    """Speaks raw Bolt to a BoltProtocol over a MockTransport."""

    def __init__(self, protocol: BoltProtocol, transport: MockTransport) -> None:
        self.protocol = protocol
        self.transport = transport
        self.read_pos = 0
        self.dechunker = m.Dechunker()

    def send_raw(self, data: bytes) -> None:
        self.protocol.data_received(data)

    def send(self, *requests: tuple[int, list[Any]]) -> None:
        out = bytearray()
        for tag, fields in requests:
            m.encode_message(out, tag, fields, CODEC)
        self.send_raw(bytes(out))

    def take_bytes(self) -> bytes:
        data = bytes(self.transport.data[self.read_pos :])
        self.read_pos = len(self.transport.data)
        return data

    async def receive(self, summaries: int) -> list[tuple[int, list[Any]]]:
        """Messages up to and including the `summaries`-th summary (RECORDs included)."""
        out: list[tuple[int, list[Any]]] = []
        for _ in range(500):
            for frame in self.dechunker.feed(self.take_bytes()):
                unpacker = Unpacker(frame, CODEC.hydrate)
                size, tag = unpacker.structure_header()
                out.append((tag, [unpacker.unpack() for _ in range(size)]))
            if sum(tag != m.RECORD for tag, _ in out) >= summaries:
                assert sum(tag != m.RECORD for tag, _ in out) == summaries, out
                return out
            await asyncio.sleep(0.001)
        raise AssertionError(f"expected {summaries} summaries, got {out}")

    async def exchange(self, *requests: tuple[int, list[Any]]) -> list[tuple[int, list[Any]]]:
        self.send(*requests)
        return await self.receive(len(requests))


def connect(
    backend: MemoryBackend | None = None, *, events: list[dict[str, Any]] | None = None,
    max_message: int = m.DEFAULT_MAX_MESSAGE, handshake_timeout: float = 5.0,
    authenticate: Callable[[dict[str, Any]], bool] | None = None,
    advertised: tuple[str, ...] = ("query_guard.example:7687",),
) -> tuple[Client, MemoryBackend]:
    backend = backend or MemoryBackend()
    ctx = ServerContext(
        guard=guard, backend=backend, advertised_address=advertised,
        on_query=None if events is None else events.append, authenticate=authenticate,
    )
    protocol = BoltProtocol(ctx, itertools.count(1), set(), max_message, handshake_timeout)
    transport = MockTransport()
    transport.protocol = protocol
    protocol.connection_made(transport)
    return Client(protocol, transport), backend


def proposal(major: int, minor: int, span: int = 0) -> bytes:
    return bytes((0, span, minor, major))


async def open_session(
    version: tuple[int, int] = (5, 8), **kw: Any
) -> tuple[Client, MemoryBackend]:
    client, backend = connect(**kw)
    client.send_raw(MAGIC + proposal(*version) + b"\x00" * 12)
    assert client.take_bytes() == bytes((0, 0, version[1], version[0]))
    replies = await client.exchange(HELLO, LOGON) if version >= (5, 1) else await client.exchange(
        HELLO
    )
    assert all(tag == m.SUCCESS for tag, _ in replies)
    return client, backend


def run(coro_fn: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(coro_fn())  # type: ignore[arg-type]


SUCCESS, RECORD, IGNORED, FAILURE = m.SUCCESS, m.RECORD, m.IGNORED, m.FAILURE


# -- framing ----------------------------------------------------------------------------------


def test_frame_splits_large_messages_into_max_size_chunks() -> None:
    out = bytearray()
    m.frame(out, b"x" * 70_000)
    assert out[:2] == b"\xff\xff"
    assert out[2 + 65535 : 4 + 65535] == (70_000 - 65535).to_bytes(2, "big")
    assert out.endswith(b"\x00\x00")
    assert m.Dechunker().feed(bytes(out)) == [b"x" * 70_000]


@given(st.lists(st.binary(min_size=1, max_size=300), min_size=1, max_size=5), st.data())
def test_dechunker_reassembles_any_split(bodies: list[bytes], data: st.DataObject) -> None:
    wire = bytearray(b"\x00\x00")  # a leading NOOP
    for body in bodies:
        m.frame(wire, body)
        wire += b"\x00\x00"  # NOOP keep-alive between messages
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=10)))
    dechunker = m.Dechunker()
    got: list[bytes] = []
    for start, end in itertools.pairwise([0, *cuts, len(wire)]):
        got += dechunker.feed(bytes(wire[start:end]))
    assert got == bodies


def test_dechunker_rejects_oversized_messages_before_buffering() -> None:
    dechunker = m.Dechunker(max_message=100_000)
    dechunker.feed(b"\xff\xff" + b"x" * 65535)
    with pytest.raises(m.FramingError):
        dechunker.feed(b"\xff\xff")  # the header alone already exceeds the bound


# -- handshake --------------------------------------------------------------------------------


def test_classic_handshake_picks_the_first_proposal_we_serve() -> None:
    async def body() -> None:
        client, _ = connect()
        client.send_raw(MAGIC + proposal(6, 0) + proposal(5, 8, 8) + proposal(4, 4, 2) + bytes(4))
        assert client.take_bytes() == b"\x00\x00\x08\x05"
        assert client.protocol.session is not None
        assert client.protocol.session.version == (5, 8)

    run(body)


def test_classic_handshake_range_and_44() -> None:
    async def body() -> None:
        client, _ = connect()
        client.send_raw(MAGIC + proposal(5, 3, 3) + bytes(12))
        assert client.take_bytes() == b"\x00\x00\x03\x05"
        client, _ = connect()
        client.send_raw(MAGIC + proposal(4, 4, 4) + proposal(3, 0) + bytes(8))
        assert client.take_bytes() == b"\x00\x00\x04\x04"

    run(body)


def test_manifest_v1_handshake() -> None:
    async def body() -> None:
        client, _ = connect()
        offer = MAGIC + b"\x00\x00\x01\xff" + proposal(5, 8, 8) + proposal(4, 4, 2) + proposal(3, 0)
        client.send_raw(offer[:9])  # the handshake may arrive in pieces
        client.send_raw(offer[9:])
        # manifest, 2 ranges (5.0-5.8, 4.4), no capabilities
        assert client.take_bytes().hex() == "000001ff" "02" "00080805" "00000404" "00"
        assert client.protocol.session is None
        hello = bytearray()
        m.encode_message(hello, m.HELLO, HELLO[1], CODEC)
        client.send_raw(b"\x00\x00\x07\x05" + b"\x00" + bytes(hello))  # choice + caps + HELLO
        assert client.protocol.session is not None
        assert client.protocol.session.version == (5, 7)
        [(tag, [meta])] = await client.receive(1)
        assert tag == SUCCESS and meta["server"].startswith("Neo4j/")

    run(body)


def test_manifest_choice_of_unoffered_version_closes() -> None:
    async def body() -> None:
        client, _ = connect()
        client.send_raw(MAGIC + b"\x00\x00\x01\xff" + bytes(12))
        client.take_bytes()
        client.send_raw(b"\x00\x00\x00\x06\x00")
        assert client.transport.closed

    run(body)


def test_no_common_version_answers_zero_and_closes() -> None:
    async def body() -> None:
        client, _ = connect()
        client.send_raw(MAGIC + proposal(3, 0) + proposal(2, 0) + bytes(8))
        assert client.take_bytes() == b"\x00\x00\x00\x00"
        assert client.transport.closed

    run(body)


def test_garbage_instead_of_handshake_closes_the_connection() -> None:
    async def body() -> None:
        client, _ = connect()
        client.send_raw(b"GET / HTTP/1.1\r\n\r\n")
        assert client.transport.closed and client.take_bytes() == b""

    run(body)


def test_no_hello_after_handshake_times_out() -> None:
    async def body() -> None:
        client, _ = connect(handshake_timeout=0.05)
        client.send_raw(MAGIC + proposal(5, 8) + bytes(12))
        await asyncio.sleep(0.1)
        assert client.transport.closed
        client, _ = await open_session(handshake_timeout=0.05)
        await asyncio.sleep(0.1)
        assert not client.transport.closed  # authenticated connections may idle

    run(body)


def test_truncated_handshake_times_out() -> None:
    async def body() -> None:
        client, _ = connect(handshake_timeout=0.05)
        client.send_raw(MAGIC + b"\x00\x00")
        await asyncio.sleep(0.1)
        assert client.transport.closed

    run(body)


# -- connection setup -------------------------------------------------------------------------


def test_hello_logon_and_goodbye() -> None:
    async def body() -> None:
        client, _ = connect()
        client.send_raw(MAGIC + proposal(5, 4) + bytes(12))
        client.take_bytes()
        [(t1, [hello]), (t2, _)] = await client.exchange(HELLO, LOGON)
        assert (t1, t2) == (SUCCESS, SUCCESS)
        assert hello["connection_id"] == "bolt-1"
        assert hello["hints"] == {"telemetry.enabled": True}
        [(tag, _)] = await client.exchange((m.TELEMETRY, [0]))
        assert tag == SUCCESS
        client.send((m.GOODBYE, []))
        await asyncio.sleep(0.01)
        assert client.transport.closed and not client.transport.aborted

    run(body)


def test_anything_but_hello_first_is_a_failure_and_closes() -> None:
    async def body() -> None:
        client, _ = connect()
        client.send_raw(MAGIC + proposal(5, 8) + bytes(12))
        client.take_bytes()
        [(tag, [meta])] = await client.exchange((m.RUN, ["RETURN 1", {}, {}]))
        assert tag == FAILURE and meta["neo4j_code"] == "Neo.ClientError.Request.Invalid"
        await asyncio.sleep(0.01)
        assert client.transport.closed

    run(body)


def test_logoff_logon_and_rejected_credentials() -> None:
    seen: list[dict[str, Any]] = []

    def authenticate(auth: dict[str, Any]) -> bool:
        seen.append(auth)
        return auth.get("credentials") == "p"

    async def body() -> None:
        client, _ = await open_session(authenticate=authenticate)
        replies = await client.exchange((m.LOGOFF, []), (m.RUN, ["ROWS 1", {}, {}]))
        # RUN while logged off is invalid, and fatal before authentication
        assert [t for t, _ in replies] == [SUCCESS, FAILURE]
        await asyncio.sleep(0.01)
        assert client.transport.closed
        client, _ = await open_session(authenticate=authenticate)
        replies = await client.exchange((m.LOGOFF, []), LOGON, (m.RUN, ["ROWS 1", {}, {}]))
        assert [t for t, _ in replies] == [SUCCESS, SUCCESS, SUCCESS]
        bad = (m.LOGON, [{"scheme": "basic", "principal": "u", "credentials": "wrong"}])
        client, _ = connect(authenticate=authenticate)
        client.send_raw(MAGIC + proposal(5, 8) + bytes(12))
        client.take_bytes()
        [(t1, _), (t2, [meta])] = await client.exchange(HELLO, bad)
        assert (t1, t2) == (SUCCESS, FAILURE)
        assert meta["neo4j_code"] == "Neo.ClientError.Security.Unauthorized"
        await asyncio.sleep(0.01)
        assert client.transport.closed
        assert seen[0]["principal"] == "u"

    run(body)


def test_bolt44_hello_carries_auth_and_accepts_the_utc_patch() -> None:
    async def body() -> None:
        client, _ = connect()
        client.send_raw(MAGIC + proposal(4, 4) + bytes(12))
        client.take_bytes()
        hello = (m.HELLO, [{"user_agent": "t", "scheme": "none", "patch_bolt": ["utc"]}])
        [(tag, [meta])] = await client.exchange(hello)
        assert tag == SUCCESS and meta["patch_bolt"] == ["utc"]
        assert client.protocol.session is not None
        assert client.protocol.session.codec == ValueCodec(element_ids=False, utc=True)

    run(body)


def test_route_points_every_role_at_the_proxy() -> None:
    async def body() -> None:
        client, _ = await open_session()
        [(tag, [meta])] = await client.exchange((m.ROUTE, [{"address": "x:1"}, [], {}]))
        assert tag == SUCCESS
        rt = meta["rt"]
        assert rt["db"] == "neo4j" and rt["ttl"] > 0
        assert sorted(s["role"] for s in rt["servers"]) == ["READ", "ROUTE", "WRITE"]
        assert all(s["addresses"] == ["query_guard.example:7687"] for s in rt["servers"])
        [(_, [meta])] = await client.exchange((m.ROUTE, [{}, [], {"db": "movies"}]))
        assert meta["rt"]["db"] == "movies"

    run(body)


def test_route_lists_every_advertised_peer_in_every_role() -> None:
    async def body() -> None:
        client, _ = await open_session(advertised=("qg-1:7687", "qg-2:7687"))
        [(tag, [meta])] = await client.exchange((m.ROUTE, [{}, [], {}]))
        assert tag == SUCCESS
        assert all(s["addresses"] == ["qg-1:7687", "qg-2:7687"] for s in meta["rt"]["servers"])

    run(body)


# -- queries ----------------------------------------------------------------------------------


def test_run_pull_streams_records_then_summary() -> None:
    async def body() -> None:
        client, backend = await open_session()
        replies = await client.exchange(
            (m.RUN, ["RETURN $a", {"a": 1, "b": "x"}, {}]), (m.PULL, [{"n": -1}])
        )
        assert replies[0] == (SUCCESS, [{"fields": ["a", "b"], "t_first": 0}])
        assert replies[1] == (RECORD, [[1, "x"]])
        assert replies[2][0] == SUCCESS
        summary = replies[2][1][0]
        assert summary["type"] == "r" and summary["db"] == "neo4j"
        assert [s["gql_status"] for s in summary["statuses"]] == ["00000"]
        assert backend.log[0] == ("run", "RETURN $a", {"a": 1, "b": "x"}, None)

    run(body)


def test_pull_n_asks_the_backend_for_n_records_and_reports_has_more() -> None:
    async def body() -> None:
        client, backend = await open_session()
        await client.exchange((m.RUN, ["ROWS 5", {}, {}]))
        replies = await client.exchange((m.PULL, [{"n": 2}]))
        assert [t for t, _ in replies] == [RECORD, RECORD, SUCCESS]
        assert replies[-1][1] == [{"has_more": True}]
        assert ("fetch", 2) in backend.log
        replies = await client.exchange((m.DISCARD, [{"n": -1}]))
        assert replies[0][0] == SUCCESS and "has_more" not in replies[0][1][0]
        assert backend.log[-1] == ("discard",)
        [(tag, _)] = await client.exchange((m.RUN, ["ROWS 1", {}, {}]))
        assert tag == SUCCESS  # back in READY

    run(body)


def test_pull_in_ready_state_fails_then_ignored_until_reset() -> None:
    async def body() -> None:
        client, _ = await open_session()
        [(tag, [meta])] = await client.exchange((m.PULL, [{"n": -1}]))
        assert tag == FAILURE and meta["neo4j_code"] == "Neo.ClientError.Request.Invalid"
        replies = await client.exchange(
            (m.RUN, ["ROWS 1", {}, {}]), (m.PULL, [{"n": -1}]), (m.BEGIN, [{}]),
            (m.RESET, []), (m.RUN, ["ROWS 1", {}, {}]),
        )
        assert [t for t, _ in replies] == [IGNORED, IGNORED, IGNORED, SUCCESS, SUCCESS]

    run(body)


def test_blocked_query_never_reaches_the_backend() -> None:
    async def body() -> None:
        events: list[dict[str, Any]] = []
        client, backend = await open_session(events=events)
        [(tag, [meta])] = await client.exchange((m.RUN, ["DELETE everything", {}, {}]))
        assert tag == FAILURE
        assert meta["neo4j_code"] == "Neo.ClientError.Security.Forbidden"
        assert meta["message"] == "SEC.WRITE: writes are not allowed"
        assert meta["gql_status"] == "42NFF"
        assert meta["diagnostic_record"]["_classification"] == "CLIENT_ERROR"
        assert backend.log == []
        assert [t for t, _ in await client.exchange((m.PULL, [{"n": -1}]))] == [IGNORED]
        assert [t for t, _ in await client.exchange((m.RESET, []))] == [SUCCESS]
        assert events[0]["action"] == "block" and events[0]["codes"] == ["SEC.WRITE"]
        assert events[0]["final_query"] is None and events[0]["client"] == "127.0.0.1:50000"

    run(body)


@pytest.mark.parametrize(
    ("version", "query", "code", "message"),
    [
        ((4, 4), "MATCH ((n", "Neo.ClientError.Statement.SyntaxError",
         "SYN.PARSE: unexpected '(' (hint: close it)"),
        ((5, 6), "DELETE", "Neo.ClientError.Security.Forbidden",
         "SEC.WRITE: writes are not allowed"),
    ],
)
def test_block_failure_before_57_uses_code_and_message(
    version: tuple[int, int], query: str, code: str, message: str
) -> None:
    async def body() -> None:
        client, _ = await open_session(version)
        [(tag, [meta])] = await client.exchange((m.RUN, [query, {}, {}]))
        assert (tag, meta) == (FAILURE, {"code": code, "message": message})

    run(body)


def test_rewrite_runs_the_new_query_and_reports_findings() -> None:
    async def body() -> None:
        events: list[dict[str, Any]] = []
        for version in ((5, 4), (5, 8)):
            client, backend = await open_session(version, events=events)
            replies = await client.exchange((m.RUN, ["LIMITLESS", {}, {}]), (m.PULL, [{"n": -1}]))
            assert backend.log[0][1] == "ROWS 2"
            summary = replies[-1][1][0]
            if version < (5, 5):
                [note] = summary["notifications"]
                assert note["code"] == "LIM.INJECTED" and note["severity"] == "WARNING"
                assert note["position"] == {"offset": 9, "line": 1, "column": 10}
            else:
                warning, success = summary["statuses"]
                assert warning["neo4j_code"] == "LIM.INJECTED"
                assert warning["gql_status"].startswith("01")
                assert success["gql_status"] == "00000"
        assert events[0]["action"] == "rewrite" and events[0]["final_query"] == "ROWS 2"
        assert events[0]["query"] == "LIMITLESS" and events[0]["codes"] == ["LIM.INJECTED"]

    run(body)


def test_notification_filter_off_hides_findings() -> None:
    async def body() -> None:
        client, _ = await open_session((5, 4))
        run_msg = (m.RUN, ["LIMITLESS", {}, {"notifications_minimum_severity": "OFF"}])
        summary = (await client.exchange(run_msg, (m.PULL, [{"n": -1}])))[-1][1][0]
        assert "notifications" not in summary

    run(body)


def test_backend_errors_fail_cleanly_and_the_connection_recovers() -> None:
    async def body() -> None:
        events: list[dict[str, Any]] = []
        client, _ = await open_session(events=events)
        [(tag, [meta])] = await client.exchange((m.RUN, ["FAIL", {}, {}]))
        assert tag == FAILURE and meta["neo4j_code"] == "Neo.ClientError.Statement.ArithmeticError"
        assert [t for t, _ in await client.exchange((m.RESET, []))] == [SUCCESS]
        [(tag, [meta])] = await client.exchange((m.RUN, ["DOWN", {}, {}]))
        assert meta["neo4j_code"] == "Neo.TransientError.General.DatabaseUnavailable"
        replies = await client.exchange((m.RESET, []), (m.RUN, ["ROWS 1", {}, {}]))
        assert [t for t, _ in replies] == [SUCCESS, SUCCESS]
        assert events[0]["error"] == "Neo.ClientError.Statement.ArithmeticError"

    run(body)


def test_explicit_transaction_with_two_open_results() -> None:
    async def body() -> None:
        client, backend = await open_session()
        begin = (m.BEGIN, [{"db": "movies", "tx_metadata": {"question": "who?"}}])
        replies = await client.exchange(
            begin, (m.RUN, ["ROWS 2", {}, {}]), (m.RUN, ["ROWS 3", {}, {}])
        )
        assert [r[1][0].get("qid") for r in replies] == [None, 0, 1]
        assert backend.log[0] == ("begin", "movies", {"question": "who?"})
        replies = await client.exchange((m.PULL, [{"n": -1, "qid": 0}]))
        assert [t for t, _ in replies] == [RECORD, RECORD, SUCCESS]
        assert replies[-1][1][0]["db"] == "movies"
        replies = await client.exchange((m.PULL, [{"n": 1}]))  # qid -1: the last RUN
        assert replies[0] == (RECORD, [[0]]) and replies[1][1] == [{"has_more": True}]
        replies = await client.exchange((m.DISCARD, [{"n": -1, "qid": 1}]), (m.COMMIT, []))
        assert replies[1] == (SUCCESS, [{"bookmark": "bookmark:1"}])
        assert ("commit",) in backend.log

    run(body)


def test_blocked_query_in_transaction_rolls_it_back() -> None:
    async def body() -> None:
        client, backend = await open_session()
        replies = await client.exchange((m.BEGIN, [{}]), (m.RUN, ["DELETE x", {}, {}]))
        assert [t for t, _ in replies] == [SUCCESS, FAILURE]
        assert backend.log[-1] == ("rollback",)
        replies = await client.exchange((m.COMMIT, []), (m.RESET, []), (m.BEGIN, [{}]))
        assert [t for t, _ in replies] == [IGNORED, SUCCESS, SUCCESS]

    run(body)


def test_reset_interrupts_requests_queued_before_it() -> None:
    async def body() -> None:
        client, backend = await open_session()
        replies = await client.exchange(
            (m.RUN, ["ROWS 3", {}, {}]), (m.PULL, [{"n": -1}]), (m.RESET, [])
        )
        assert [t for t, _ in replies] == [IGNORED, IGNORED, SUCCESS]
        assert backend.log == []
        assert client.protocol.session is not None
        assert client.protocol.session.state == "READY"

    run(body)


def test_unrepresentable_parameter_is_a_failure_not_a_disconnect() -> None:
    async def body() -> None:
        client, backend = await open_session()
        bad_date = Structure(0x44, ["2024-01-02"])
        [(tag, [meta])] = await client.exchange((m.RUN, ["RETURN $d", {"d": bad_date}, {}]))
        assert tag == FAILURE and "invalid temporal structure" in meta["message"]
        good = (m.RUN, ["RETURN $d", {"d": dt.date(2024, 1, 2)}, {}])
        replies = await client.exchange((m.RESET, []), good)
        assert [t for t, _ in replies] == [SUCCESS, SUCCESS]
        # kept as the client sent it (days since the epoch), not turned into a Python date
        assert backend.log[-1][2] == {"d": Temporal(0x44, (19724,))}

    run(body)


def test_oversized_message_closes_only_that_connection() -> None:
    async def body() -> None:
        client, _ = await open_session(max_message=1000)
        run_msg = bytearray()
        m.encode_message(run_msg, m.RUN, ["x" * 5000, {}, {}], CODEC)
        client.send_raw(bytes(run_msg))
        assert client.transport.aborted

    run(body)


def test_unknown_message_signature_closes_the_connection() -> None:
    async def body() -> None:
        client, _ = await open_session()
        client.send_raw(b"\x00\x02\xb0\x55\x00\x00")
        await asyncio.sleep(0.01)
        assert client.transport.aborted

    run(body)


def test_write_query_summary_carries_counters() -> None:
    async def body() -> None:
        client, _ = await open_session((5, 0))
        replies = await client.exchange((m.RUN, ["WRITE", {}, {}]), (m.PULL, [{"n": -1}]))
        assert replies[0] == (SUCCESS, [{"fields": [], "t_first": 0}])
        summary = replies[1][1][0]
        assert summary["stats"] == {"nodes-created": 1}
        assert "notifications" not in summary and "statuses" not in summary

    run(body)


def test_pipelined_backlog_pauses_reading_until_handled() -> None:
    async def body() -> None:
        client, _ = await open_session()
        client.send(*[(m.TELEMETRY, [1])] * 300)
        assert not client.transport.reading
        replies = await client.receive(300)
        assert {t for t, _ in replies} == {SUCCESS}
        assert client.transport.reading

    run(body)
