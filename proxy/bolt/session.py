"""The Bolt server state machine for one client connection (spec: "server state").

It receives decoded requests in order and writes responses through an `Output`; it knows nothing
about sockets, so tests drive it with bytes. Every RUN passes the guard first: a blocked query
never reaches the backend, a rewritten one runs rewritten and its findings come back as
notifications / GQL statuses in the final summary.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from proxy.backends.base import (
    Backend,
    BackendError,
    Transaction,
)
from proxy.bolt import diagnostics as diag
from proxy.bolt import messages as m
from proxy.bolt.limits import BoltLimits, GuardPool, judge
from proxy.bolt.queries import QueryHandling
from proxy.bolt.state import State
from proxy.bolt.streaming import OpenResult, ResultPump
from proxy.bolt.values import ValueCodec
from proxy.model import Verdict

if TYPE_CHECKING:
    from proxy.repair.repairer import Repairer

log = logging.getLogger("proxy.bolt")

Guard = Callable[[str, dict[str, Any]], Verdict]
OnQuery = Callable[[dict[str, Any]], None]
# May return an awaitable: a pass-through backend checks the credentials upstream at LOGON.
Authenticate = Callable[[dict[str, Any]], bool | Awaitable[bool]]
Version = tuple[int, int]
# What Neo4j answers for a database it does not have; the message names our finding code.
DATABASE_NOT_FOUND = "Neo.ClientError.Database.DatabaseNotFound"
DATABASE_CODE = "SEC.DATABASE"


class Output(Protocol):
    closed: bool  # the client went away: stop producing

    def write(self, data: bytes | bytearray) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


@dataclass
class ServerContext:
    """What every connection of one server shares (immutable once serving)."""

    guard: Guard
    backend: Backend
    advertised_address: str = "localhost:7687"
    on_query: OnQuery | None = None
    authenticate: Authenticate | None = None
    server_agent: str = "Neo4j/5.26.0"
    home_database: str = "neo4j"
    routing_ttl: int = 300
    fetch_batch: int = 1000
    # DESIGN §6: reads that fail or come back empty are retried by the repair loop
    repairer: Repairer | None = None
    # ask Bolt >= 5.4 clients for TELEMETRY messages (one per query: they go nowhere)
    telemetry: bool = True
    # the names a client may give as its database (BEGIN / RUN / ROUTE `db`); None: any
    databases: frozenset[str] | None = None
    # [limits]: parameters, messages, results, connections, the guard's time budget
    limits: BoltLimits = field(default_factory=BoltLimits)
    # where the guard runs, off the event loop (None: inline, for tests of the state machine)
    guard_pool: GuardPool | None = None

    async def judge(self, query: str, parameters: dict[str, Any]) -> Verdict:
        """The guard's verdict within the limits (see `proxy.bolt.limits.judge`)."""
        return await judge(self.guard, query, parameters, self.limits, self.guard_pool)


# Which requests each state accepts (RESET and GOODBYE are accepted everywhere).
_ALLOWED: dict[State, set[int]] = {
    State.CONNECTED: {m.HELLO},
    State.AUTHENTICATION: {m.LOGON},
    State.READY: {m.RUN, m.BEGIN, m.ROUTE, m.LOGOFF, m.TELEMETRY},
    State.STREAMING: {m.PULL, m.DISCARD, m.TELEMETRY},
    State.TX_READY: {m.RUN, m.COMMIT, m.ROLLBACK, m.TELEMETRY},
    # COMMIT/ROLLBACK with results still open: lenient, the open results are discarded first.
    State.TX_STREAMING: {m.RUN, m.PULL, m.DISCARD, m.COMMIT, m.ROLLBACK, m.TELEMETRY},
}
_SINCE: dict[int, Version] = {m.LOGON: (5, 1), m.LOGOFF: (5, 1), m.TELEMETRY: (5, 4)}
_HANDLERS = {tag: f"_on_{name.lower()}" for tag, name in m.REQUEST_NAMES.items()}


class DatabaseNotServed(BackendError):
    """The client named a database this proxy does not serve (`[backend] databases`)."""

    def __init__(self, name: str, allowed: frozenset[str]) -> None:
        served = ", ".join(repr(n) for n in sorted(allowed) if n) or "none"
        super().__init__(
            f"{DATABASE_CODE}: database {name!r} is not served by this proxy; use the default "
            f"database (no name) or one of: {served}",
            DATABASE_NOT_FOUND,
        )


@dataclass
class NotificationFilter:
    min_severity: str | None = None
    disabled: set[str] = field(default_factory=set)

    def updated(self, extra: dict[str, Any]) -> NotificationFilter:
        severity = extra.get("notifications_minimum_severity", self.min_severity)
        disabled = extra.get(
            "notifications_disabled_classifications",
            extra.get("notifications_disabled_categories"),
        )
        return NotificationFilter(
            severity if isinstance(severity, str) else None,
            {str(c) for c in disabled} if isinstance(disabled, list) else set(self.disabled),
        )


class BoltSession(QueryHandling):
    """One connection's state machine. Call `interrupt()` as soon as a RESET arrives on the
    wire (before it is handled), and `handle()` for every request, in order."""

    def __init__(
        self, ctx: ServerContext, version: Version, out: Output, client: str, connection_id: str
    ) -> None:
        self.ctx = ctx
        self.version = version
        self.out = out
        self.client = client
        self.connection_id = connection_id
        self.codec = ValueCodec(element_ids=version >= (5, 0), utc=version >= (5, 0))
        self._state = State.CONNECTED
        self._interrupts = 0
        self._filter = NotificationFilter()
        self._tx: Transaction | None = None
        self._tx_db: str | None = None
        self._tx_metadata: dict[str, Any] | None = None
        self._tx_filter = self._filter
        self._results: dict[int, OpenResult] = {}
        self._next_qid = 0
        self._last_qid = -1
        self.pump = ResultPump(self)
        self.user: str | None = None  # the principal whose credentials were checked at logon

    # -- state ----------------------------------------------------------------------------

    @property
    def state(self) -> State:
        if self._interrupts and self._state is not State.DEFUNCT:
            return State.INTERRUPTED
        return self._state

    @property
    def closed(self) -> bool:
        return self._state is State.DEFUNCT

    @property
    def interrupted(self) -> bool:
        return self._interrupts > 0

    def interrupt(self) -> None:
        """The <INTERRUPT> signal: a RESET is queued; everything before it is IGNORED."""
        self._interrupts += 1

    def write(self, data: bytes | bytearray) -> None:
        self.out.write(data)

    def success(self, metadata: dict[str, Any] | None = None) -> None:
        self.write(m.success(metadata, self.codec) if metadata else m.SUCCESS_EMPTY)

    def fail(self, code: str, message: str, position: dict[str, int] | None = None) -> None:
        metadata = diag.failure_metadata(code, message, self.version, position)
        self.write(m.failure(metadata, self.codec))
        self._enter_failed()

    def _enter_failed(self) -> None:
        if self._state in (State.CONNECTED, State.AUTHENTICATION):
            self._defunct()
        else:
            self._state = State.FAILED

    def _defunct(self) -> None:
        self._state = State.DEFUNCT
        self.out.close()

    # -- dispatch -------------------------------------------------------------------------

    async def handle(self, req: m.Request) -> None:
        if self._state is State.DEFUNCT:
            return
        if req.tag == m.GOODBYE:
            await self.cleanup()
            self._defunct()
            return
        if req.tag == m.RESET:
            self._interrupts = max(0, self._interrupts - 1)
            await self._reset()
            return
        if self._interrupts or self._state is State.FAILED:
            self.write(m.IGNORED_MESSAGE)
            return
        allowed = _ALLOWED.get(self._state, set())
        if req.tag not in allowed or self.version < _SINCE.get(req.tag, (0, 0)):
            self.fail(
                diag.REQUEST_INVALID,
                f"{req.name} cannot be handled by a connection in the {self._state} state",
            )
            return
        if req.error is not None:
            self.fail(diag.REQUEST_INVALID, req.error)
            return
        handler = getattr(self, _HANDLERS[req.tag])
        try:
            await handler(*req.fields)
        except BackendError as exc:
            await self._backend_failed(exc)
        except Exception:
            log.exception("bolt %s: %s failed", self.connection_id, req.name)
            await self._fail_work(diag.UNKNOWN_ERROR, f"the proxy failed to handle {req.name}")

    async def _backend_failed(self, exc: BackendError) -> None:
        await self._fail_work(exc.code, exc.message)

    async def _fail_work(self, code: str, message: str) -> None:
        """FAILURE for a query that went wrong: its results and transaction are gone."""
        await self._drop_results()
        await self._abort_tx()
        self.fail(code, message)

    async def _reset(self) -> None:
        if self._state in (State.CONNECTED, State.AUTHENTICATION):
            self.fail(diag.REQUEST_INVALID, "RESET before authentication")
            return
        await self.cleanup()
        self._state = State.READY
        self.success()

    async def cleanup(self) -> None:
        """Drop open results and roll back an open transaction (RESET, GOODBYE, disconnect)."""
        await self._drop_results()
        await self._abort_tx()

    async def _drop_results(self) -> None:
        results, self._results = list(self._results.values()), {}
        for result in results:
            try:
                await result.stream.discard()
            except Exception as exc:  # the client is gone or reset; nothing to report to
                log.debug("bolt %s: discard failed: %s", self.connection_id, exc)

    async def _abort_tx(self) -> None:
        tx, self._tx = self._tx, None
        if tx is not None:
            try:
                await tx.rollback()
            except Exception as exc:
                log.debug("bolt %s: rollback failed: %s", self.connection_id, exc)

    # -- connection setup -----------------------------------------------------------------

    async def _on_hello(self, extra: dict[str, Any]) -> None:
        if not isinstance(extra.get("user_agent"), str):
            self.fail(diag.REQUEST_INVALID, "HELLO needs a user_agent")
            return
        self._filter = self._filter.updated(extra)
        meta: dict[str, Any] = {
            "server": self.ctx.server_agent,
            "connection_id": self.connection_id,
        }
        if self.version == (4, 4) and "utc" in (extra.get("patch_bolt") or []):
            self.codec = ValueCodec(element_ids=False, utc=True)
            meta["patch_bolt"] = ["utc"]
        if self.version >= (5, 4):
            meta["hints"] = {"telemetry.enabled": self.ctx.telemetry}
        if self.version < (5, 1):
            auth: dict[str, Any] = {
                k: extra[k] for k in ("scheme", "principal", "credentials") if k in extra
            }
            if not await self._authenticated(auth):
                return
            self._state = State.READY
        else:
            self._state = State.AUTHENTICATION
        self.success(meta)

    async def _authenticated(self, auth: dict[str, Any]) -> bool:
        check = self.ctx.authenticate
        if check is None:
            return True
        accepted = check(auth)
        if inspect.isawaitable(accepted):
            accepted = await accepted
        if accepted:
            principal = auth.get("principal")
            self.user = principal if isinstance(principal, str) else None
            return True
        log.warning("bolt %s: %s refused at logon", self.connection_id, self.client)
        self.fail(
            "Neo.ClientError.Security.Unauthorized",
            "The client is unauthorized due to authentication failure.",
        )
        return False

    async def _on_logon(self, auth: dict[str, Any]) -> None:
        if await self._authenticated(auth):
            self._state = State.READY
            self.success()

    async def _on_logoff(self) -> None:
        self._state = State.AUTHENTICATION
        self.user = None
        self.success()

    async def _on_telemetry(self, api: int) -> None:
        self.success()

    async def _on_route(self, routing: dict[str, Any], bookmarks: list[Any], extra: Any) -> None:
        # Every role points at the proxy itself, so neo4j:// clients never bypass the guard.
        db = extra.get("db") if isinstance(extra, dict) else None
        if isinstance(db, str):
            self._served(db)
        address = self.ctx.advertised_address
        servers = [{"addresses": [address], "role": role} for role in ("ROUTE", "READ", "WRITE")]
        rt = {"ttl": self.ctx.routing_ttl, "db": db or self.ctx.home_database, "servers": servers}
        self.success({"rt": rt})

    # -- transactions ---------------------------------------------------------------------

    def _database(self, extra: dict[str, Any]) -> str | None:
        """The backend database: None for the home database (whatever the backend's default).
        Raises `DatabaseNotServed` for a name outside `[backend] databases`."""
        db = extra.get("db")
        if db is not None and not isinstance(db, str):
            raise DatabaseNotServed(repr(db), self.ctx.databases or frozenset())
        if not db or db == self.ctx.home_database:
            return None
        self._served(db)
        return db

    def _served(self, db: str) -> None:
        allowed = self.ctx.databases
        if allowed is not None and db not in allowed and db != self.ctx.home_database:
            log.warning("bolt %s: database %r refused (%s)", self.connection_id, db, self.user)
            raise DatabaseNotServed(db, allowed)

    def _emit(self, event: dict[str, Any]) -> None:
        """Every audit event names the user whose credentials were checked (None: nobody's)."""
        event["user"] = self.user
        super()._emit(event)

    async def _on_begin(self, extra: dict[str, Any]) -> None:
        metadata = extra.get("tx_metadata")
        self._tx_db = self._database(extra)
        self._tx_filter = self._filter.updated(extra)
        self._tx_metadata = metadata if isinstance(metadata, dict) else None
        self._tx = await self.ctx.backend.begin(self._tx_db, self._tx_metadata)
        self._state = State.TX_READY
        self.success()

    async def _on_commit(self) -> None:
        await self._drop_results()
        tx, self._tx = self._tx, None
        bookmark = await tx.commit() if tx is not None else None
        self._state = State.READY
        self.success({"bookmark": bookmark} if bookmark else {})

    async def _on_rollback(self) -> None:
        await self._drop_results()
        tx, self._tx = self._tx, None
        if tx is not None:
            await tx.rollback()
        self._state = State.READY
        self.success()
