"""The Bolt server state machine for one client connection (spec: "server state").

It receives decoded requests in order and writes responses through an `Output`; it knows nothing
about sockets, so tests drive it with bytes. Every RUN passes the guard first (`QueryHandler`):
a blocked query never reaches the backend, a rewritten one runs rewritten and its findings come
back as notifications / GQL statuses in the final summary. The connection's state lives in one
`Conversation` that the session and its query handler are both given.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from query_guard.backend import BackendError
from query_guard.frontends.bolt import diagnostics as diag
from query_guard.frontends.bolt.context import Output, ServerContext
from query_guard.frontends.bolt.conversation import Conversation
from query_guard.frontends.bolt.queries import QueryHandler
from query_guard.frontends.bolt.state import State
from query_guard.frontends.bolt.tx_timeout import CLIENT_TIMEOUT_CODE, deadline, expired
from query_guard.wire import bolt_messages as m
from query_guard.wire.bolt_handshake import Version
from query_guard.wire.bolt_values import ValueCodec

log = logging.getLogger("query_guard.bolt")

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
_NONE: frozenset[int] = frozenset()
_SINCE: dict[int, Version] = {m.LOGON: (5, 1), m.LOGOFF: (5, 1), m.TELEMETRY: (5, 4)}
Handler = Callable[..., Awaitable[None]]


class BoltSession:
    """One connection's state machine. Call `interrupt()` as soon as a RESET arrives on the
    wire (before it is handled), and `handle()` for every request, in order."""

    def __init__(
        self, ctx: ServerContext, version: Version, out: Output, client: str, connection_id: str
    ) -> None:
        self.ctx = ctx
        self.version = version
        self.connection_id = connection_id
        self.conv = Conversation(ctx, version, out, client, connection_id)
        self.queries = QueryHandler(self.conv)
        # each request's handler, by message tag (RESET and GOODBYE are handled in `handle`)
        self._handlers: dict[int, Handler] = {
            m.HELLO: self._on_hello,
            m.LOGON: self._on_logon,
            m.LOGOFF: self._on_logoff,
            m.TELEMETRY: self._on_telemetry,
            m.ROUTE: self._on_route,
            m.BEGIN: self._on_begin,
            m.COMMIT: self._on_commit,
            m.ROLLBACK: self._on_rollback,
            m.RUN: self.queries.on_run,
            m.PULL: self.queries.on_pull,
            m.DISCARD: self.queries.on_discard,
        }

    # -- state ----------------------------------------------------------------------------

    @property
    def state(self) -> State:
        conv = self.conv
        if conv.interrupts and conv.state is not State.DEFUNCT:
            return State.INTERRUPTED
        return conv.state

    @property
    def codec(self) -> ValueCodec:
        return self.conv.codec

    @property
    def closed(self) -> bool:
        return self.conv.state is State.DEFUNCT

    @property
    def interrupted(self) -> bool:
        return self.conv.interrupted

    def interrupt(self) -> None:
        """The <INTERRUPT> signal: a RESET is queued; everything before it is IGNORED."""
        self.conv.interrupts += 1

    # -- dispatch -------------------------------------------------------------------------

    async def handle(self, req: m.Request) -> None:
        conv = self.conv
        if conv.state is State.DEFUNCT:
            return
        if req.tag == m.GOODBYE:
            await self.cleanup()
            conv.defunct()
            return
        if req.tag == m.RESET:
            conv.interrupts = max(0, conv.interrupts - 1)
            await self._reset()
            return
        if conv.interrupts or conv.state is State.FAILED:
            conv.write(m.IGNORED_MESSAGE)
            return
        allowed = _ALLOWED.get(conv.state, _NONE)
        if req.tag not in allowed or self.version < _SINCE.get(req.tag, (0, 0)):
            conv.fail(
                diag.REQUEST_INVALID,
                f"{req.name} cannot be handled by a connection in the {conv.state} state",
            )
            return
        if req.error is not None:
            conv.fail(diag.REQUEST_INVALID, req.error)
            return
        try:
            await self._handlers[req.tag](*req.fields)
        except BackendError as exc:
            await conv.backend_failed(exc)
        except Exception:
            log.exception("bolt %s: %s failed", self.connection_id, req.name)
            await conv.fail_work(diag.UNKNOWN_ERROR, f"the proxy failed to handle {req.name}")

    async def _reset(self) -> None:
        conv = self.conv
        if conv.state in (State.CONNECTED, State.AUTHENTICATION):
            conv.fail(diag.REQUEST_INVALID, "RESET before authentication")
            return
        await self.cleanup()
        conv.state = State.READY
        conv.success()

    async def cleanup(self) -> None:
        """Drop open results and roll back an open transaction (RESET, GOODBYE, disconnect)."""
        await self.conv.drop_results()
        await self.conv.abort_tx()

    # -- connection setup -----------------------------------------------------------------

    async def _on_hello(self, extra: dict[str, Any]) -> None:
        conv = self.conv
        if not isinstance(extra.get("user_agent"), str):
            conv.fail(diag.REQUEST_INVALID, "HELLO needs a user_agent")
            return
        conv.filter = conv.filter.updated(extra)
        meta: dict[str, Any] = {
            "server": self.ctx.server_agent,
            "connection_id": self.connection_id,
        }
        if self.version == (4, 4) and "utc" in (extra.get("patch_bolt") or []):
            conv.codec = ValueCodec(element_ids=False, utc=True)
            meta["patch_bolt"] = ["utc"]
        if self.version >= (5, 4):
            meta["hints"] = {"telemetry.enabled": self.ctx.telemetry}
        if self.version < (5, 1):
            auth: dict[str, Any] = {
                k: extra[k] for k in ("scheme", "principal", "credentials") if k in extra
            }
            if not await self._authenticated(auth):
                return
            conv.state = State.READY
        else:
            conv.state = State.AUTHENTICATION
        conv.success(meta)

    async def _authenticated(self, auth: dict[str, Any]) -> bool:
        check = self.ctx.authenticate
        if check is None:
            return True
        accepted = check(auth)
        if inspect.isawaitable(accepted):
            accepted = await accepted
        if accepted:
            principal = auth.get("principal")
            self.conv.user = principal if isinstance(principal, str) else None
            return True
        log.warning("bolt %s: %s refused at logon", self.connection_id, self.conv.client)
        self.conv.fail(
            "Neo.ClientError.Security.Unauthorized",
            "The client is unauthorized due to authentication failure.",
        )
        return False

    async def _on_logon(self, auth: dict[str, Any]) -> None:
        if await self._authenticated(auth):
            self.conv.state = State.READY
            self.conv.success()

    async def _on_logoff(self) -> None:
        self.conv.state = State.AUTHENTICATION
        self.conv.user = None
        self.conv.success()

    async def _on_telemetry(self, api: int) -> None:
        self.conv.success()

    async def _on_route(self, routing: dict[str, Any], bookmarks: list[Any], extra: Any) -> None:
        # Every role points at the proxy (or its balancer / peers): neo4j:// clients never
        # bypass the guard.
        db = extra.get("db") if isinstance(extra, dict) else None
        if isinstance(db, str):
            self.conv.check_served(db)
        addresses = list(self.ctx.advertised_address)
        servers = [{"addresses": addresses, "role": role} for role in ("ROUTE", "READ", "WRITE")]
        rt = {"ttl": self.ctx.routing_ttl, "db": db or self.ctx.home_database, "servers": servers}
        self.conv.success({"rt": rt})

    # -- transactions ---------------------------------------------------------------------

    async def _on_begin(self, extra: dict[str, Any]) -> None:
        conv = self.conv
        metadata = extra.get("tx_metadata")
        conv.tx_db = conv.database(extra)
        conv.tx_filter = conv.filter.updated(extra)
        conv.tx_metadata = metadata if isinstance(metadata, dict) else None
        conv.tx = await self.ctx.backend.begin(conv.tx_db, conv.tx_metadata)
        conv.tx_deadline = deadline(extra)
        conv.state = State.TX_READY
        conv.success()

    async def _on_commit(self) -> None:
        conv = self.conv
        if expired(conv.tx_deadline):  # Neo4j has terminated it: nothing to commit
            assert conv.tx_deadline is not None
            await conv.fail_work(CLIENT_TIMEOUT_CODE, conv.tx_deadline.message)
            return
        await conv.drop_results()
        tx, conv.tx, conv.tx_deadline = conv.tx, None, None
        bookmark = await tx.commit() if tx is not None else None
        conv.state = State.READY
        conv.success({"bookmark": bookmark} if bookmark else {})

    async def _on_rollback(self) -> None:
        conv = self.conv
        await conv.drop_results()
        tx, conv.tx, conv.tx_deadline = conv.tx, None, None
        if tx is not None:
            await tx.rollback()
        conv.state = State.READY
        conv.success()
