"""One Bolt client connection on the asyncio server (`BoltProtocol`): it moves bytes
(handshake, chunk framing, flow control) and hands requests, in order, to a `BoltSession` (the
spec's state machine) running in one task per connection. A misbehaving client (garbage, a
truncated handshake, an oversized message) loses its own connection with a log line.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import deque

from query_guard.frontends.bolt.context import ServerContext
from query_guard.frontends.bolt.limits import connection_refusal
from query_guard.frontends.bolt.session import BoltSession
from query_guard.frontends.bolt.state import State
from query_guard.wire import bolt_messages as m
from query_guard.wire.bolt_handshake import (
    SUPPORTED_VERSIONS,
    HandshakeError,
    ServerHandshake,
    Version,
)

log = logging.getLogger("query_guard.bolt")

HANDSHAKE_TIMEOUT = 10.0
# Flow control on the read side: stop reading while this many requests (or bytes of them)
# wait to be handled, so a client pipelining faster than the backend answers cannot grow memory.
MAX_PENDING_REQUESTS = 256
RESUME_PENDING_REQUESTS = 64
MAX_PENDING_BYTES = 32 * 1024 * 1024
RESUME_PENDING_BYTES = 8 * 1024 * 1024
# Responses are coalesced into one socket write per batch of handled requests (RUN's SUCCESS,
# the records and PULL's SUCCESS leave together); a bigger backlog is written at once.
FLUSH_BYTES = 64 * 1024
# session states in which a draining connection may close without breaking a client's work
BETWEEN_WORK = frozenset({State.CONNECTED, State.AUTHENTICATION, State.READY, State.FAILED})


class BoltProtocol(asyncio.Protocol):
    """One client connection."""

    def __init__(
        self,
        ctx: ServerContext,
        ids: itertools.count[int],
        connections: set[BoltProtocol],
        max_message_size: int = m.DEFAULT_MAX_MESSAGE,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
        versions: tuple[Version, ...] = SUPPORTED_VERSIONS,
    ) -> None:
        self.ctx = ctx
        self._ids = ids
        self._connections = connections
        self._handshake: ServerHandshake | None = ServerHandshake(versions)
        self._handshake_timeout = handshake_timeout
        self._timer: asyncio.TimerHandle | None = None
        self._dechunker = m.Dechunker(max_message_size)
        self._pending: deque[bytes] = deque()
        self._pending_bytes = 0
        # what the request loop waits on when it has nothing to do (a bare future: no Event,
        # whose every wait asks asyncio for the running loop, a system call each)
        self._waiting: asyncio.Future[None] | None = None
        self._can_write = asyncio.Event()
        self._can_write.set()
        self._out = bytearray()
        self._reading_paused = False
        self.transport: asyncio.Transport | None = None
        self.session: BoltSession | None = None
        self.worker: asyncio.Task[None] | None = None
        self.peer = "?"
        self.host = "?"
        self.closed = False
        self._idle: asyncio.TimerHandle | None = None
        self._last_message = 0.0  # loop time of the last complete message (or of its answer)
        self._busy = False  # a request is being handled: not idle however long it takes
        self._loop: asyncio.AbstractEventLoop  # set by connection_made (read per message)
        # shutting down: close once between transactions (a client never loses a commit)
        self.draining = False

    # -- asyncio.Protocol -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not subclass asyncio.Transport: no isinstance check
        self.transport = transport  # type: ignore[assignment]
        self._loop = asyncio.get_running_loop()
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.host = str(peer[0]) if isinstance(peer, tuple) else self.peer
        refused = self._refusal()
        self._connections.add(self)
        if refused:
            self.abort(refused)
            return
        loop = self._loop
        self._timer = loop.call_later(self._handshake_timeout, self._handshake_expired)
        self._last_message = loop.time()
        idle = self.ctx.limits.idle_timeout
        if idle > 0:
            self._idle = loop.call_later(idle, self._idle_check)

    def _refusal(self) -> str | None:
        """Why this connection is one too many (`[limits] max_connections[_per_client]`)."""
        hosts = [c.host for c in self._connections if not c.closed]
        return connection_refusal(hosts, self.host, self.ctx.limits)

    def _idle_check(self) -> None:
        """Close a connection that completed no message for `idle_timeout` seconds (a
        half-sent message does not count as activity); a request in progress is not idle."""
        self._idle = None
        if self.closed:
            return
        loop = asyncio.get_running_loop()
        idle = self.ctx.limits.idle_timeout
        due = self._last_message + idle
        if self._busy or self._pending:
            due = loop.time() + idle
        elif loop.time() >= due:
            pending = self._dechunker.buffered
            self.abort(
                f"idle for {idle:g} s ([limits] idle_timeout_seconds)"
                + (f" with {pending} bytes of an unfinished message" if pending else "")
            )
            return
        self._idle = loop.call_at(due, self._idle_check)

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        if self._handshake is not None:
            data = self._negotiate(data)
            if not data:
                return
        try:
            frames = self._dechunker.feed(data)
        except m.FramingError as exc:
            self.abort(f"framing error: {exc}")
            return
        if frames:
            self._last_message = self._loop.time()
        for frame in frames:
            # Peek at the signature: RESET interrupts whatever is queued before it.
            if frame[:2] == b"\xb0\x0f" and self.session is not None:
                self.session.interrupt()
            self._pending.append(frame)
            self._pending_bytes += len(frame)
        if frames:
            self._wake()
        backlog = (
            len(self._pending) >= MAX_PENDING_REQUESTS or self._pending_bytes >= MAX_PENDING_BYTES
        )
        if backlog and not self._reading_paused:
            self._reading_paused = True
            self.transport.pause_reading()  # type: ignore[union-attr]

    def _wake(self) -> None:
        """Wake the request loop (every reason it wakes for is checked again at its top)."""
        waiting = self._waiting
        if waiting is not None and not waiting.done():
            waiting.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._can_write.set()
        self._wake()
        if self._timer is not None:
            self._timer.cancel()
        if self._idle is not None:
            self._idle.cancel()
        if self.worker is None:
            self._connections.discard(self)

    def pause_writing(self) -> None:
        self._can_write.clear()

    def resume_writing(self) -> None:
        self._can_write.set()

    # -- handshake ------------------------------------------------------------------------

    def _negotiate(self, data: bytes) -> bytes:
        """Feed the handshake; returns bytes that follow it (already Bolt messages)."""
        assert self._handshake is not None and self.transport is not None
        try:
            reply, rest = self._handshake.feed(data)
        except HandshakeError as exc:
            if exc.reply:
                self.transport.write(exc.reply)
            self.abort(f"handshake failed: {exc}", graceful=True)
            return b""
        if reply:
            self.transport.write(reply)
        version = self._handshake.version
        if version is None:
            return b""
        self._handshake = None  # the timer keeps running until HELLO (and LOGON) succeed
        connection_id = f"bolt-{next(self._ids)}"
        self.session = BoltSession(self.ctx, version, self, self.peer, connection_id)
        self.worker = asyncio.get_running_loop().create_task(self._serve())
        log.debug("bolt %s: %s speaks Bolt %d.%d", connection_id, self.peer, *version)
        return rest

    def _handshake_expired(self) -> None:
        """Unauthenticated connections get `handshake_timeout` seconds to become usable."""
        if self.closed:
            return
        if self._handshake is not None:
            self.abort("handshake timed out")
        elif self.session is not None and self.session.state in (
            State.CONNECTED,
            State.AUTHENTICATION,
        ):
            self.abort("no HELLO / LOGON after the handshake")

    # -- Output (what the session writes through) -----------------------------------------

    def write(self, data: bytes | bytearray) -> None:
        """Buffer a response; `flush` sends the buffer (when the request queue runs dry)."""
        if not self.closed:
            self._out += data
            if len(self._out) >= FLUSH_BYTES:
                self.flush()

    def flush(self) -> None:
        out, self._out = self._out, bytearray()
        if out and self.transport is not None and not self.transport.is_closing():
            self.transport.write(out)

    async def drain(self) -> None:
        if not self._can_write.is_set():
            self.flush()
            await self._can_write.wait()

    def close(self) -> None:
        """Orderly close after GOODBYE or a failed HELLO/LOGON: flush, then disconnect."""
        self.flush()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def close_when_idle(self) -> None:
        """Close as soon as no transaction or result stream is open (server shutdown)."""
        self.draining = True
        self._wake()

    def abort(self, reason: str, graceful: bool = False) -> None:
        """Drop a misbehaving client (its connection only)."""
        if self.closed:
            return
        log.warning("bolt connection from %s closed: %s", self.peer, reason)
        self.closed = True
        self._wake()
        if self.transport is not None:
            if graceful:
                self.transport.close()
            else:
                self.transport.abort()

    # -- request loop ---------------------------------------------------------------------

    async def _serve(self) -> None:
        session = self.session
        assert session is not None
        try:
            while not self.closed and not session.closed:
                if not self._pending and self.draining and session.state in BETWEEN_WORK:
                    self.close()  # no transaction or result open: the client retries elsewhere
                    break
                if not self._pending:
                    self.flush()  # everything handled so far leaves in one write
                    self._waiting = self._loop.create_future()
                    await self._waiting
                    continue
                frame = self._pending.popleft()
                self._pending_bytes -= len(frame)
                if (
                    self._reading_paused
                    and len(self._pending) <= RESUME_PENDING_REQUESTS
                    and self._pending_bytes <= RESUME_PENDING_BYTES
                ):
                    self._reading_paused = False
                    if self.transport is not None and not self.transport.is_closing():
                        self.transport.resume_reading()
                try:
                    request = m.decode_request_cached(
                        frame, session.codec, self.ctx.limits.max_message_elements
                    )
                except m.FramingError as exc:
                    self.abort(f"invalid message: {exc}")
                    break
                self._busy = True
                try:
                    await session.handle(request)
                finally:
                    self._busy = False
                    self._last_message = self._loop.time()
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("bolt %s: connection loop failed", session.connection_id)
            self.abort("internal error")
        finally:
            try:
                await session.cleanup()  # roll back what a vanished client left open
                self.flush()
            finally:
                self._connections.discard(self)
