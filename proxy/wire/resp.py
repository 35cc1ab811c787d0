"""The FalkorDB backend's RESP2 transport: command encoding, connections as `asyncio.Protocol`s
whose replies are parsed by hiredis (C), and a bounded pool.

Why not redis-py's asyncio client (the transport for a while): per command it pays for a
blocking pool's condition, a retry wrapper, an `asyncio.timeout` around every read and event
dispatch — about 100 µs on a one-row reply, a fifth of the proxy's whole cost on a small
read (`benchmarks/resp_client.py`). Our previous pure-Python parser was the other way round:
cheap per command, 3x slower on big or entity-laden replies. Here the connection handling is
ours (one write per command, one future per reply, one timer per command) and the parsing is
hiredis's, so both cases are fast. Bulk strings come back as `str` (UTF-8, bad bytes replaced).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import hiredis


class RespError(Exception):
    """An error reply (`-ERR …`). Raised for a top-level error reply; inside an array it is
    a value of the array (FalkorDB puts runtime errors after a result's header)."""


class RespConnectionError(Exception):
    """The server could not be reached, closed the connection, or did not answer in time."""


class RespTimeout(RespConnectionError):
    """No reply within the read timeout (the connection is dropped)."""


class RespProtocolError(RespConnectionError):
    """The server sent bytes that are not RESP2 (the connection is dropped)."""


# ---------------------------------------------------------------------- codec


def encode_command(args: tuple[Any, ...] | list[Any]) -> bytes:
    """`*n` array of bulk strings; str / bytes / int arguments. Short str arguments (command
    names, keys, flags) are encoded once and remembered."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        if type(arg) is str:
            cached = _BULK_CACHE.get(arg)
            if cached is None:
                cached = _bulk(arg.encode())
                if len(arg) <= 64 and len(_BULK_CACHE) < 4096:
                    _BULK_CACHE[arg] = cached
            parts.append(cached)
        elif isinstance(arg, bytes | str):
            parts.append(_bulk(arg if isinstance(arg, bytes) else arg.encode()))
        elif isinstance(arg, int) and not isinstance(arg, bool):
            parts.append(_bulk(b"%d" % arg))
        else:
            raise TypeError(f"RESP arguments are str, bytes or int, not {type(arg).__name__}")
    return b"".join(parts)


def command_around(args: tuple[Any, ...], at: int) -> tuple[bytes, bytes]:
    """`encode_command(args)` split around argument `at`, left out: the fixed parts of a
    command of which one argument changes per call (`before + bulk(value) + after`)."""
    before, after = encode_command(args[:at]), encode_command(args[at + 1 :])
    header = b"*%d\r\n" % len(args)
    return header + before[before.index(b"\n") + 1 :], after[after.index(b"\n") + 1 :]


def bulk(value: str) -> bytes:
    """One str argument as a RESP bulk string."""
    return _bulk(value.encode())


def _bulk(data: bytes) -> bytes:
    return b"$%d\r\n%b\r\n" % (len(data), data)


_BULK_CACHE: dict[str, bytes] = {}


# ---------------------------------------------------------------------- connection


def _raised(reply: Any) -> Any:
    """The reply, or its error raised."""
    if isinstance(reply, RespError):
        raise reply
    return reply


class ReplyReader(Protocol):
    """hiredis.Reader's interface: `feed` bytes, `gets` the next whole reply or False.
    Error replies come back as `RespError` values; bytes that are not RESP2 raise
    `RespProtocolError`."""

    def feed(self, data: bytes, /) -> None: ...

    def gets(self) -> Any: ...


def hiredis_reader() -> ReplyReader:
    return hiredis.Reader(  # type: ignore[no-any-return]
        replyError=RespError, protocolError=RespProtocolError, encoding="utf-8",
        errors="replace",
    )  # fmt: skip


class RespConnection(asyncio.Protocol):
    """One server connection; replies resolve the pending commands in order (pipelining).
    `reader` makes its reply parser (hiredis unless a benchmark compares another)."""

    def __init__(self, reader: Callable[[], ReplyReader] = hiredis_reader) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._parser = reader()
        self._waiting: deque[asyncio.Future[Any]] = deque()
        self._loop = asyncio.get_running_loop()
        self._lost: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        parser, waiting = self._parser, self._waiting
        parser.feed(data)
        while True:
            try:
                reply = parser.gets()
            except RespProtocolError as exc:
                self.abort(RespProtocolError(f"invalid reply from the server: {exc}"))
                return
            if reply is False:  # no complete reply buffered
                return
            if not waiting:
                self.abort(RespProtocolError("a reply nobody asked for"))
                return
            future = waiting.popleft()
            if not future.done():
                future.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        error = self._lost or RespConnectionError(f"connection lost: {exc or 'closed by peer'}")
        while self._waiting:
            future = self._waiting.popleft()
            if not future.done():
                future.set_exception(error)

    def abort(self, error: Exception) -> None:
        """Drop the connection; pending commands fail with `error`."""
        if self._lost is None:
            self._lost = error
        self.closed = True
        if self.transport is not None:
            self.transport.abort()
        self.connection_lost(None)

    async def command(self, *args: Any, timeout: float | None = None) -> Any:
        """Send one command and wait for its reply; error replies raise `RespError`."""
        return _raised((await self.request(encode_command(args), 1, timeout))[0])

    async def request(self, data: bytes, replies: int, timeout: float | None) -> list[Any]:
        """Write encoded commands in one go and wait for their `replies`, in order.

        A timeout or a cancelled wait drops the connection: its replies would otherwise
        arrive for whoever sends the next command.
        """
        if self.closed or self.transport is None:
            raise self._lost or RespConnectionError("connection is closed")
        create = self._loop.create_future
        futures = [create()] if replies == 1 else [create() for _ in range(replies)]
        self._waiting.extend(futures)
        self.transport.write(data)
        timer = None
        if timeout is not None:
            timer = self._loop.call_later(timeout, self._timed_out, timeout)
        try:
            if replies == 1:
                return [await futures[0]]
            return [await future for future in futures]
        except asyncio.CancelledError:
            self.abort(RespConnectionError("a command was cancelled mid-reply"))
            raise
        finally:
            if timer is not None:
                timer.cancel()

    def _timed_out(self, timeout: float) -> None:
        self.abort(RespTimeout(f"no reply within {timeout:g} s"))

    def close(self) -> None:
        self.closed = True
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()


async def connect(
    host: str, port: int, *, username: str | None = None, password: str | None = None,
    timeout: float | None = None, reader: Callable[[], ReplyReader] = hiredis_reader,
) -> RespConnection:  # fmt: skip
    """Open (and authenticate) one connection; failures raise `RespConnectionError`."""
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(timeout):
            _, conn = await loop.create_connection(lambda: RespConnection(reader), host, port)
    except (OSError, TimeoutError) as exc:
        raise RespConnectionError(f"cannot connect: {exc or 'timed out'}") from exc
    if password is not None:
        auth = ("AUTH", username, password) if username else ("AUTH", password)
        try:
            await conn.command(*auth, timeout=timeout)
        except BaseException as exc:
            conn.close()
            if isinstance(exc, RespError):  # a refused login is a connection failure
                raise RespConnectionError(f"authentication failed: {exc}") from exc
            raise
    return conn


# ---------------------------------------------------------------------- pool


class RespPool:
    """At most `max_connections` connections, opened on demand and reused; a caller waits up
    to `wait_timeout` seconds for one to come free. Dead connections are dropped, so the
    pool recovers by itself once the server is back."""

    def __init__(
        self, host: str, port: int, *, username: str | None = None,
        password: str | None = None, max_connections: int = 16,
        connect_timeout: float | None = 2.0, read_timeout: float | None = None,
        wait_timeout: float = 30.0, reader: Callable[[], ReplyReader] = hiredis_reader,
    ) -> None:  # fmt: skip
        self.host, self.port, self.max_connections = host, port, max(1, max_connections)
        self._login: dict[str, Any] = {
            "username": username, "password": password, "timeout": connect_timeout,
            "reader": reader,
        }  # fmt: skip
        self.read_timeout, self.wait_timeout = read_timeout, wait_timeout
        self._idle: list[RespConnection] = []
        self._open = 0  # connections idle, lent out, or being opened
        self._waiters: deque[asyncio.Future[RespConnection | None]] = deque()
        self._closing = False

    async def acquire(self) -> RespConnection:
        idle = self._idle
        while idle:
            conn = idle.pop()
            if not conn.closed:
                return conn
            self._open -= 1
        if self._open < self.max_connections:
            self._open += 1
        else:
            handed = await self._wait()
            if handed is not None:
                return handed
            # else a dead connection's slot was passed on to us: open a new one in it
        try:
            return await connect(self.host, self.port, **self._login)
        except BaseException:
            self._free_slot()
            raise

    async def _wait(self) -> RespConnection | None:
        """Queue for the next released connection (None: a free slot to open one in)."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[RespConnection | None] = loop.create_future()
        self._waiters.append(waiter)
        timer = loop.call_later(self.wait_timeout, self._expire, waiter)
        try:
            return await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                handed = waiter.result()  # handed over, then cancelled: give it back
                if handed is None:
                    self._free_slot()
                else:
                    self.release(handed)
            with contextlib.suppress(ValueError):
                self._waiters.remove(waiter)
            raise
        finally:
            timer.cancel()

    def _expire(self, waiter: asyncio.Future[RespConnection | None]) -> None:
        if not waiter.done():
            waiter.set_exception(RespConnectionError("no connection came free in the pool"))

    def release(self, conn: RespConnection) -> None:
        """Hand `conn` to the longest waiter, or keep it idle; a dead one frees its slot."""
        if self._closing:
            conn.close()
        if conn.closed:
            self._free_slot()
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return
        self._idle.append(conn)

    def _free_slot(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._open -= 1

    async def execute(self, *args: Any) -> Any:
        """One command on a pooled connection; error replies raise `RespError`."""
        return _raised((await self.request(encode_command(args), 1))[0])

    async def send(self, data: bytes) -> Any:
        """One command already encoded (`command_around`); error replies raise `RespError`."""
        return _raised((await self.request(data, 1))[0])

    async def pipeline(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """Several commands on one pooled connection, in one write; their replies (error
        replies as `RespError` values)."""
        return await self.request(b"".join(encode_command(c) for c in commands), len(commands))

    async def request(self, data: bytes, replies: int) -> list[Any]:
        conn = await self.acquire()
        try:
            return await conn.request(data, replies, self.read_timeout)
        finally:
            self.release(conn)

    async def close(self) -> None:
        """Close the idle connections now and lent-out ones when they come back."""
        self._closing = True
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        self._open -= len(idle)
