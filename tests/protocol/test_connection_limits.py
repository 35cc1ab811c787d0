"""Connection limits of the Bolt front (`[limits] idle_timeout_seconds`, `max_connections`,
`max_connections_per_client`): raw Bolt clients over real sockets against a `BoltFrontend`
guarding the session FalkorDB, and the neo4j driver for the connection that stays busy."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator

import pytest

from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.build import build_guard
from query_guard.run.limits import Limits
from query_guard.server import cypher_guard
from query_guard.wire import bolt_messages as m
from query_guard.wire.bolt_handshake import client_request
from query_guard.wire.bolt_values import ValueCodec
from tests.background_loop import BoltProxy

BOLT_44 = client_request(((4, 4, 0),))
IDLE = 2.0


def limited_front(url: str, limits: Limits) -> BoltProxy:
    """The Bolt front with `limits`, guarding the session FalkorDB."""
    guard = cypher_guard(build_guard(entry_points=False))
    return BoltProxy(guard, FalkorDBBackend(url), start_backend=True, limits=limits)


@pytest.fixture(scope="module")
def idle_front(movies_url: str) -> Iterator[BoltProxy]:
    front = limited_front(movies_url, Limits(idle_timeout=IDLE, max_connections_per_client=600))
    yield front
    front.stop()


def hello() -> bytes:
    out = bytearray()
    extra = {"user_agent": "slowloris/1", "scheme": "basic", "principal": "u", "credentials": "p"}
    m.encode_message(out, m.HELLO, [extra], ValueCodec(element_ids=False, utc=False))
    return bytes(out)


async def logged_in(port: int, source: str = "127.0.0.1") -> tuple[asyncio.StreamReader, ...]:
    """A raw Bolt 4.4 connection past HELLO: (reader, writer)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(BOLT_44 + hello())
    await writer.drain()
    assert await reader.readexactly(4) == b"\x00\x00\x04\x04"
    size = int.from_bytes(await reader.readexactly(2), "big")
    body = await reader.readexactly(size + 2)
    assert body[1] == m.SUCCESS, "HELLO should succeed"
    return reader, writer  # type: ignore[return-value]


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    """Does the server close the connection within `seconds`?"""
    try:
        data = await asyncio.wait_for(reader.read(1024), seconds)
    except TimeoutError:
        return False
    except ConnectionError:
        return True
    return data == b""


def test_500_slowloris_connections_are_closed_by_the_idle_timeout(
    idle_front: BoltProxy, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="query_guard.bolt")

    async def attack() -> int:
        conns: list[tuple[asyncio.StreamReader, ...]] = []
        for _ in range(10):  # in bursts of 50: a loaded machine still accepts them in time
            batch = await asyncio.gather(*(logged_in(idle_front.port) for _ in range(50)))
            # each starts a RUN whose chunk says 64 bytes, then drips one byte at a time
            for _, writer in batch:
                writer.write(b"\x00\x40\xb3\x10")
            conns += batch

        async def drip(writer: asyncio.StreamWriter) -> None:
            for _ in range(40):
                await asyncio.sleep(0.5)
                if writer.is_closing():
                    return
                try:
                    writer.write(b"\x80")
                except ConnectionError:
                    return

        drips = [asyncio.create_task(drip(w)) for _, w in conns]
        closed = await asyncio.gather(*(closed_within(r, 60) for r, _ in conns))
        for task in drips:
            task.cancel()
        for _, writer in conns:
            writer.close()
        return sum(closed)

    assert asyncio.run(attack()) == 500
    # closed by the idle timeout (the half-sent message does not count as activity)
    reasons = [r.getMessage() for r in caplog.records if "closed: idle for" in r.getMessage()]
    assert len(reasons) == 500 and "bytes of an unfinished message" in reasons[0]
    assert _eventually(lambda: idle_front.frontend.connections == 0)


def test_an_active_connection_outlives_the_idle_timeout(idle_front: BoltProxy) -> None:
    """A client that keeps sending queries is never idle, however long it stays."""
    codec = ValueCodec(element_ids=False, utc=False)
    request = bytearray()
    m.encode_message(request, m.RUN, ["RETURN 1 AS one", {}, {}], codec)
    m.encode_message(request, m.PULL, [{"n": -1}], codec)

    async def chat() -> int:
        reader, writer = await logged_in(idle_front.port)
        answered = 0
        started = time.monotonic()
        while time.monotonic() - started < IDLE * 2:
            writer.write(bytes(request))
            replies = [await _message(reader) for _ in range(3)]  # SUCCESS, RECORD, SUCCESS
            assert [r[1] for r in replies] == [m.SUCCESS, m.RECORD, m.SUCCESS]
            answered += 1
            await asyncio.sleep(IDLE / 4)
        writer.close()
        return answered

    assert asyncio.run(chat()) >= 6


async def _message(reader: asyncio.StreamReader) -> bytes:
    body = b""
    while True:
        size = int.from_bytes(await reader.readexactly(2), "big")
        if size == 0:
            return body
        body += await reader.readexactly(size)


def test_connections_beyond_the_caps_are_refused(
    movies_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    front = limited_front(movies_url, Limits(max_connections=6, max_connections_per_client=4))
    caplog.set_level(logging.WARNING, logger="query_guard.bolt")

    async def connect_all() -> tuple[list[bool], list[bool], bool]:
        first = [await logged_in(front.port) for _ in range(4)]
        reader, _ = await asyncio.open_connection("127.0.0.1", front.port)
        per_client = await closed_within(reader, 10)
        second = [await logged_in(front.port, "127.0.0.2") for _ in range(2)]
        reader, _ = await asyncio.open_connection(
            "127.0.0.1", front.port, local_addr=("127.0.0.3", 0)
        )
        total = await closed_within(reader, 10)
        alive = [not await closed_within(r, 0.2) for r, _ in first + second]
        for _, writer in first + second:
            writer.close()
        return [per_client], alive, total

    try:
        per_client, alive, total = asyncio.run(connect_all())
    finally:
        front.stop()
    assert per_client == [True] and total and all(alive)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "max_connections_per_client" in logged and "[limits] max_connections)" in logged


def _eventually(check: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False
