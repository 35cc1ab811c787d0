"""Security round 3's protocol-level attacks (issue 19) against one `serve` (embedded FalkorDB,
graphersal, SQLite): Bolt messages pipelined behind a refused write, unknown and malformed
messages; HTTP bodies in other Content-Types, foreign Origin and Host headers, duplicate JSON
keys, deep and broken JSON; Gremlin WebSocket frames that are no request, scripts and bytecode
that write, sessions. Every one is refused, the database is unchanged (read directly) and the
proxy still answers an ordinary read on the same front."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import uuid
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from query_guard.wire import bolt_messages as m
from query_guard.wire.packstream import Structure, packb
from tests.fingerprint import Fingerprint, falkordb_fingerprint

READ = "MATCH (m:Movie {title: 'The Matrix'}) RETURN m.released AS year"
WRITE = "MATCH (n) DETACH DELETE n"
YEAR = b"\xc9\x07\xcf"  # 1999 in PackStream (INT_16), the READ's answer


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyThread]:
    data = tmp_path_factory.mktemp("round3-protocol")
    config = parse_config({
        "server": {"bolt": "127.0.0.1:0", "http": "127.0.0.1:0", "gremlin": "127.0.0.1:0",
                   "data_dir": str(data)},
        "audit": {"path": str(data / "audit.jsonl")},
    })  # fmt: skip
    with ProxyThread(config) as running:
        yield running


def _graph(proxy: ProxyThread) -> tuple[Fingerprint, tuple[int, int]]:
    """The FalkorDB graph and graphersal's vertex/edge counts, read directly."""
    direct = FalkorDBBackend(proxy.server.embedded.url)

    async def go() -> Fingerprint:
        await direct.start()
        try:
            return await falkordb_fingerprint(direct, direct.graph)
        finally:
            await direct.close()

    graph = proxy.server.gremlin_service.backend.graph
    counts = (graph.execute("g.V().count().to_list()")[0],
              graph.execute("g.E().count().to_list()")[0])  # fmt: skip
    return proxy.call(go(), timeout=60), counts


# ---------------------------------------------------------------------- Bolt


def _bolt_messages(proxy: ProxyThread, requests: list[tuple[int, list[Any]]]) -> list[bytes]:
    """Handshake, HELLO + LOGON (answered first), then `requests` in ONE write; the replies'
    bodies."""
    host, port = proxy.address.rsplit(":", 1)
    hello = {"user_agent": "redteam/1.0", "bolt_agent": {"product": "redteam/1.0"}}
    login = bytearray(b"\x60\x60\xb0\x17" + bytes([0, 0, 4, 5]) + bytes(12))
    for tag, fields in [(m.HELLO, [hello]), (m.LOGON, [{"scheme": "none"}])]:
        m.frame(login, packb(Structure(tag, fields)))
    batch = bytearray()
    for tag, fields in requests:
        m.frame(batch, packb(Structure(tag, fields)))
    replies: list[bytes] = []
    dechunker = m.Dechunker()
    with socket.create_connection((host, int(port)), timeout=15) as sock:

        def read_until(count: int) -> None:
            while len(replies) < count:
                data = sock.recv(65536)
                if not data:
                    return
                replies.extend(dechunker.feed(data))

        sock.sendall(bytes(login))
        assert len(sock.recv(4)) == 4
        read_until(2)
        sock.sendall(bytes(batch))
        with contextlib.suppress(TimeoutError):
            read_until(2 + len(requests))
    return replies


BOLT_ATTACKS: dict[str, list[tuple[int, list[Any]]]] = {
    # a write pipelined behind a read in one TCP write (RESET would interrupt what precedes it)
    "pipelined-write": [(m.RUN, [READ, {}, {}]), (m.PULL, [{"n": -1}]),
                        (m.RUN, [WRITE, {}, {"mode": "w"}]), (m.PULL, [{"n": -1}])],
    "begin-system-write": [(m.BEGIN, [{"db": "system", "mode": "w"}]),
                           (m.RUN, ["CREATE (:Pwned)", {}, {}]), (m.PULL, [{"n": -1}])],
    "query-as-bytes": [(m.RUN, [WRITE.encode(), {}, {}]), (m.PULL, [{"n": -1}])],
    "extra-field": [(m.RUN, [WRITE, {}, {}, "extra field"]), (m.PULL, [{"n": -1}])],
    "node-as-parameter": [(m.RUN, ["CREATE (:Pwned {x: $x})",
                                   {"x": Structure(0x4E, [1, [], {}])}, {}]),
                          (m.PULL, [{"n": -1}])],
    "unknown-message": [(0x55, ["x"]), (m.RUN, [WRITE, {}, {}]), (m.PULL, [{"n": -1}])],
    "commit-without-begin": [(m.RUN, [WRITE, {}, {"mode": "w"}]), (m.COMMIT, [])],
}  # fmt: skip


@pytest.mark.parametrize("name", list(BOLT_ATTACKS))
def test_bolt_pipelined_and_malformed_messages_are_refused(proxy: ProxyThread, name: str) -> None:
    before = _graph(proxy)
    replies = _bolt_messages(proxy, BOLT_ATTACKS[name])
    assert replies[0][1] == replies[1][1] == m.SUCCESS  # HELLO, LOGON
    answers = replies[2:]
    # refused with a FAILURE, or (a message Bolt does not have) the connection closed
    assert any(r[1] == m.FAILURE for r in answers) or (name == "unknown-message" and not answers)
    if name == "pipelined-write":
        text = b"".join(answers)
        assert YEAR in text and b"SEC.WRITE" in text, text
    assert _graph(proxy) == before
    # the proxy still answers on a fresh connection
    again = _bolt_messages(proxy, [(m.RUN, [READ, {}, {}]), (m.PULL, [{"n": -1}])])
    assert YEAR in b"".join(again)


# ---------------------------------------------------------------------- HTTP


async def _http(proxy: ProxyThread, path: str, data: bytes, headers: dict[str, str]) -> int:
    base = f"http://127.0.0.1:{proxy.server.http.port}"
    async with aiohttp.ClientSession() as session, \
            session.post(base + path, data=data, headers=headers) as response:  # fmt: skip
        await response.read()
        return response.status


HTTP_ATTACKS = [
    ("/v1/query", {"Content-Type": "text/plain"}, {"query": WRITE}),
    ("/v1/query", {"Content-Type": "application/x-www-form-urlencoded"}, {"query": WRITE}),
    ("/v1/query", {"Content-Type": "multipart/form-data; boundary=x"}, {"query": WRITE}),
    ("/v1/query", {"Content-Type": "text/plain; charset=application/json"}, {"query": WRITE}),
    ("/v1/query", {"Content-Type": "application/json", "Origin": "http://evil.example"},
     {"query": READ}),
    ("/v1/query", {"Content-Type": "application/json", "Origin": "null"}, {"query": READ}),
    ("/v1/query", {"Content-Type": "application/json", "Host": "evil.example"}, {"query": READ}),
    ("/v1/query", {"Content-Type": "application/json", "Host": "127.0.0.1.evil.example"},
     {"query": READ}),
    ("/mcp", {"Content-Type": "text/plain", "Accept": "application/json, text/event-stream"},
     {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    ("/mcp", {"Content-Type": "application/json", "Origin": "http://evil.example",
              "Accept": "application/json, text/event-stream"},
     {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    ("/db/neo4j/query/v2", {"Content-Type": "text/plain"}, {"statement": WRITE}),
    ("/db/neo4j/tx/commit", {"Content-Type": "text/plain"},
     {"statements": [{"statement": WRITE}]}),
]  # fmt: skip


@pytest.mark.parametrize(("path", "headers", "body"), HTTP_ATTACKS)
def test_http_cross_site_and_header_tricks_are_refused(
    proxy: ProxyThread, path: str, headers: dict[str, str], body: Any
) -> None:
    before = _graph(proxy)
    status = asyncio.run(_http(proxy, path, json.dumps(body).encode(), headers))
    assert status in (403, 415, 421), status
    assert _graph(proxy) == before
    ok = asyncio.run(_http(proxy, "/v1/query", json.dumps({"query": READ}).encode(),
                           {"Content-Type": "application/json"}))  # fmt: skip
    assert ok == 200


@pytest.mark.parametrize(
    "data",
    [
        b'{"query": "' + READ.encode() + b'", "query": "' + WRITE.encode() + b'"}',
        b'{"query": "' + WRITE.encode() + b'", "language": "cypher", "language": "sql"}',
        b'{"query": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"query": "MATCH (n) RETURN n", "parameters": ' + b'{"a":' * 3000 + b"1" + b"}" * 3001,
        b"\xff\xfe\x00{",
        b'{"query": "\\ud800 DETACH DELETE n"}',
    ],
    ids=["duplicate-key-write-last", "duplicate-language", "deep-array", "deep-parameters",
         "not-utf8", "lone-surrogate"],
)  # fmt: skip
def test_http_bodies_that_hide_or_break_are_refused(proxy: ProxyThread, data: bytes) -> None:
    before = _graph(proxy)
    status = asyncio.run(_http(proxy, "/v1/query", data, {"Content-Type": "application/json"}))
    assert status in (400, 413), status
    assert _graph(proxy) == before
    ok = asyncio.run(_http(proxy, "/v1/query", json.dumps({"query": READ}).encode(),
                           {"Content-Type": "application/json"}))  # fmt: skip
    assert ok == 200


# ---------------------------------------------------------------------- Gremlin WebSocket

MIME = b"application/vnd.gremlin-v3.0+json"


def _frame(op: str, args: dict[str, Any], processor: str = "") -> bytes:
    body = {"requestId": {"@type": "g:UUID", "@value": str(uuid.uuid4())}, "op": op,
            "processor": processor, "args": args}  # fmt: skip
    return bytes([len(MIME)]) + MIME + json.dumps(body).encode()


GREMLIN_FRAMES: list[tuple[str, bytes | str]] = [
    ("text-frame", json.dumps({"op": "eval", "args": {"gremlin": "g.V().drop()"}})),
    ("garbage", b"\x00\xff\xfe garbage"),
    ("mime-too-long", bytes([255]) + b"x" * 10),
    ("unknown-mime", bytes([10]) + b"text/plain" + b"g.V().drop()"),
    ("eval-drop", _frame("eval", {"gremlin": "g.V('case-1').drop()",
                                  "language": "gremlin-groovy"})),
    ("eval-groovy", _frame("eval", {"gremlin": "graph.close(); 1",
                                    "language": "gremlin-groovy"})),
    ("eval-lang-java", _frame("eval", {"gremlin": "g.V('case-1').drop()", "language": "java"})),
    ("session-eval", _frame("eval", {"gremlin": "g.V('case-1').drop()", "session": "s1"},
                            "session")),
    ("bytecode-drop", _frame("bytecode", {"gremlin": {"@type": "g:Bytecode", "@value": {
        "step": [["V", "case-1"], ["drop"]]}}, "aliases": {"g": "g"}}, "traversal")),
    ("bytecode-source-write", _frame("bytecode", {"gremlin": {"@type": "g:Bytecode", "@value": {
        "step": [["addV", "pwned"]]}}, "aliases": {"g": "g"}}, "traversal")),
    ("alias-other-graph", _frame("eval", {"gremlin": "g.V('case-1').drop()",
                                          "aliases": {"g": "graph"}})),
    ("close-op", _frame("close", {"session": "s1"}, "session")),
]  # fmt: skip


@pytest.mark.parametrize(("name", "frame"), GREMLIN_FRAMES, ids=[n for n, _ in GREMLIN_FRAMES])
def test_gremlin_websocket_frames_that_write_or_break_are_refused(
    proxy: ProxyThread, name: str, frame: bytes | str
) -> None:
    before = _graph(proxy)
    url = f"ws://127.0.0.1:{proxy.server.gremlin.port}/gremlin"

    async def go() -> tuple[list[str], str]:
        seen: list[str] = []
        async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
            if isinstance(frame, str):
                await ws.send_str(frame)
            else:
                await ws.send_bytes(frame)
            try:
                async with asyncio.timeout(10):
                    msg = await ws.receive()
                    seen.append(str(msg.data)[:400])
            except TimeoutError:
                seen.append("no reply")
        # a fresh connection still answers an ordinary read
        async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
            await ws.send_bytes(_frame("eval", {"gremlin": "g.V('case-1').values('status')"}))
            async with asyncio.timeout(15):
                reply = await ws.receive()
        return seen, str(reply.data)

    seen, reply = asyncio.run(go())
    assert '"code": 200' not in seen[0] and '"code":200' not in seen[0], seen  # not served
    assert '"code": 200' in reply or '"code":200' in reply, reply
    assert _graph(proxy) == before
