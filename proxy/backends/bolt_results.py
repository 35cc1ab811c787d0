"""The relay backend's results and transactions (`query_guard.backends.bolt_relay`): one upstream
result keeps the framed RECORDs of its PULL in flight undecoded, hands them out raw
(`fetch_raw`) or decoded (`fetch`), and returns its connection to the pool when it ends."""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Protocol

from query_guard.backend import BackendError, ResultSummary
from query_guard.backends.bolt_upstream import UpstreamConnection, multi_chunk
from query_guard.wire import bolt_messages as m
from query_guard.wire.bolt_values import ValueCodec
from query_guard.wire.packstream import Packed, PackStreamError, Unpacker

_NO_EXTRA = Packed.of({})
REWIND_LIMIT = 16  # records a result remembers for `rewind` (the repair loop peeks at 2)
AuthKey = tuple[tuple[str, str], ...]  # the credentials a pooled connection logged on with


class ConnectionPool(Protocol):
    """What a result or transaction needs of the backend that lent it its connection."""

    fetch_size: int  # records per upstream PULL
    records_decoded: int  # records that went through `fetch` (tests, metrics)

    def release(self, conn: UpstreamConnection, key: AuthKey) -> None: ...


class RelayResult:
    """One upstream result: the RECORDs of the PULL in flight collect in `_records` (framed,
    undecoded); the next PULL goes out when the client wants more than is buffered."""

    def __init__(
        self, backend: ConnectionPool, conn: UpstreamConnection, key: AuthKey, owner: bool
    ) -> None:
        self.keys: list[str] = []
        self.bolt_version = conn.version
        self._backend = backend
        self._conn: UpstreamConnection | None = conn
        self._key = key
        self._owner = owner  # auto-commit: the connection goes back to the pool when done
        self._records: list[bytes] = []
        self._pos = 0
        self._pull: Any = None  # the Response of the PULL in flight
        self._qid = -1
        self._more = True
        self._summary: ResultSummary | None = None
        self.codec = conn.codec
        self._peeked: list[bytes] = []  # records `fetch` decoded (the repair loop's peek)
        self._rewindable = True

    async def start(self, query: str, parameters: dict[str, Any], extra: Any) -> None:
        conn = self._conn
        assert conn is not None
        run = conn.queue(m.RUN, [query, parameters or {}, extra])
        self._pull = conn.queue_framed(_pull_message(self._backend.fetch_size), self._records)
        conn.flush()
        await self._reply(run)
        if not run.ok:
            self._summary = ResultSummary()
            self._done()
            raise run.error("RUN")
        self.keys = list(run.metadata.get("fields") or [])
        qid = run.metadata.get("qid")
        self._qid = qid if isinstance(qid, int) else -1

    # -- ResultStream ---------------------------------------------------------------------

    async def fetch_raw(self, n: int) -> list[bytes]:
        """Up to n framed RECORD messages (all when n < 0), as the upstream sent them."""
        out = await self._take(n)
        if out:
            self._peeked, self._rewindable = [], False
        return out

    async def fetch(self, n: int) -> list[list[Any]]:
        """Up to n records decoded into the neutral model."""
        raw = await self._take(n)
        if self._rewindable:
            if len(self._peeked) + len(raw) <= REWIND_LIMIT:
                self._peeked += raw
            else:
                self._peeked, self._rewindable = [], False
        self._backend.records_decoded += len(raw)
        codec = self.codec
        return [decode_record(wire, codec) for wire in raw]

    def rewind(self) -> bool:
        """Put back the few records `fetch` decoded so far (the repair loop's peek), so that
        they can be relayed raw; False when that is no longer possible."""
        if not self._rewindable:
            return False
        self._records[: self._pos] = []  # in place: the PULL in flight appends to this list
        self._records[:0] = self._peeked
        self._pos = 0
        self._peeked = []
        return True

    async def discard(self) -> None:
        self._records.clear()
        self._pos = 0
        self._peeked = []
        if self._summary is not None:
            return
        if self._pull is not None:
            await self._wait_pull()
        if self._more and self._conn is not None:
            reply = self._conn.queue(m.DISCARD, [{"n": -1, "qid": self._qid}])
            self._conn.flush()
            await reply.done
            if not reply.ok:
                self._fail()
                raise reply.error("DISCARD")
            self._end(reply.metadata)

    def has_more(self) -> bool:
        return self._pos < len(self._records) or self._summary is None

    def summary(self) -> ResultSummary:
        return self._summary if self._summary is not None else ResultSummary()

    # -- internals ------------------------------------------------------------------------

    async def _take(self, n: int) -> list[bytes]:
        await self._fill(n)
        records, pos = self._records, self._pos
        end = len(records) if n < 0 else min(len(records), pos + n)
        out = records[pos:end]
        if end == len(records) and self._pull is None:
            records.clear()
            self._pos = 0
        else:
            self._pos = end
        return out

    async def _fill(self, n: int) -> None:
        while self._summary is None and (n < 0 or len(self._records) - self._pos < n):
            if self._pull is None:
                conn = self._conn
                assert conn is not None
                want = self._backend.fetch_size if n < 0 else max(n, self._backend.fetch_size)
                self._pull = conn.queue(m.PULL, [{"n": want, "qid": self._qid}], self._records)
                conn.flush()
            await self._wait_pull()

    async def _reply(self, reply: Any) -> None:
        """Wait for `reply` (often already there: the PULL's reply comes with the RUN's). A
        cancelled wait (a client's tx_timeout ran out) drops the connection: the reply still
        on its way would otherwise answer its next user. No `asyncio.shield` (two futures and
        their callbacks per wait): the cancelled future is only ever read through `done()`
        here, and the connection's end gives the reply its tag all the same."""
        done = reply.done
        if done.done():
            return
        try:
            await done
        except asyncio.CancelledError:
            if self._conn is not None:
                self._conn.close()
            raise

    async def _wait_pull(self) -> None:
        pull = self._pull
        await self._reply(pull)
        self._pull = None
        if not pull.ok:
            self._records.clear()
            self._pos = 0
            self._fail()
            raise pull.error("PULL")
        if not pull.metadata.get("has_more"):
            self._end(pull.metadata)

    def _end(self, meta: dict[str, Any]) -> None:
        self._more = False
        conn = self._conn
        if conn is None:
            self._summary = _summary(meta)
        else:  # equal summaries share their metadata (and so their neutral summary)
            known = conn.ends.get(id(meta))
            if known is None or known[0] is not meta:
                known = (meta, _summary(meta))
                if len(conn.ends) >= 64:
                    conn.ends.clear()
                conn.ends[id(meta)] = known
            self._summary = known[1]
        self._done()

    def _fail(self) -> None:
        self._more = False
        self._summary = ResultSummary()
        self._done()

    def _done(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and self._owner:
            self._backend.release(conn, self._key)


class RelayTransaction:
    """An explicit upstream transaction on one connection, returned to the pool at the end."""

    def __init__(self, backend: ConnectionPool, conn: UpstreamConnection, key: AuthKey):
        self._backend = backend
        self._conn: UpstreamConnection | None = conn
        self._key = key

    def _connection(self) -> UpstreamConnection:
        if self._conn is None:
            raise BackendError("the transaction is over", "Neo.ClientError.Transaction.Invalid")
        return self._conn

    async def run(self, query: str, parameters: dict[str, Any]) -> RelayResult:
        conn = self._connection()
        result = RelayResult(self._backend, conn, self._key, owner=False)
        await result.start(query, parameters, _NO_EXTRA)
        return result

    async def commit(self) -> str | None:
        conn = self._connection()
        reply = conn.queue(m.COMMIT, [])
        conn.flush()
        await reply.done
        self._finish()
        if not reply.ok:
            raise reply.error("COMMIT")
        bookmark = reply.metadata.get("bookmark")
        return bookmark if isinstance(bookmark, str) and bookmark else None

    async def rollback(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if conn.lost:
            self._backend.release(conn, self._key)
            return
        if conn.needs_reset:  # a failed statement: the server ignores ROLLBACK until RESET
            self._backend.release(conn, self._key)
            return
        reply = conn.queue(m.ROLLBACK, [])
        conn.flush()
        await reply.done
        self._backend.release(conn, self._key)
        if not reply.ok and reply.tag != m.IGNORED:
            raise reply.error("ROLLBACK")

    def _finish(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._backend.release(conn, self._key)


@functools.lru_cache(maxsize=16)
def _pull_message(n: int) -> bytes:
    """An auto-commit PULL `{n}`, encoded and framed once per fetch size."""
    out = bytearray()
    m.encode_message(out, m.PULL, [{"n": n}], ValueCodec())
    return bytes(out)


def _summary(meta: dict[str, Any]) -> ResultSummary:
    """A final PULL / DISCARD SUCCESS as the neutral summary (the guard's notes join it)."""
    stats = meta.get("stats")
    counters = stats if isinstance(stats, dict) else {}
    bookmark, db, t_last = meta.get("bookmark"), meta.get("db"), meta.get("t_last")
    return ResultSummary(
        query_type=str(meta.get("type") or "r"),
        counters={k: v for k, v in counters.items() if type(v) is int and v},
        notifications=_maps(meta.get("notifications")),
        bookmark=bookmark if isinstance(bookmark, str) and bookmark else None,
        database=db if isinstance(db, str) else None,
        t_last_ms=t_last if type(t_last) is int else 0,
        statuses=_maps(meta.get("statuses")),
        plan=meta["plan"] if isinstance(meta.get("plan"), dict) else None,
    )


def _maps(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def record_body(wire: bytes) -> bytes:
    """The message body of one framed RECORD (its chunks joined)."""
    size = (wire[0] << 8) | wire[1]
    if size + 4 == len(wire):
        return wire[2:-2]
    found = multi_chunk(bytearray(wire), 0, len(wire))
    if found is None:
        raise PackStreamError("truncated RECORD")
    return found[1]


def decode_record(wire: bytes, codec: ValueCodec) -> list[Any]:
    """One framed RECORD as neutral values (graph types, temporal values hydrated)."""
    unpacker = Unpacker(record_body(wire), codec.hydrate)
    unpacker.structure_header()
    values = unpacker.unpack(1)
    if not isinstance(values, list):
        raise PackStreamError("RECORD without a list of values")
    return values
