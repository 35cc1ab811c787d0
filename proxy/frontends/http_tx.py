"""Explicit transactions of Neo4j's Query API v2 on the HTTP front.

`POST /db/{db}/query/v2/tx` opens one (and runs the statement of the body, if any),
`POST …/tx/{id}` runs a statement in it, `POST …/tx/{id}/commit` commits (after running the
body's statement, if any), `DELETE …/tx/{id}` rolls it back. A transaction expires
`timeout` seconds after its last request (rolled back, then unknown:
`Neo.ClientError.Transaction.TransactionNotFound`); a statement that is blocked or fails
rolls its transaction back, as Neo4j does. A transaction opened with `accessMode: Read` refuses
every statement that writes (`Neo.ClientError.Statement.AccessMode`).

Each open transaction holds a backend transaction (a connection on Bolt backends), so they are
capped as Bolt connections are: per client address (`[limits] max_connections_per_client`) and
in total (`[limits] max_connections`); one more is refused with 429 and Neo4j's
`Neo.TransientError.Transaction.MaximumTransactionLimitReached`, naming the limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from query_guard.backend import BackendError
from query_guard.frontends.http_answers import (
    access_read,
    bad_request,
    json_of,
    parameters_of,
    text_of,
    v2_response,
)
from query_guard.run.limits import Limits
from query_guard.run.service import QueryResult

NOT_FOUND = "Neo.ClientError.Transaction.TransactionNotFound"
TOO_MANY = "Neo.TransientError.Transaction.MaximumTransactionLimitReached"
# guard + execute one statement of a body in a transaction (read: `accessMode: Read`)
Run = Callable[[web.Request, dict[str, Any], Any, bool], Awaitable[QueryResult]]
Respond = Callable[[web.Request, QueryResult], dict[str, Any] | web.Response]
Forward = Callable[[web.Request, str], Awaitable[web.Response]]  # the request, the owner


@dataclass
class _Open:
    tx: Any
    expires: dt.datetime
    read: bool = False
    timer: asyncio.TimerHandle | None = None
    client: str = ""  # the address that opened it (the per-client cap)


class HttpTransactions:
    def __init__(
        self,
        backend: Any,
        run: Run,
        respond: Respond,
        timeout: float = 30.0,
        database: Callable[[web.Request], Any] | None = None,
        limits: Limits | None = None,
        worker: str = "",
        forward: Forward | None = None,
    ) -> None:
        self._backend = backend
        self._database = database  # checks `{db}` (raises the 404)
        self._run = run  # guard + execute one statement of a body in a transaction
        self._respond = respond  # the Query API body for a result, or an error response
        self._timeout = timeout
        self._limits = limits or Limits()
        self._open: dict[str, _Open] = {}
        # several workers (`http_workers`): ids name the worker; another's are forwarded there
        self._worker, self._forward = worker, forward

    def routes(self, router: web.UrlDispatcher) -> None:
        router.add_post("/db/{db}/query/v2/tx", self._begin)
        router.add_post("/db/{db}/query/v2/tx/{id}", self._statement)
        router.add_post("/db/{db}/query/v2/tx/{id}/commit", self._commit)
        router.add_delete("/db/{db}/query/v2/tx/{id}", self._rollback)

    async def close(self) -> None:
        for tx_id in list(self._open):
            await self._drop(tx_id, rollback=True)

    # ------------------------------------------------------------------ handlers

    async def _begin(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        read = access_read(body)
        client = request.remote or ""
        self._check_caps(client)
        tx = await self._backend.begin(None, None)
        tx_id = f"{self._worker}-{secrets.token_hex(8)}" if self._worker else secrets.token_hex(8)
        self._open[tx_id] = _Open(tx, _now(), read, client=client)
        self._touch(tx_id)
        return await self._run_in(request, tx_id, body)

    async def _statement(self, request: web.Request) -> web.Response:
        if (elsewhere := self._elsewhere(request)) is not None:
            return await elsewhere
        tx_id = self._known(request)
        self._touch(tx_id)
        return await self._run_in(request, tx_id, await self._body(request))

    async def _commit(self, request: web.Request) -> web.Response:
        if (elsewhere := self._elsewhere(request)) is not None:
            return await elsewhere
        tx_id = self._known(request)
        body = await self._body(request)
        payload: dict[str, Any] = {}
        if "statement" in body:
            entry = self._open[tx_id]
            answer = self._respond(request, await self._run(request, body, entry.tx, entry.read))
            if isinstance(answer, web.Response):
                await self._drop(tx_id, rollback=True)
                return answer
            payload = answer
        entry = self._open.pop(tx_id)
        if entry.timer is not None:
            entry.timer.cancel()
        bookmark = await entry.tx.commit()
        payload["bookmarks"] = [bookmark] if bookmark else []
        return v2_response(request, payload)

    async def _rollback(self, request: web.Request) -> web.Response:
        if (elsewhere := self._elsewhere(request)) is not None:
            return await elsewhere
        tx_id = self._known(request)
        entry = self._open[tx_id]
        await self._drop(tx_id, rollback=False)
        try:
            await entry.tx.rollback()
        except BackendError as exc:  # FalkorDB: what a statement changed stays; say so
            error = {"code": exc.code, "message": exc.message}
            return web.json_response({"errors": [error], "bookmarks": []}, status=400)
        return web.json_response({"bookmarks": []})

    # ------------------------------------------------------------------ helpers

    async def _run_in(self, request: web.Request, tx_id: str, body: dict[str, Any]) -> web.Response:
        entry = self._open[tx_id]
        payload: dict[str, Any] = {}
        if "statement" in body:
            answer = self._respond(request, await self._run(request, body, entry.tx, entry.read))
            if isinstance(answer, web.Response):
                await self._drop(tx_id, rollback=True)
                return answer
            payload = answer
        payload["transaction"] = {"id": tx_id, "expires": entry.expires.isoformat()}
        payload.setdefault("bookmarks", [])
        return v2_response(request, payload)

    async def _body(self, request: web.Request) -> dict[str, Any]:
        """The request's body (may be empty), its `{db}`, statement and parameters checked
        before anything runs."""
        if self._database is not None:
            self._database(request)
        body = await _optional_body(request)
        if "statement" in body:
            text_of(body, "statement")
        parameters_of(body, request)
        access_read(body)
        return body

    def _check_caps(self, client: str) -> None:
        """Refuse one transaction too many (429), before a backend transaction is opened."""
        total, per_client = self._limits.max_connections, self._limits.max_connections_per_client
        mine = sum(1 for entry in self._open.values() if entry.client == client)
        if total and len(self._open) >= total:
            why = f"{len(self._open)} transactions are open ([limits] max_connections)"
        elif per_client and mine >= per_client:
            why = (f"{mine} transactions from {client} are open "
                   "([limits] max_connections_per_client)")  # fmt: skip
        else:
            return
        error = {"code": TOO_MANY, "message": f"refused: {why}. Commit or roll back one first"}
        raise web.HTTPTooManyRequests(
            text=json.dumps({"errors": [error]}), content_type="application/json"
        )

    def _elsewhere(self, request: web.Request) -> Awaitable[web.Response] | None:
        """The answer of the worker that opened this transaction, if another one did."""
        owner, sep, _ = request.match_info["id"].partition("-")
        if self._forward is None or not sep or owner == self._worker:
            return None
        return self._forward(request, owner)

    def _known(self, request: web.Request) -> str:
        if self._database is not None:
            self._database(request)
        tx_id = request.match_info["id"]
        if tx_id not in self._open:
            error = {"code": NOT_FOUND, "message": f"transaction {tx_id} is not open (expired, "
                                                    "committed or rolled back)"}  # fmt: skip
            raise web.HTTPNotFound(
                text=json.dumps({"errors": [error]}), content_type="application/json"
            )
        return tx_id

    def _touch(self, tx_id: str) -> None:
        entry = self._open[tx_id]
        if entry.timer is not None:
            entry.timer.cancel()
        entry.expires = _now() + dt.timedelta(seconds=self._timeout)
        loop = asyncio.get_running_loop()
        entry.timer = loop.call_later(
            self._timeout, lambda: loop.create_task(self._drop(tx_id, rollback=True))
        )

    async def _drop(self, tx_id: str, rollback: bool) -> None:
        entry = self._open.pop(tx_id, None)
        if entry is None:
            return
        if entry.timer is not None:
            entry.timer.cancel()
        if rollback:
            # the backend may have ended it already (after a failed statement)
            with contextlib.suppress(Exception):
                await entry.tx.rollback()


async def _optional_body(request: web.Request) -> dict[str, Any]:
    if not request.can_read_body:
        return {}
    body = await json_of(request)
    if not isinstance(body, dict):
        raise bad_request("the body must be a JSON object")
    return body


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
