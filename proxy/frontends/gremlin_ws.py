"""The Gremlin front: a Gremlin Server endpoint (`ws://host:port/gremlin`) for TinkerPop drivers.

Speaks the driver protocol (aiohttp WebSocket; binary frames with a mime prefix, GraphBinary
v1 or GraphSON v3, see `query_guard.wire.gremlin`) and Gremlin Server's HTTP form
(`POST /gremlin {"gremlin": …, "bindings": …}`). Ops:

* `eval` — the script is parsed and guarded as Gremlin and executed as a traversal (printed
  from the judged AST), never as Groovy; `bindings` are the traversal's variables.
* `bytecode` — read into the same AST (lambdas refused), printed canonically, guarded the same
  way; results are sent as traversers.

The request's `aliases` (`{"g": "gmodern"}`) pick the graph: `g` is the configured one, other
names the graphs of `[backend] gremlin_graphs`, each guarded with its own catalog; another
name is answered 499.

* `authentication` — when the front has an `authenticate` check (`[server] users`): a request
  on a connection that has not authenticated is answered 407; the client sends SASL PLAIN
  (`sasl` = base64 of `\\0user\\0password`) under the same request id; the original request
  is then answered, wrong credentials get 401. The HTTP form takes HTTP Basic auth.

Results leave in batches (`batchSize`, default 64): 206 for each partial batch, 200 for the
last, 204 for none. A guard block is 597 with the findings in the message; a malformed
request 498/499; an engine failure 597 (the evaluation failed) or 500. Nothing a client sends
takes the listener down.

Every traversal goes through the runner (`query_guard.run`), as on every front: bindings checked
against `[limits]` (`LIM.PARAMETERS`), the guard in a bounded pool within `guard_timeout_ms`
(`LIM.TIMEOUT`), the backend, the repair of an empty result (`query_guard.repair.gremlin`), the
result cut by `[limits]` (`LIM.RESULT_SIZE`) and one audit record. Findings of a traversal
that ran reach the client as the last response's status attributes `warnings` (lines) and
`findings` (code, severity, message, hint), on a 200 even without results. The client's
question (opting in to speculative repairs) is the request argument / HTTP field `question`
or `g.with_("question", …)`.
"""

from __future__ import annotations

import base64
import binascii
import inspect
import json
import logging
import ssl
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BasicAuth, WSMsgType, hdrs, web
from gremlin_python.process.traversal import Bytecode, Traverser

from query_guard.backend import BackendError
from query_guard.frontends.gremlin_requests import (
    Rejected,
    block_message,
    bytecode_bindings,
    status_attributes,
    take_question,
    traversal_source,
)
from query_guard.gremlin.bytecode import from_bytecode
from query_guard.gremlin.errors import BytecodeError, GremlinScriptError
from query_guard.gremlin.printer import to_text
from query_guard.model import Finding
from query_guard.run.cuts import collect
from query_guard.run.guard_pool import blocked
from query_guard.run.metrics import open_connections
from query_guard.run.request import QueryRequest
from query_guard.run.runner import Runner
from query_guard.run.seen import Seen
from query_guard.run.status import FORBIDDEN, block_code
from query_guard.wire import gremlin as wire

log = logging.getLogger("query_guard.gremlin")

# The Bolt front's logon check, reused: {"scheme": "basic", "principal", "credentials"} -> ok
Authenticate = Callable[[dict[str, Any]], bool | Awaitable[bool]]

DEFAULT_BATCH = 64
MAX_FRAME = 16 * 1024 * 1024
MAX_PENDING = 16  # requests kept per connection while it has not authenticated


class GremlinFrontend:
    """`await start()`; `.port` afterwards; `await close()`."""

    def __init__(
        self,
        host: str,
        port: int,
        runner: Runner,
        *,
        max_frame: int = MAX_FRAME,
        ssl_context: ssl.SSLContext | None = None,
        authenticate: Authenticate | None = None,
    ) -> None:
        self.host, self.port = host, port
        self.ssl_context = ssl_context  # set: wss:// / https:// only
        self._runner = runner  # the request path: guard, limits, backend, repair, audit
        self._authenticate = authenticate
        self._max_frame = max_frame
        self._recent = wire.RecentRequests()  # requests repeat but for their id
        self._runner_app: web.AppRunner | None = None
        app = web.Application(client_max_size=max_frame)
        app.router.add_get("/gremlin", self._websocket)
        app.router.add_post("/gremlin", self._http)
        self.app = app

    @property
    def connections(self) -> int:
        return open_connections(self._runner_app)

    async def start(self, reuse_port: bool = False) -> None:
        self._runner_app = web.AppRunner(self.app, access_log=None)
        await self._runner_app.setup()
        site = web.TCPSite(
            self._runner_app, self.host, self.port, ssl_context=self.ssl_context,
            reuse_port=reuse_port or None,
        )  # fmt: skip
        await site.start()
        server = site._server  # aiohttp exposes the bound port only here
        if server is not None and server.sockets:  # type: ignore[attr-defined]
            self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        log.info("gremlin frontend listening on %s:%d", self.host, self.port)

    async def close(self) -> None:
        if self._runner_app is not None:
            app_runner, self._runner_app = self._runner_app, None
            await app_runner.cleanup()

    # ------------------------------------------------------------------ WebSocket

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(max_msg_size=self._max_frame, autoping=True)
        await ws.prepare(request)
        peer = request.remote or "?"
        session = _Session(authenticated=self._authenticate is None)
        async for msg in ws:
            if msg.type is WSMsgType.BINARY:
                frame: bytes = msg.data
            elif msg.type is WSMsgType.TEXT:  # GraphSON sent as a text frame
                frame = bytes([len(wire.GRAPHSON3)]) + wire.GRAPHSON3.encode() + msg.data.encode()
            else:
                break
            for reply in await self._handle_frame(frame, peer, session):
                await ws.send_bytes(reply)
        return ws

    async def _handle_frame(
        self, frame: bytes, peer: str, session: _Session | None = None
    ) -> list[bytes]:
        try:
            req = wire.decode_request(frame, self._recent)
        except wire.WireError as exc:
            mime = _mime_of(frame)
            status = wire.MALFORMED_REQUEST
            return [wire.encode_response(mime, exc.request_id, status, None, str(exc))]
        if session is not None and not session.authenticated:
            pending = await self._sasl(req, session)
            if pending is None or isinstance(pending, bytes):
                return [pending] if pending else []
            req = pending
        try:
            user = session.user if session is not None else None
            results, findings, qg_id = await self._serve(req, peer, user)
        except Rejected as exc:
            return [wire.encode_response(req.mime, req.request_id, exc.status, None, exc.message,
                                         exc.attributes)]  # fmt: skip
        batch, attributes = _batch_size(req.args), status_attributes(findings)
        if not results and not attributes:
            return [wire.encode_response(req.mime, req.request_id, wire.NO_CONTENT, [], "",
                                         {"qg_id": qg_id})]  # fmt: skip
        attributes["qg_id"] = qg_id  # the query id, the client's handle for feedback
        replies = []
        try:
            for start in range(0, max(len(results), 1), batch):
                chunk = results[start : start + batch]
                last = start + batch >= len(results)
                status = wire.SUCCESS if last else wire.PARTIAL_CONTENT
                attrs = attributes if last else None
                reply = wire.encode_response(req.mime, req.request_id, status, chunk, "", attrs)
                replies.append(reply)
        except Exception as exc:  # a value the serializer cannot write: answer, stay up
            log.warning("gremlin: cannot serialize a result: %r", exc)
            message = f"a result could not be serialized: {exc!r}"
            code = wire.SERIALIZATION_ERROR
            return [wire.encode_response(req.mime, req.request_id, code, None, message)]
        return replies

    async def _sasl(self, req: wire.Request, session: _Session) -> wire.Request | bytes | None:
        """Gremlin Server's SASL PLAIN exchange on a connection that has not authenticated:
        the request to answer now, or the reply (407 challenge, 401 refusal) to send."""
        if req.op != "authentication":
            if len(session.pending) >= MAX_PENDING:  # a client that never authenticates
                session.pending.pop(next(iter(session.pending)))
            session.pending[req.request_id] = req
            return wire.encode_response(req.mime, req.request_id, wire.AUTHENTICATE, None, "")
        original = session.pending.pop(req.request_id, None)
        mechanism = req.args.get("saslMechanism", "PLAIN")
        user, password = _sasl_plain(req.args.get("sasl")) if mechanism == "PLAIN" else (None, None)
        if user is None or not await self._verify(user, password or ""):
            log.info("gremlin: authentication failed for %r", user)
            message = "Username and/or password are incorrect"
            return wire.encode_response(req.mime, req.request_id, wire.UNAUTHORIZED, None, message)
        session.authenticated, session.user = True, user
        session.pending.clear()
        if original is None:  # authentication sent first, on its own
            return wire.encode_response(req.mime, req.request_id, wire.NO_CONTENT, [])
        return original

    async def _verify(self, user: str, password: str) -> bool:
        if self._authenticate is None:
            return True
        auth = {"scheme": "basic", "principal": user, "credentials": password}
        accepted = self._authenticate(auth)
        return bool(await accepted if inspect.isawaitable(accepted) else accepted)

    # ------------------------------------------------------------------ HTTP

    async def _http(self, request: web.Request) -> web.StreamResponse:
        user = None
        if self._authenticate is not None:
            refused = await self._http_auth(request)
            if refused is not None:
                return refused
            user = BasicAuth.decode(request.headers.get(hdrs.AUTHORIZATION, "")).login
        body = await request.read()
        try:
            payload = json.loads(body)
            if not isinstance(payload, dict) or not isinstance(payload.get("gremlin"), str):
                raise ValueError('the body must be {"gremlin": "<script>", "bindings": {…}}')
        except ValueError as exc:
            return _http_error(wire.MALFORMED_REQUEST, str(exc))
        args = {"gremlin": payload["gremlin"], "bindings": payload.get("bindings") or {}}
        if isinstance(payload.get("question"), str):
            args["question"] = payload["question"]
        req = wire.Request(uuid.uuid4(), "eval", "", args, wire.GRAPHSON3)
        try:
            results, findings, qg_id = await self._serve(req, request.remote or "?", user)
        except Rejected as exc:
            return _http_error(exc.status, exc.message, exc.qg_id)
        attributes = {**status_attributes(findings), "qg_id": qg_id}
        try:
            text = wire.encode_response(
                wire.GRAPHSON3, req.request_id, wire.SUCCESS, results, "", attributes
            )
        except Exception as exc:  # a value the serializer cannot write
            message = f"a result could not be serialized: {exc!r}"
            return _http_error(wire.SERIALIZATION_ERROR, message)
        return web.Response(body=text, content_type="application/json")

    async def _http_auth(self, request: web.Request) -> web.Response | None:
        """HTTP Basic auth for the HTTP form (None: accepted)."""
        try:
            basic = BasicAuth.decode(request.headers.get(hdrs.AUTHORIZATION, ""))
        except ValueError:
            basic = None
        if basic is not None and await self._verify(basic.login, basic.password):
            return None
        body = {"message": "Username and/or password are incorrect", "code": wire.UNAUTHORIZED}
        headers = {hdrs.WWW_AUTHENTICATE: 'Basic realm="query-guard"'}
        return web.json_response(body, status=401, headers=headers)

    # ------------------------------------------------------------------ one request

    async def _serve(
        self, req: wire.Request, peer: str, user: str | None = None
    ) -> tuple[list[Any], list[Finding], str]:
        """The results, findings and query id of one request, or `Rejected` with the status
        to send.
        Every request leaves one audit record: the runner's, or `refused` when it never
        reached the runner."""
        detail = {"op": req.op, "request_id": str(req.request_id)}
        query = QueryRequest("", "gremlin", "gremlin", client=peer, user=user, detail=detail)
        try:
            self._read(req, query)
        except Rejected as exc:
            detail["status"] = exc.status
            self._runner.refused(query, exc.verdict, exc.code)
            raise
        outcome = await self._runner.run(query)
        verdict = outcome.verdict
        if outcome.guard_failed:
            raise Rejected(wire.SERVER_ERROR, "the query guard failed on this query",
                           qg_id=query.id)  # fmt: skip
        if outcome.blocked:
            message = block_message(verdict)
            raise Rejected(wire.SCRIPT_EVALUATION_ERROR, message, block_code(verdict),
                           qg_id=query.id)  # fmt: skip
        if outcome.error is not None or outcome.stream is None:
            error = outcome.error or BackendError("the traversal produced no result")
            raise Rejected(wire.SCRIPT_EVALUATION_ERROR, error.message, error.code,
                           qg_id=query.id)  # fmt: skip
        limits = self._runner.limits
        try:
            got = await collect(outcome.stream, limits.max_result_rows, limits.max_result_bytes)
        except BackendError:
            self._runner.finished(Seen(query, outcome, read_error=True))
            raise
        first = got.rows[0] if got.rows else None
        self._runner.finished(Seen(query, outcome, len(got.rows), first, got.cut is not None))
        findings = list(verdict.findings) + ([got.cut] if got.cut is not None else [])
        results = [row[0] for row in got.rows]
        if req.op == "bytecode":
            return [Traverser(r, 1) for r in results], findings, query.id
        return results, findings, query.id

    def _read(self, req: wire.Request, query: QueryRequest) -> None:
        """The traversal's text, bindings and question into `query` (Rejected: unreadable)."""
        if req.op == "authentication":
            raise Rejected(wire.INVALID_REQUEST_ARGUMENTS, "authentication is not configured")
        if req.op not in ("eval", "bytecode"):
            raise Rejected(wire.INVALID_REQUEST_ARGUMENTS, f"op {req.op!r} is not supported")
        query.database = traversal_source(req.args, self._runner.routes.get("gremlin"))
        gremlin = req.args.get("gremlin")
        bindings = req.args.get("bindings") or {}
        if not isinstance(bindings, Mapping):
            raise Rejected(wire.INVALID_REQUEST_ARGUMENTS, "bindings must be a map")
        question = req.args.get("question")
        if req.op == "bytecode" and isinstance(gremlin, Bytecode):
            gremlin, asked = take_question(gremlin)
            question = question if isinstance(question, str) else asked
        query.question = question if isinstance(question, str) else None
        if req.op == "eval":
            if not isinstance(gremlin, str):
                raise Rejected(wire.INVALID_REQUEST_ARGUMENTS, "eval needs a gremlin script")
            query.text, query.parameters = gremlin, dict(bindings)
            return
        try:
            query.text = to_text(from_bytecode(gremlin))  # type: ignore[arg-type]
            query.parameters = {**bytecode_bindings(gremlin), **bindings}
        except GremlinScriptError as exc:
            query.text = repr(gremlin)
            message = f"SEC.SCRIPT error: {exc}"
            verdict = blocked(query.text, "SEC.SCRIPT", str(exc))
            raise Rejected(wire.SCRIPT_EVALUATION_ERROR, message, FORBIDDEN, verdict) from exc
        except (BytecodeError, Exception) as exc:
            message = f"unreadable bytecode: {exc}"
            raise Rejected(wire.INVALID_REQUEST_ARGUMENTS, message) from exc


@dataclass
class _Session:
    """One WebSocket connection's authentication state."""

    authenticated: bool
    user: str | None = None  # whose credentials were checked (None: nobody's)
    pending: dict[uuid.UUID, wire.Request] = field(default_factory=dict)


def _sasl_plain(sasl: Any) -> tuple[str | None, str | None]:
    """(user, password) of a SASL PLAIN response (`authzid \\0 user \\0 password`, base64)."""
    try:
        raw = base64.b64decode(sasl, validate=True) if isinstance(sasl, str) else bytes(sasl)
        _, user, password = raw.split(b"\0", 2)
        return user.decode("utf-8"), password.decode("utf-8")
    except (ValueError, TypeError, binascii.Error):
        return None, None


def _batch_size(args: Mapping[str, Any]) -> int:
    size = args.get("batchSize")
    return (
        size
        if isinstance(size, int) and not isinstance(size, bool) and size > 0
        else (DEFAULT_BATCH)
    )


def _mime_of(frame: bytes) -> str:
    try:
        mime, _ = wire.split_frame(frame)
    except wire.WireError:
        return wire.GRAPHBINARY
    return mime if mime.split(";")[0] in wire.MIME_TYPES else wire.GRAPHBINARY


def _http_error(status: int, message: str, qg_id: str = "") -> web.Response:
    body: dict[str, Any] = {"message": message, "code": status}
    if qg_id:  # a run that reached the runner: the handle for feedback
        body["qg_id"] = qg_id
    http = 400 if status in (wire.MALFORMED_REQUEST, wire.INVALID_REQUEST_ARGUMENTS) else 500
    return web.json_response(body, status=http)
