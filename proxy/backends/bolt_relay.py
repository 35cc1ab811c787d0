"""An upstream Bolt server spoken to with our own codec: a small asyncio client with one
connection pool per set of credentials, pipelining RUN + PULL in one write.

Records are relayed **undecoded**: a `RelayResult` hands the frontend the framed RECORD
messages as the server sent them (`fetch_raw`), which it writes as they are when the client's
Bolt version encodes values like the upstream's (both >= 5.0). `fetch` decodes on demand —
the repair loop's peek, a Bolt 4.4 client, schema discovery. Parameters go out as the client
sent them (temporal values as `Temporal`: every nanosecond, any year). It is the one Bolt
upstream client: a neo4j-driver backend would re-encode parameters through the driver's own
types (years 1-9999 only) and decode every record.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from query_guard.backend import BackendError, BackendUnavailable
from query_guard.backends.bolt_results import AuthKey, RelayResult, RelayTransaction
from query_guard.backends.bolt_upstream import UpstreamConnection
from query_guard.backends.limits import abandoned_error, wait_bound
from query_guard.config.tls import client_context
from query_guard.wire import bolt_messages as m
from query_guard.wire.packstream import Packed

DEFAULT_PORT = 7687

# The credentials of the client connection being served (`credentials = "passthrough"`): set
# by `BoltRelayBackend.authenticate` inside the connection's task, so every backend call that
# task makes sees its own client's credentials and no other's.
CLIENT_AUTH: ContextVar[tuple[AuthKey, dict[str, Any]] | None] = ContextVar(
    "query_guard_relay_auth", default=None
)


def auth_map(auth: Mapping[str, Any] | tuple[str, str] | None) -> dict[str, Any]:
    """A Bolt auth map from (user, password), a client's HELLO / LOGON map, or None."""
    if auth is None:
        return {"scheme": "none"}
    if isinstance(auth, tuple):
        return {"scheme": "basic", "principal": auth[0], "credentials": auth[1]}
    return {k: v for k, v in auth.items() if k in ("scheme", "principal", "credentials",
                                                   "realm", "parameters")}  # fmt: skip


def auth_key(auth: Mapping[str, Any]) -> AuthKey:
    return tuple(sorted((k, repr(v)) for k, v in auth.items()))


class BoltRelayBackend:
    """A Neo4j-compatible server behind the proxy, without the neo4j driver.

    `read_only=True` sends every query in READ mode (Neo4j then refuses writes itself).
    `passthrough=True` opens connections with the credentials of the client being served
    (checked at its LOGON by `authenticate`); `auth` is then only the default.
    """

    name = "bolt"

    def __init__(
        self,
        uri: str,
        auth: tuple[str, str] | None = None,
        database: str | None = None,
        *,
        read_only: bool = False,
        passthrough: bool = False,
        fetch_size: int = 1000,
        max_idle: int = 128,
        connect_timeout: float = 10.0,
        query_timeout_ms: int = 0,
        max_abandoned: int = 0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        parts = urlsplit(uri)
        scheme = parts.scheme.lower()
        if scheme not in {f"{b}{s}" for b in ("bolt", "neo4j") for s in ("", "+s", "+ssc")}:
            raise BackendError(f"not a Bolt URL: {uri!r}", "Neo.ClientError.General.Invalid")
        self.uri = uri
        self.host = parts.hostname or "localhost"
        self.port = parts.port or DEFAULT_PORT
        # `+s` verifies against the system CAs unless the caller passes its own context
        # (`[backend] tls_verify` / `tls_ca`); `+ssc` accepts any certificate.
        self.tls = tls if tls is not None or scheme.endswith(("bolt", "neo4j")) else _tls(scheme)
        self.auth = auth
        self.database = database
        self.read_only = read_only
        self.passthrough = passthrough
        self.fetch_size = fetch_size
        self.max_idle = max_idle
        self.connect_timeout = connect_timeout
        self.query_timeout_ms = query_timeout_ms  # sent as tx_timeout (0: the server's)
        # connections the silence watchdog gave up on while the server still runs their
        # query; at `max_abandoned` (0: no cap) new queries are refused (LIM.ABANDONED)
        self.max_abandoned = max_abandoned
        self.abandoned: set[UpstreamConnection] = set()
        self.server = ""
        self.records_decoded = 0  # records that went through `fetch` (tests, metrics)
        self._default = auth_map(auth)
        self._default_key = auth_key(self._default)
        self._idle: dict[AuthKey, list[UpstreamConnection]] = {}
        self._extras: dict[str | None, Packed] = {}
        self._closed = False
        self.telemetry = False  # clients need not send TELEMETRY: it is not forwarded

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        self._closed = False
        try:
            conn = await self._open(self._default_key, self._default)
        except BackendError as exc:
            if self.passthrough and not isinstance(exc, BackendUnavailable):
                return  # reachable; the clients will bring their own credentials
            raise
        self.server = conn.server_agent
        self.release(conn, self._default_key)

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                conn.close()
        for conn in list(self.abandoned):
            conn.abort()

    async def authenticate(self, auth: Mapping[str, Any]) -> bool:
        """The Bolt frontend's hook in pass-through mode: remember this connection's
        credentials and check them by opening (and pooling) an upstream connection now.
        Refuses only what the upstream refuses as a security error; an unreachable upstream
        lets the client in (its queries then fail as unavailable)."""
        token = auth_map(auth)
        if token.get("scheme") in (None, "none"):
            CLIENT_AUTH.set(None)
            return True
        key = auth_key(token)
        CLIENT_AUTH.set((key, token))
        if self._idle.get(key):
            return True
        try:
            conn = await self._open(key, token)
        except BackendUnavailable:
            return True
        except BackendError as exc:
            if exc.code.startswith("Neo.ClientError.Security."):
                return False
            raise
        self.release(conn, key)
        return True

    # -- the pool -------------------------------------------------------------------------

    def _credentials(self) -> tuple[AuthKey, dict[str, Any]]:
        if self.passthrough:
            client = CLIENT_AUTH.get()
            if client is not None:
                return client
        return self._default_key, self._default

    async def acquire(self) -> tuple[UpstreamConnection, AuthKey, bool]:
        """(connection, its pool key, whether it was reused from the pool). Refused
        (`LIM.ABANDONED`) while `max_abandoned` timed-out queries still run upstream."""
        if self.max_abandoned and len(self.abandoned) >= self.max_abandoned:
            raise abandoned_error(len(self.abandoned), self.max_abandoned)
        key, token = self._credentials()
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if not conn.lost:
                return conn, key, True
        return await self._open(key, token), key, False

    async def _open(self, key: AuthKey, token: dict[str, Any]) -> UpstreamConnection:
        if self._closed:
            raise BackendUnavailable("the Bolt upstream backend is closed")
        conn = await UpstreamConnection.open(
            self.host, self.port, token, tls=self.tls, timeout=self.connect_timeout,
            silence=self._silence(),
        )  # fmt: skip
        conn.on_abandoned = self.abandoned.add
        conn.on_settled = self.abandoned.discard
        self.server = self.server or conn.server_agent  # also when a client's session opens it
        return conn

    def _silence(self) -> float | None:
        """How long a waiting request may hear nothing from the server: `tx_timeout` plus a
        grace (within 2x of it, at most 5 s more). Servers that apply `tx_timeout` (Neo4j)
        fail the query first; those that ignore it (ArcadeDB) are cut off here."""
        if not self.query_timeout_ms:
            return None
        return wait_bound(self.query_timeout_ms)

    def release(self, conn: UpstreamConnection, key: AuthKey) -> None:
        if conn.lost or self._closed:
            conn.close()
            return
        if conn.needs_reset:
            conn.reset_later()
        idle = self._idle.setdefault(key, [])
        if len(idle) < self.max_idle:
            idle.append(conn)
        else:
            conn.close()

    # -- queries --------------------------------------------------------------------------

    def _extra(self, database: str | None) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        db = database or self.database
        if db:
            extra["db"] = db
        if self.read_only:
            extra["mode"] = "r"
        if self.query_timeout_ms:
            extra["tx_timeout"] = self.query_timeout_ms
        return extra

    def _run_extra(self, database: str | None) -> Packed:
        """An auto-commit RUN's extra map, packed once per database."""
        packed = self._extras.get(database)
        if packed is None:
            packed = Packed.of(self._extra(database))
            if len(self._extras) < 64:
                self._extras[database] = packed
        return packed

    async def run(
        self, query: str, parameters: dict[str, Any], database: str | None = None
    ) -> RelayResult:
        """Auto-commit: RUN + PULL in one write on a pooled connection. A pooled connection
        found dead before any reply is replaced once (the server may have restarted)."""
        extra = self._run_extra(database)
        for attempt in range(2):
            conn, key, reused = await self.acquire()
            result = RelayResult(self, conn, key, owner=True)
            try:
                await result.start(query, parameters, extra)
            except BackendUnavailable:
                if reused and attempt == 0:
                    continue
                raise
            return result
        raise AssertionError("unreachable")

    async def explain(
        self, query: str, parameters: dict[str, Any] | None = None, database: str | None = None
    ) -> dict[str, Any] | None:
        """The upstream's plan for `query`, sent as `EXPLAIN …` (planned, never run)."""
        result = await self.run("EXPLAIN " + query, parameters or {}, database)
        await result.fetch(-1)
        return result.summary().plan

    async def begin(
        self, database: str | None = None, metadata: dict[str, Any] | None = None
    ) -> RelayTransaction:
        extra = self._extra(database)
        if metadata:
            extra["tx_metadata"] = metadata
        for attempt in range(2):
            conn, key, reused = await self.acquire()
            reply = conn.queue(m.BEGIN, [extra])
            conn.flush()
            await reply.done
            if reply.ok:
                return RelayTransaction(self, conn, key)
            self.release(conn, key)
            if not (reused and attempt == 0 and conn.lost):
                raise reply.error("BEGIN")
        raise AssertionError("unreachable")


def _tls(scheme: str) -> ssl.SSLContext:
    return client_context(verify=not scheme.endswith("+ssc"))
