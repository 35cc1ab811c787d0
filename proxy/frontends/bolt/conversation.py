"""One Bolt connection's state and its way back to the client (`Conversation`): what the
session (HELLO ... COMMIT), its query handler (RUN) and its result pump (PULL, DISCARD) share.
Each of them receives it explicitly; none reaches into another's attributes."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from query_guard.backend import BackendError, ResultStream, Transaction
from query_guard.frontends.bolt import diagnostics as diag
from query_guard.frontends.bolt.context import DatabaseNotServed, Output, ServerContext
from query_guard.frontends.bolt.state import State
from query_guard.frontends.bolt.tx_timeout import Deadline
from query_guard.model import Verdict
from query_guard.run.seen import Seen
from query_guard.wire import bolt_messages as m
from query_guard.wire.bolt_handshake import Version
from query_guard.wire.bolt_values import ValueCodec

log = logging.getLogger("query_guard.bolt")
_FILTER_KEYS = frozenset({"notifications_minimum_severity",
                          "notifications_disabled_classifications",
                          "notifications_disabled_categories"})  # fmt: skip


@dataclass
class NotificationFilter:
    min_severity: str | None = None
    disabled: set[str] = field(default_factory=set)

    def updated(self, extra: dict[str, Any]) -> NotificationFilter:
        if not _FILTER_KEYS.intersection(extra):  # nothing changes (nothing mutates a filter)
            return self
        severity = extra.get("notifications_minimum_severity", self.min_severity)
        disabled = extra.get(
            "notifications_disabled_classifications",
            extra.get("notifications_disabled_categories"),
        )
        return NotificationFilter(
            severity if isinstance(severity, str) else None,
            {str(c) for c in disabled} if isinstance(disabled, list) else set(self.disabled),
        )


@dataclass(slots=True)
class OpenResult:
    """A result between its RUN and the PULL / DISCARD that exhausts it."""

    stream: ResultStream
    fields: list[str]
    qid: int
    verdict: Verdict
    filter: NotificationFilter
    database: str | None
    in_tx: bool
    records: int = 0
    bytes: int = 0  # of the records sent (`[limits] max_result_bytes`)
    streaming_since: float | None = None
    # the stream's `fetch_raw` when its framed RECORDs can go to this client as they are
    raw: Callable[[int], Awaitable[list[bytes]]] | None = None
    seen: Seen | None = None  # the run it belongs to (its query id), told the runner at the end
    first_row: Any = None  # the first record sent, when decoded (None: relayed undecoded)
    deadline: Deadline | None = None  # the client's tx_timeout (query_guard…bolt.tx_timeout)


class Conversation:
    """The state of one client connection and the replies written to it."""

    def __init__(
        self, ctx: ServerContext, version: Version, out: Output, client: str, connection_id: str
    ) -> None:
        self.ctx = ctx
        self.version = version
        self.out = out
        # replies go straight to the output's buffer (one call fewer per reply)
        self.write: Callable[[bytes | bytearray], None] = out.write
        self.client = client
        self.connection_id = connection_id
        self.codec = ValueCodec(element_ids=version >= (5, 0), utc=version >= (5, 0))
        self.state = State.CONNECTED
        self.interrupts = 0  # RESETs seen on the wire and not yet handled
        self.filter = NotificationFilter()
        self.tx: Transaction | None = None
        self.tx_db: str | None = None
        self.tx_metadata: dict[str, Any] | None = None
        self.tx_filter = self.filter
        self.tx_deadline: Deadline | None = None  # the open transaction's tx_timeout
        self.results: dict[int, OpenResult] = {}
        self.next_qid = 0
        self.last_qid = -1
        self.user: str | None = None  # the principal whose credentials were checked at logon

    @property
    def interrupted(self) -> bool:
        return self.interrupts > 0

    @property
    def in_tx(self) -> bool:
        return self.state in (State.TX_READY, State.TX_STREAMING)

    # -- replies --------------------------------------------------------------------------

    def success(self, metadata: dict[str, Any] | None = None) -> None:
        self.write(m.success(metadata, self.codec) if metadata else m.SUCCESS_EMPTY)

    def fail(self, code: str, message: str, position: dict[str, int] | None = None) -> None:
        metadata = diag.failure_metadata(code, message, self.version, position)
        self.failure(metadata)

    def failure(self, metadata: dict[str, Any]) -> None:
        """Write a FAILURE and enter FAILED (DEFUNCT before authentication)."""
        self.write(m.failure(metadata, self.codec))
        if self.state in (State.CONNECTED, State.AUTHENTICATION):
            self.defunct()
        else:
            self.state = State.FAILED

    def defunct(self) -> None:
        self.state = State.DEFUNCT
        self.out.close()

    # -- work that went wrong -------------------------------------------------------------

    async def fail_work(self, code: str, message: str) -> None:
        """FAILURE for a query that went wrong: its results and transaction are gone."""
        await self.drop_results()
        await self.abort_tx()
        self.fail(code, message)

    async def backend_failed(self, exc: BackendError) -> None:
        await self.fail_work(exc.code, exc.message)

    async def drop_results(self) -> None:
        results, self.results = list(self.results.values()), {}
        for result in results:
            try:
                await result.stream.discard()
            except Exception as exc:  # the client is gone or reset; nothing to report to
                log.debug("bolt %s: discard failed: %s", self.connection_id, exc)

    async def abort_tx(self) -> None:
        tx, self.tx, self.tx_deadline = self.tx, None, None
        if tx is not None:
            try:
                await tx.rollback()
            except Exception as exc:
                log.debug("bolt %s: rollback failed: %s", self.connection_id, exc)

    # -- databases and audit --------------------------------------------------------------

    def database(self, extra: dict[str, Any]) -> str | None:
        """`ServerContext.database`, logging a refusal with who asked."""
        try:
            return self.ctx.database(extra)
        except DatabaseNotServed:
            log.warning("bolt %s: database %r refused (%s)", self.connection_id,
                        extra.get("db"), self.user)  # fmt: skip
            raise

    def check_served(self, db: str) -> None:
        try:
            self.ctx.check_served(db)
        except DatabaseNotServed:
            log.warning("bolt %s: database %r refused (%s)", self.connection_id, db, self.user)
            raise

    def emit(self, event: dict[str, Any]) -> None:
        """Audit one query; every event names the user whose credentials were checked."""
        if self.ctx.on_query is None:
            return
        event["user"] = self.user
        try:
            self.ctx.on_query(event)
        except Exception:  # auditing must never break the query path
            log.exception("bolt %s: on_query hook raised", self.connection_id)
