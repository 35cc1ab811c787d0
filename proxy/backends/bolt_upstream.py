"""One client connection to an upstream Bolt server, written on our own codec (no driver).

Requests are pipelined: `queue()` appends a message and returns its `Response`, `flush()` sends
everything queued in one write, and the server's replies fill the responses in order. RECORD
messages are kept as their framed wire bytes and never decoded here, so a result can go to a
Bolt client as it came; summaries (SUCCESS / FAILURE / IGNORED) are decoded.

A connection opened with a `silence` bound (the relay's: `[limits] query_timeout_ms` plus a
grace) is a watchdog for servers that ignore the Bolt `tx_timeout` (ArcadeDB): when a request
waits and the server sends nothing for that long, the connection is aborted and every waiting
request fails with `LIM.TIMEOUT`, so a client never waits far past the query timeout. The
connection is then *abandoned*, not closed: a server that ignores `tx_timeout` also goes on
running the query when its socket closes (ArcadeDB's Bolt thread finds out only when it next
writes), so the proxy keeps reading (and dropping) the late replies and closes the connection
when the last one came (`on_settled`). The backend counts abandoned connections to refuse new
queries once too many still run upstream (`[limits] max_abandoned_queries`); TCP keepalive
probes close one whose server host vanished.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections import deque
from collections.abc import Callable
from typing import Any

from query_guard.backend import BackendError, BackendUnavailable, ResultSummary
from query_guard.backends.bolt_codes import neo4j_code
from query_guard.backends.limits import is_timeout, timeout_error
from query_guard.wire import bolt_messages as m
from query_guard.wire.bolt_handshake import HandshakeError, Version, client_choice, client_request
from query_guard.wire.bolt_values import ValueCodec
from query_guard.wire.packstream import PackStreamError, Unpacker

LOST = -1  # Response.tag when the connection died before the reply came
SILENT = -2  # Response.tag when the server sent nothing for `silence` seconds (aborted)
USER_AGENT = "query-guard/0.1"
UNKNOWN_ERROR = "Neo.DatabaseError.General.UnknownError"


class Response:
    """The reply to one request: its summary `tag` and `metadata`, the RECORDs before it
    (framed wire bytes, appended to `records` when the request streams), and `done`."""

    __slots__ = ("done", "metadata", "records", "tag")

    def __init__(self, done: asyncio.Future[None], records: list[bytes] | None) -> None:
        self.done = done
        self.records = records
        self.tag = 0
        self.metadata: dict[str, Any] = {}

    @property
    def ok(self) -> bool:
        return self.tag == m.SUCCESS

    def error(self, what: str = "request") -> BackendError:
        """The failure this reply stands for (call when not `ok`)."""
        if self.tag == LOST:
            return BackendUnavailable(f"the Bolt upstream closed the connection during a {what}")
        if self.tag == SILENT:
            return timeout_error(None, f"the Bolt upstream sent nothing during a {what}")
        if self.tag == m.IGNORED:
            return BackendError(f"the Bolt upstream ignored the {what}", UNKNOWN_ERROR)
        meta = self.metadata
        code = str(meta.get("code") or meta.get("neo4j_code") or UNKNOWN_ERROR)
        message = str(meta.get("message") or code)
        if is_timeout(code):  # the upstream's tx_timeout ([limits] query_timeout_ms)
            return timeout_error(None, message, code)
        return BackendError(message, neo4j_code(code, message))  # bolt_codes.TRANSLATED


class UpstreamConnection(asyncio.Protocol):
    """A Bolt connection to the database; `open()` it, then queue / flush / await."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.version: Version = (0, 0)
        self.codec = ValueCodec()
        self.server_agent = ""
        self.needs_reset = False  # a FAILURE put the server in FAILED: RESET before reuse
        self.lost = False
        self._buf = bytearray()
        self._out = bytearray()
        self._responses: deque[Response] = deque()
        # summaries recur byte for byte (a RUN's fields, a read's PULL SUCCESS): decoded once
        self._summaries: dict[bytes, tuple[int, dict[str, Any]]] = {}
        # what a result made of such a shared summary metadata (`bolt_results`), by its id
        self.ends: dict[int, tuple[dict[str, Any], ResultSummary]] = {}
        self._loop = asyncio.get_running_loop()
        self._greeting: asyncio.Future[bytes] = self._loop.create_future()
        self.silence: float | None = None  # seconds without a byte while a request waits
        self._watchdog: asyncio.TimerHandle | None = None
        self._heard = 0.0  # loop time of the last write or byte read (the watchdog's start)
        self._silent = False
        # abandoned by the watchdog: replies still owed by the server (read and dropped)
        self.abandoned = False
        self.on_abandoned: Callable[[UpstreamConnection], None] | None = None
        self.on_settled: Callable[[UpstreamConnection], None] | None = None

    # -- opening --------------------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        host: str,
        port: int,
        auth: dict[str, Any],
        *,
        tls: ssl.SSLContext | None = None,
        timeout: float = 10.0,
        silence: float | None = None,
    ) -> UpstreamConnection:
        """Connect, negotiate a version, HELLO (and LOGON). Raises BackendUnavailable when
        the server cannot be reached, BackendError with the server's code when it refuses."""
        loop = asyncio.get_running_loop()
        conn: UpstreamConnection | None = None
        try:
            async with asyncio.timeout(timeout):
                _, conn = await loop.create_connection(cls, host, port, ssl=tls)
                await conn._greet(auth)
        except (OSError, TimeoutError, HandshakeError) as exc:
            if conn is not None:
                conn.close()
            raise BackendUnavailable(f"Bolt upstream {host}:{port}: {exc or 'timed out'}") from exc
        except BaseException:
            if conn is not None:
                conn.close()
            raise
        conn.silence = silence  # armed after the handshake (its own `timeout` bounds that)
        return conn

    async def _greet(self, auth: dict[str, Any]) -> None:
        assert self.transport is not None
        self.transport.write(client_request())
        self.version = client_choice(await self._greeting)
        self.codec = ValueCodec(element_ids=self.version >= (5, 0), utc=self.version >= (5, 0))
        hello: dict[str, Any] = {"user_agent": USER_AGENT}
        if self.version >= (5, 3):
            hello["bolt_agent"] = {"product": USER_AGENT}
        if self.version == (4, 4):
            hello["patch_bolt"] = ["utc"]
        replies = []
        if self.version >= (5, 1):
            replies.append(self.queue(m.HELLO, [hello]))
            replies.append(self.queue(m.LOGON, [auth]))
        else:
            replies.append(self.queue(m.HELLO, [{**hello, **auth}]))
        self.flush()
        for reply in replies:
            await reply.done
            if not reply.ok:
                raise reply.error("logon")
        meta = replies[0].metadata
        self.server_agent = str(meta.get("server", ""))
        if self.version == (4, 4) and "utc" not in (meta.get("patch_bolt") or []):
            self.codec = ValueCodec(element_ids=False, utc=False)

    # -- requests -------------------------------------------------------------------------

    def queue(self, tag: int, fields: list[Any], records: list[bytes] | None = None) -> Response:
        """Append a request (sent by the next `flush()`); `records` collects its RECORDs."""
        out = bytearray()
        m.encode_message(out, tag, fields, self.codec)
        return self.queue_framed(out, records)

    def queue_framed(self, message: bytes, records: list[bytes] | None = None) -> Response:
        """`queue` for a request already encoded and framed (a constant one: the PULL of
        an auto-commit result)."""
        response = Response(self._loop.create_future(), records)
        if self.lost:
            response.tag = LOST
            response.done.set_result(None)
            return response
        self._out += message
        self._responses.append(response)
        return response

    def flush(self) -> None:
        out, self._out = self._out, bytearray()
        if out and self.transport is not None and not self.lost:
            self.transport.write(out)
            self._watch()

    # -- the silence watchdog -------------------------------------------------------------

    def _watch(self) -> None:
        """Restart the silence bound (a write, a byte read) while a request waits. The timer
        is not re-armed each time (a timer handle made and cancelled twice per query): it
        runs from the first wait, and when it fires it sleeps again for what is left of the
        bound since the last activity, and stands down when no request waits."""
        self._heard = self._loop.time()
        if self._watchdog is None and self.silence and self._responses and not self.lost:
            self._watchdog = self._loop.call_at(self._heard + self.silence, self._fall_silent)

    def _fall_silent(self) -> None:
        """No byte for `silence` seconds: every waiting request fails with LIM.TIMEOUT now,
        and the connection stays open until the server has sent what it owes (it is most
        likely still running the query), then closes (`on_settled`)."""
        self._watchdog = None
        if not self._responses or self.lost or not self.silence:
            return
        due = self._heard + self.silence
        if self._loop.time() < due:  # heard from since it was armed: the rest of the bound
            self._watchdog = self._loop.call_at(due, self._fall_silent)
            return
        self._silent = True
        self.abandoned = True
        self.lost = True  # nothing more is sent on it; `release` closes it
        for response in self._responses:  # they stay queued: the late replies pop them
            response.tag = SILENT
            if not response.done.done():
                response.done.set_result(None)
        self._keep_alive()
        if self.on_abandoned is not None:
            self.on_abandoned(self)

    def _keep_alive(self) -> None:
        """TCP keepalive probes on an abandoned connection: a server busy with the query
        still answers them, a host that vanished does not, and the kernel then closes the
        socket within about a minute, which settles the connection."""
        sock = self.transport.get_extra_info("socket") if self.transport is not None else None
        if sock is None:
            return
        options = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
        for name, value in (("TCP_KEEPIDLE", 30), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 3)):
            if hasattr(socket, name):  # Linux; elsewhere the system's defaults
                options.append((socket.IPPROTO_TCP, getattr(socket, name), value))
        with contextlib.suppress(OSError, AttributeError):
            for level, option, value in options:
                sock.setsockopt(level, option, value)

    def _settle(self) -> None:
        """An abandoned connection's server has answered everything (or gone): close it."""
        self.abandoned = False
        self._responses.clear()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"\x00\x02\xb0\x02\x00\x00")  # GOODBYE
            self.transport.close()
        if self.on_settled is not None:
            self.on_settled(self)

    def reset_later(self) -> None:
        """Pipeline a RESET (nobody waits for it): the next request queues behind it."""
        self.needs_reset = False
        self.queue(m.RESET, [])
        self.flush()

    def abort(self) -> None:
        """Drop the connection at once, abandoned or not (the backend is closing)."""
        if self.transport is not None:
            self.transport.abort()
        self._lose()

    def close(self) -> None:
        if self.abandoned:
            return  # closed by `_settle` once the server has answered
        if self.transport is not None and not self.transport.is_closing():
            if not self.lost and not self._responses:
                self.transport.write(b"\x00\x02\xb0\x02\x00\x00")  # GOODBYE
            self.transport.close()
        self._lose()

    # -- asyncio.Protocol -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not subclass asyncio.Transport: no isinstance check
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self._lose()

    def data_received(self, data: bytes) -> None:
        buf = self._buf
        buf += data
        if not self._greeting.done():
            if len(buf) < 4:
                return
            self._greeting.set_result(bytes(buf[:4]))
            del buf[:4]
        try:
            used = self._messages(buf)
        except (PackStreamError, IndexError) as exc:
            self._broken(f"unreadable reply: {exc}")
            return
        if used:
            del buf[:used]
        if self._watchdog is not None:  # the server is alive: the whole bound again
            self._heard = self._loop.time()

    def _messages(self, buf: bytearray) -> int:
        """Dispatch every complete message in `buf`; returns the bytes consumed."""
        pos, end = 0, len(buf)
        responses = self._responses
        while end - pos >= 2:
            size = (buf[pos] << 8) | buf[pos + 1]
            if size == 0:  # NOOP between messages
                pos += 2
                continue
            stop = pos + 2 + size
            if stop + 2 <= end and buf[stop] == 0 and buf[stop + 1] == 0:
                body_start, after = pos + 2, stop + 2  # one chunk: the common case
                body: bytes | bytearray | None = None
            else:
                found = multi_chunk(buf, pos, end)
                if found is None:
                    break
                after, body = found
                body_start = -1
            if not responses:
                self._broken("a reply nobody asked for")
                return pos
            head = responses[0]
            tag = buf[body_start + 1] if body is None else body[1]
            if self.abandoned:  # a late reply nobody waits for any more: dropped
                if tag != m.RECORD:
                    responses.popleft()
                    if not responses:
                        self._settle()
                        return after
            elif tag == m.RECORD:
                if head.records is None:
                    self._broken("a RECORD for a request that streams none")
                    return pos
                head.records.append(bytes(buf[pos:after]))
            else:
                responses.popleft()
                self._finish(head, buf[body_start:stop] if body is None else body)
            pos = after
        return pos

    def _finish(self, response: Response, body: bytes | bytearray) -> None:
        """Settle `response` with its summary (metadata shared by equal summaries: read-only)."""
        key = bytes(body)
        known = self._summaries.get(key)
        if known is None:
            unpacker = Unpacker(key)
            size, tag = unpacker.structure_header()
            meta = unpacker.unpack(1) if size else {}
            known = (tag, meta if isinstance(meta, dict) else {})
            if len(key) <= 512:
                if len(self._summaries) >= 64:
                    self._summaries.clear()
                self._summaries[key] = known
        tag = response.tag = known[0]
        response.metadata = known[1]
        if tag == m.FAILURE:
            self.needs_reset = True
        if not response.done.done():
            response.done.set_result(None)

    def _broken(self, why: str) -> None:
        if self.transport is not None:
            self.transport.abort()
        self._lose()

    def _lose(self) -> None:
        self.lost = True
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self.abandoned:  # the server closed it or we aborted it: nothing more will come
            self._settle()
            return
        tag = SILENT if self._silent else LOST
        if not self._greeting.done():
            self._greeting.set_exception(ConnectionResetError("closed during the handshake"))
            self._greeting.exception()  # retrieved: whoever awaits it sees the error
        while self._responses:
            response = self._responses.popleft()
            response.tag = tag
            if not response.done.done():
                response.done.set_result(None)


def multi_chunk(buf: bytearray, pos: int, end: int) -> tuple[int, bytes] | None:
    """(end of the message, its body) for a message spanning several chunks, or None while
    it is incomplete."""
    body = bytearray()
    while end - pos >= 2:
        size = (buf[pos] << 8) | buf[pos + 1]
        pos += 2
        if size == 0:
            return pos, bytes(body)
        if end - pos < size:
            return None
        body += buf[pos : pos + size]
        pos += size
    return None
