"""The RESP2 client under the FalkorDB backend: reply framing however the bytes are split,
command encoding, pipelined replies, and a pool that stays bounded and recovers."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.backends.resp import (
    RespConnection,
    RespConnectionError,
    RespError,
    RespParser,
    RespPool,
    RespProtocolError,
    encode_command,
)

# ---------------------------------------------------------------------- framing

tricky = ["", "\r\n", "a\r\nb", "\r", "\n", "x\r", "\r\r\n\n", "$3", "*1\r\n:1"]
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30) | st.sampled_from(tricky)
values = st.recursive(
    st.none() | st.integers(-(2**63), 2**63 - 1) | texts | st.builds(RespError, texts),
    lambda inner: st.lists(inner, max_size=5),
    max_leaves=40,
)


def encode_reply(value: Any, simple: bool = False) -> bytes:
    """The RESP2 bytes a server sends for `value` (the test's own, independent encoder)."""
    if value is None:
        return b"$-1\r\n"
    if isinstance(value, RespError):
        return b"-" + str(value).replace("\r", " ").replace("\n", " ").encode() + b"\r\n"
    if isinstance(value, int):
        return b":%d\r\n" % value
    if isinstance(value, str):
        data = value.encode()
        return b"$%d\r\n%b\r\n" % (len(data), data)
    return b"*%d\r\n" % len(value) + b"".join(encode_reply(v) for v in value)


def normal(value: Any) -> Any:
    """Errors compare by message (as the encoder flattened it)."""
    if isinstance(value, RespError):
        return ("error", str(value).replace("\r", " ").replace("\n", " "))
    if isinstance(value, list):
        return [normal(v) for v in value]
    return value


@settings(max_examples=300, deadline=None)
@given(replies=st.lists(values, min_size=1, max_size=4), cuts=st.lists(st.integers(0, 400)))
def test_replies_parse_the_same_however_the_bytes_are_split(
    replies: list[Any], cuts: list[int]
) -> None:
    data = b"".join(encode_reply(r) for r in replies)
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    parser, got = RespParser(), []
    for start, end in itertools.pairwise(points):
        got += parser.feed(data[start:end])
    assert normal(got) == normal(replies)


def test_byte_at_a_time_and_big_strings() -> None:
    big = "x\r\n" * 50_000
    data = encode_reply([big, 1, [None, "é"]]) + b"+OK\r\n"
    parser, got = RespParser(), []
    for i in range(0, len(data), 7):
        got += parser.feed(data[i : i + 7])
    assert got == [[big, 1, [None, "é"]], "OK"]
    assert RespParser().feed(b"*0\r\n*-1\r\n") == [[], None]


def test_garbage_is_a_protocol_error() -> None:
    with pytest.raises(RespProtocolError):
        RespParser().feed(b"?what\r\n")
    with pytest.raises(RespProtocolError):
        RespParser().feed(b"$1\r\nabc\r\n")  # longer than announced


@given(st.lists(texts | st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=6))
def test_commands_are_arrays_of_bulk_strings(args: list[Any]) -> None:
    (parsed,) = RespParser().feed(encode_command(args))
    assert parsed == [str(a) for a in args]
    with pytest.raises(TypeError):
        encode_command(["SET", 1.5])


# ---------------------------------------------------------------------- connection


class FakeTransport:
    def __init__(self) -> None:
        self.written = b""
        self.aborted = False

    def write(self, data: bytes) -> None:
        self.written += data

    def abort(self) -> None:
        self.aborted = True

    def is_closing(self) -> bool:
        return self.aborted

    def close(self) -> None:
        self.aborted = True


def test_pipelined_replies_resolve_in_order_and_loss_fails_the_rest() -> None:
    async def main() -> None:
        conn = RespConnection()
        transport = FakeTransport()
        conn.connection_made(transport)  # type: ignore[arg-type]
        commands = encode_command(["PING"]) + encode_command(["GET", "k"]) + encode_command("X")
        task = asyncio.ensure_future(conn.request(commands, 3, None))
        await asyncio.sleep(0)
        assert transport.written == commands
        conn.data_received(b"+PONG\r\n$1\r")
        conn.data_received(b"\nv\r\n-ERR no\r\n")
        pong, value, error = await task
        assert (pong, value, str(error)) == ("PONG", "v", "ERR no")
        lost = asyncio.ensure_future(conn.command("PING"))
        await asyncio.sleep(0)
        conn.connection_lost(None)
        with pytest.raises(RespConnectionError):
            await lost
        with pytest.raises(RespConnectionError):
            await conn.command("PING")

    asyncio.run(main())


def test_a_timeout_or_cancel_drops_the_connection() -> None:
    async def main() -> None:
        conn = RespConnection()
        transport = FakeTransport()
        conn.connection_made(transport)  # type: ignore[arg-type]
        with pytest.raises(RespConnectionError, match="no reply within"):
            await conn.command("BLPOP", "k", timeout=0.01)
        assert transport.aborted and conn.closed
        other = RespConnection()
        other.connection_made(FakeTransport())  # type: ignore[arg-type]
        task = asyncio.ensure_future(other.command("PING"))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert other.closed  # its late reply must not reach the next command

    asyncio.run(main())


# ---------------------------------------------------------------------- pool


class SlowPingServer:
    """PING answered after `delay` seconds; counts connections and the most open at once."""

    def __init__(self, delay: float = 0.005) -> None:
        self.delay = delay
        self.open = self.peak = self.accepted = 0
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open += 1
        self.accepted += 1
        self.peak = max(self.peak, self.open)
        self.writers.add(writer)
        parser = RespParser()
        try:
            while data := await reader.read(4096):
                for command in parser.feed(data):
                    await asyncio.sleep(self.delay)
                    writer.write(b"+PONG\r\n" if command == ["PING"] else b"-ERR unknown\r\n")
        except ConnectionError:
            pass
        finally:
            self.open -= 1
            self.writers.discard(writer)
            writer.close()

    async def start(self, port: int = 0) -> int:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", port)
        return self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.writers):  # (Python 3.11 has no Server.close_clients)
            writer.transport.abort()
        await self.server.wait_closed()


def test_pool_stays_bounded_and_reuses_connections() -> None:
    async def main() -> None:
        server = SlowPingServer()
        pool = RespPool("127.0.0.1", await server.start(), max_connections=3)
        assert await asyncio.gather(*(pool.execute("PING") for _ in range(30))) == ["PONG"] * 30
        assert server.peak <= 3 and server.accepted == 3
        with pytest.raises(RespError, match="unknown"):
            await pool.execute("NOPE")
        await pool.close()
        await server.stop()

    asyncio.run(main())


def test_pool_wait_times_out_and_pool_recovers_after_a_restart() -> None:
    async def main() -> None:
        server = SlowPingServer(delay=0.3)
        port = await server.start()
        pool = RespPool("127.0.0.1", port, max_connections=1, wait_timeout=0.05)
        busy = asyncio.ensure_future(pool.execute("PING"))
        await asyncio.sleep(0.01)
        with pytest.raises(RespConnectionError, match="no connection came free"):
            await pool.execute("PING")
        assert await busy == "PONG"
        await server.stop()
        with pytest.raises(RespConnectionError):
            await pool.execute("PING")
        server.delay = 0
        await server.start(port)
        assert await pool.execute("PING") == "PONG"
        await pool.close()
        await server.stop()

    asyncio.run(main())


def test_a_refused_login_is_a_connection_failure() -> None:
    async def main() -> None:
        server = SlowPingServer(delay=0)  # answers AUTH with an error
        pool = RespPool("127.0.0.1", await server.start(), username="u", password="p")
        with pytest.raises(RespConnectionError, match="authentication failed"):
            await pool.execute("PING")
        assert pool._open == 0  # the slot is free again
        await pool.close()
        await server.stop()

    asyncio.run(main())
