"""The Bolt server state machine for one client connection (spec: "server state").

It receives decoded requests in order and writes responses through an `Output`; it knows nothing
about sockets, so tests drive it with bytes. Every RUN passes the guard first: a blocked query
never reaches the backend, a rewritten one runs rewritten and its findings come back as
notifications / GQL statuses in the final summary.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from proxy.backends.base import (
    Backend,
    BackendError,
    BackendUnavailable,
    ResultStream,
    Transaction,
)
from proxy.bolt import diagnostics as diag
from proxy.bolt import messages as m
from proxy.bolt.streaming import OpenResult, ResultPump
from proxy.bolt.values import ValueCodec
from proxy.model import Action, Verdict

if TYPE_CHECKING:
    from proxy.repair import Repairer

log = logging.getLogger("proxy.bolt")

Guard = Callable[[str, dict[str, Any]], Verdict]
OnQuery = Callable[[dict[str, Any]], None]
Authenticate = Callable[[dict[str, Any]], bool]
Version = tuple[int, int]


class State(StrEnum):
    CONNECTED = "CONNECTED"
    AUTHENTICATION = "AUTHENTICATION"
    READY = "READY"
    STREAMING = "STREAMING"
    TX_READY = "TX_READY"
    TX_STREAMING = "TX_STREAMING"
    FAILED = "FAILED"
    INTERRUPTED = "INTERRUPTED"
    DEFUNCT = "DEFUNCT"


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


class BoltSession:
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
        self.write(m.success(metadata or {}, self.codec))

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
        handler = getattr(self, f"_on_{req.name.lower()}")
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
            meta["hints"] = {"telemetry.enabled": True}
        if self.version < (5, 1):
            auth: dict[str, Any] = {
                k: extra[k] for k in ("scheme", "principal", "credentials") if k in extra
            }
            if not self._authenticated(auth):
                return
            self._state = State.READY
        else:
            self._state = State.AUTHENTICATION
        self.success(meta)

    def _authenticated(self, auth: dict[str, Any]) -> bool:
        check = self.ctx.authenticate
        if check is None or check(auth):
            return True
        self.fail("Neo.ClientError.Security.Unauthorized", "invalid credentials")
        return False

    async def _on_logon(self, auth: dict[str, Any]) -> None:
        if self._authenticated(auth):
            self._state = State.READY
            self.success()

    async def _on_logoff(self) -> None:
        self._state = State.AUTHENTICATION
        self.success()

    async def _on_telemetry(self, api: int) -> None:
        self.success()

    async def _on_route(self, routing: dict[str, Any], bookmarks: list[Any], extra: Any) -> None:
        # Every role points at the proxy itself, so neo4j:// clients never bypass the guard.
        db = extra.get("db") if isinstance(extra, dict) else None
        address = self.ctx.advertised_address
        servers = [{"addresses": [address], "role": role} for role in ("ROUTE", "READ", "WRITE")]
        rt = {"ttl": self.ctx.routing_ttl, "db": db or self.ctx.home_database, "servers": servers}
        self.success({"rt": rt})

    # -- transactions ---------------------------------------------------------------------

    def _database(self, extra: dict[str, Any]) -> str | None:
        """The backend database: None for the home database (whatever the backend's default)."""
        db = extra.get("db")
        return None if not isinstance(db, str) or db in ("", self.ctx.home_database) else db

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

    # -- queries --------------------------------------------------------------------------

    async def _on_run(self, query: str, parameters: dict[str, Any], extra: dict[str, Any]) -> None:
        in_tx = self._state in (State.TX_READY, State.TX_STREAMING)
        database = self._tx_db if in_tx else self._database(extra)
        event: dict[str, Any] = {
            "client": self.client,
            "connection_id": self.connection_id,
            "bolt_version": f"{self.version[0]}.{self.version[1]}",
            "query": query,
            "database": database,
            "in_transaction": in_tx,
            # clients may attach the natural-language question here (DESIGN §6)
            "tx_metadata": self._tx_metadata if in_tx else extra.get("tx_metadata"),
            "backend_ms": None,
            "error": None,
        }
        try:
            stream, verdict = await self._guarded_run(
                query, parameters, database, in_tx, event, extra.get("tx_metadata")
            )
        except Exception:
            event["error"] = event["error"] or diag.UNKNOWN_ERROR
            raise
        finally:
            self._emit(event)
        if stream is None or verdict is None:
            return
        filters = (self._tx_filter if in_tx else self._filter).updated(extra)
        qid = self._next_qid if in_tx else -1
        self._next_qid += in_tx
        self._results[qid] = OpenResult(
            stream, list(stream.keys), qid, verdict, filters, database, in_tx
        )
        self._last_qid = qid
        meta: dict[str, Any] = {"fields": list(stream.keys), "t_first": event["backend_ms"] or 0}
        if in_tx:
            meta["qid"] = qid
        self._state = State.TX_STREAMING if in_tx else State.STREAMING
        self.success(meta)

    async def _guarded_run(
        self,
        query: str,
        parameters: dict[str, Any],
        database: str | None,
        in_tx: bool,
        event: dict[str, Any],
        extra_metadata: Any = None,
    ) -> tuple[ResultStream | None, Verdict | None]:
        started = time.perf_counter()
        try:
            verdict = self.ctx.guard(query, parameters)
        except Exception:
            # Fail closed: a query the guard could not judge is not forwarded.
            log.exception("bolt %s: guard raised", self.connection_id)
            event.update(action="error", final_query=None, codes=[], guard_ms=_ms(started))
            event["error"] = diag.UNKNOWN_ERROR
            await self._abort_tx()
            self.fail(diag.UNKNOWN_ERROR, "the query guard failed on this query")
            return None, None
        final = verdict.query if verdict.action is Action.REWRITE else query
        event.update(
            action=str(verdict.action),
            final_query=None if verdict.blocked else final,
            codes=verdict.codes,
            guard_ms=_ms(started),
        )
        if verdict.blocked:
            failure = diag.block_failure(verdict, self.version)
            event["error"] = failure.get("code") or failure.get("neo4j_code")
            await self._abort_tx()
            self.write(m.failure(failure, self.codec))
            self._enter_failed()
            return None, None
        started = time.perf_counter()
        tx = self._tx if in_tx else None

        async def execute(text: str, params: dict[str, Any]) -> ResultStream:
            if tx is not None:
                return await tx.run(text, params)
            return await self.ctx.backend.run(text, params, database)

        try:
            stream = await execute(final, parameters)
        except BackendError as exc:
            if not self._repairs(final, in_tx, exc):
                event.update(backend_ms=_ms(started), error=exc.code)
                await self._backend_failed(exc)
                return None, None
            stream = exc
        if not isinstance(stream, BackendError) and not self._repairs(final, in_tx, None):
            event["backend_ms"] = _ms(started)
            return stream, verdict
        assert self.ctx.repairer is not None
        outcome = await self.ctx.repairer.run(
            final,
            execute=execute,
            check=lambda text: self.ctx.guard(text, parameters),
            parameters=parameters,
            question=_question(self._tx_metadata if in_tx else extra_metadata),
            first=stream,
            retry_errors=not in_tx,
        )
        event.update(backend_ms=_ms(started), final_query=outcome.query)
        if len(outcome.attempts) > 1:
            event["repair"] = [a.to_dict() for a in outcome.attempts]
        if outcome.error is not None or outcome.stream is None:
            exc = outcome.error or BackendError("the repair loop produced no result")
            event["error"] = exc.code
            await self._backend_failed(exc)
            return None, None
        return outcome.stream, outcome.verdict(verdict)

    def _repairs(self, query: str, in_tx: bool, error: BackendError | None) -> bool:
        """Does the repair loop see this result? (It retries reads only, and only when they
        fail or come back empty; it parses the query only then.) Inside an explicit
        transaction only empty results are repaired: a failed statement ends the transaction
        on Neo4j, so a retry there could not run (FalkorDB would allow it; one rule for all)."""
        repairer = self.ctx.repairer
        if repairer is None or not repairer.settings.enabled:
            return False
        return error is None or not (in_tx or isinstance(error, BackendUnavailable))

    def _emit(self, event: dict[str, Any]) -> None:
        if self.ctx.on_query is None:
            return
        try:
            self.ctx.on_query(event)
        except Exception:  # auditing must never break the query path
            log.exception("bolt %s: on_query hook raised", self.connection_id)

    def _result_for(self, extra: dict[str, Any]) -> OpenResult | None:
        qid = extra.get("qid", -1)
        if not isinstance(qid, int) or isinstance(qid, bool):
            return None
        if qid == -1:
            qid = self._last_qid
        return self._results.get(qid)

    async def _on_pull(self, extra: dict[str, Any]) -> None:
        await self._stream(extra, discard=False)

    async def _on_discard(self, extra: dict[str, Any]) -> None:
        await self._stream(extra, discard=True)

    async def _stream(self, extra: dict[str, Any], discard: bool) -> None:
        n = extra.get("n", -1)
        if type(n) is not int or not (n > 0 or n == -1):
            self.fail(diag.REQUEST_INVALID, f"n must be a positive integer or -1, not {n!r}")
            return
        result = self._result_for(extra)
        if result is None:
            self.fail(diag.REQUEST_INVALID, f"no open result for qid {extra.get('qid', -1)}")
            return
        done = await self.pump.run(result, n, discard)
        if done is None:  # interrupted by a RESET: that RESET's handling cleans up
            self.write(m.IGNORED_MESSAGE)
            return
        if done:
            self._results.pop(result.qid, None)
            if result.in_tx:
                self._state = State.TX_STREAMING if self._results else State.TX_READY
            else:
                self._state = State.READY


def _question(metadata: Any) -> str | None:
    """The natural-language question a client attached as tx metadata (DESIGN §6)."""
    question = metadata.get("question") if isinstance(metadata, dict) else None
    return question if isinstance(question, str) and question.strip() else None


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
