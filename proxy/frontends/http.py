"""The HTTP front (aiohttp): Neo4j's Query API v2 and legacy transactional endpoint, the guard
API (`/v1/*`, described by `/openapi.json`), `/health`, `/ready`, `/metrics` (Prometheus) and
the MCP server at `/mcp` (streamable HTTP).

Every query goes through `proxy.service.QueryService` — the same guard, repair loop and audit
as the Bolt front — and every response carries the guard's findings in a `queryGuard` object.
Errors use the Bolt front's Neo4j status codes. Bodies over `max_body` bytes are refused (413).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp_asgi import ASGIResource

from proxy.bolt import diagnostics as diag
from proxy.frontends.http_tx import HttpTransactions
from proxy.frontends.json_values import to_json
from proxy.grounding_context import context_text, reciprocity_notes, schema_text
from proxy.metrics import CONTENT_TYPE, Metrics
from proxy.model import Verdict
from proxy.service import QueryResult, QueryService

log = logging.getLogger("proxy.http")

MAX_BODY = 1024 * 1024
LANGUAGES = ("cypher", "gremlin")
Ready = Callable[[], Awaitable[dict[str, Any]]]


class HttpFrontend:
    """`await start()`; `.port` afterwards; `await close()`."""

    def __init__(
        self,
        host: str,
        port: int,
        service: QueryService,
        *,
        database: str = "neo4j",
        ready: Ready | None = None,
        max_body: int = MAX_BODY,
        max_rows: int = 10_000,
        metrics: Metrics | None = None,
        mcp: Any = None,
        cors_origins: tuple[str, ...] = (),
    ) -> None:
        self.host, self.port = host, port
        self.metrics = metrics
        self._mcp = mcp  # a FastMCP app served at /mcp (streamable HTTP)
        self._mcp_stop = asyncio.Event()
        self._mcp_task: asyncio.Task[None] | None = None
        self.service = service
        self.databases = {database, "neo4j"}
        self._ready = ready
        self.max_rows = max_rows
        self._runner: web.AppRunner | None = None
        self.cors_origins = frozenset(cors_origins)
        app = web.Application(client_max_size=max_body, middlewares=[self._cors])
        r = app.router
        r.add_get("/health", self._health)
        r.add_get("/ready", self._readiness)
        r.add_get("/openapi.json", self._openapi)
        r.add_get("/metrics", self._metrics)
        r.add_post("/v1/check", self._check)
        r.add_post("/v1/query", self._query)
        r.add_get("/v1/schema", self._schema)
        r.add_get("/v1/context", self._context)
        r.add_post("/db/{db}/query/v2", self._query_v2)
        r.add_post("/db/{db}/tx/commit", self._tx_commit)
        self.transactions = HttpTransactions(service.backend, self._run_in_tx, _v2_answer)
        self.transactions.routes(r)
        if mcp is not None:
            # registered last: the MCP app answers /mcp, every other path stays ours
            r.register_resource(ASGIResource(mcp.streamable_http_app(), root_path="/"))
        self.app = app

    async def start(self) -> None:
        if self._mcp is not None:
            self._mcp_task = asyncio.create_task(self._run_mcp_sessions())
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = site._server
        if server is not None and server.sockets:  # type: ignore[attr-defined]
            self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        log.info("http frontend listening on %s:%d", self.host, self.port)

    async def close(self) -> None:
        await self.transactions.close()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()
        if self._mcp_task is not None:
            self._mcp_stop.set()
            await self._mcp_task

    async def _run_mcp_sessions(self) -> None:
        """The MCP session manager lives in one task of its own (its task group must be
        entered and left by the same task)."""
        async with self._mcp.session_manager.run():
            await self._mcp_stop.wait()

    @web.middleware
    async def _cors(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """CORS only for the configured origins (`[server] http_cors_origins`; "*" = any)."""
        origin = request.headers.get("Origin")
        allowed = origin is not None and (origin in self.cors_origins or "*" in self.cors_origins)
        if request.method == "OPTIONS" and allowed:
            response: web.StreamResponse = web.Response(status=204)
        else:
            response = await handler(request)
        if allowed:
            response.headers["Access-Control-Allow-Origin"] = origin or ""
            response.headers["Vary"] = "Origin"
            if request.method == "OPTIONS":
                response.headers["Access-Control-Allow-Methods"] = "GET, POST, DELETE, OPTIONS"
                response.headers["Access-Control-Allow-Headers"] = (
                    "Authorization, Content-Type, Accept"
                )
        return response

    # ------------------------------------------------------------------ health

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _metrics(self, request: web.Request) -> web.Response:
        if self.metrics is None:
            raise web.HTTPNotFound()
        response = web.Response(body=self.metrics.render())
        response.headers["Content-Type"] = CONTENT_TYPE
        return response

    async def _readiness(self, request: web.Request) -> web.Response:
        state = await self._ready() if self._ready is not None else {"backend": True}
        ok = all(bool(v) for k, v in state.items() if k in ("backend", "schema"))
        return web.json_response({"ready": ok, **state}, status=200 if ok else 503)

    # ------------------------------------------------------------------ guard API

    async def _check(self, request: web.Request) -> web.Response:
        body = await _body(request)
        text, language = _text(body, "query"), body.get("language", "cypher")
        if language not in LANGUAGES:
            raise _bad_request(f"language must be one of {list(LANGUAGES)}")
        verdict = await self.service.check(text, language)
        return web.json_response(_verdict_json(verdict))

    async def _query(self, request: web.Request) -> web.Response:
        body = await _body(request)
        text = _text(body, "query")
        if body.get("language", "cypher") != "cypher":
            raise _bad_request("only language 'cypher' runs here (use the Gremlin front)")
        question = body.get("question")
        result = await self.service.run(
            text,
            _parameters(body),
            front="http",
            client=request.remote or "",
            question=question if isinstance(question, str) else None,
            max_rows=self.max_rows,
        )
        if result.blocked:
            return _blocked(result.verdict)
        if result.error is not None:
            return _failed(result)
        return web.json_response(
            {
                "fields": result.fields,
                "rows": [[to_json(v) for v in row] for row in result.rows],
                "truncated": result.truncated,
                "query": result.query,
                "queryGuard": _guard_json(result),
            }
        )

    async def _schema(self, request: web.Request) -> web.Response:
        schema = self.service.guard.ctx.schema
        if schema is None:
            return web.json_response({"schema": None, "note": "no schema discovered yet"})
        return web.json_response(
            {"schema": schema.to_dict(), "text": schema_text(schema),
             "reciprocity": reciprocity_notes(schema)}
        )

    async def _context(self, request: web.Request) -> web.Response:
        return web.Response(text=context_text(self.service.guard.ctx.schema))

    async def _openapi(self, request: web.Request) -> web.Response:
        from proxy.frontends.openapi import document

        return web.json_response(document())

    # ------------------------------------------------------------------ Neo4j APIs

    async def _query_v2(self, request: web.Request) -> web.Response:
        db = self._database(request)
        body = await _body(request)
        result = await self.service.run(
            _text(body, "statement"), _parameters(body), front="http-query-v2",
            client=request.remote or "", database=db, max_rows=self.max_rows,
        )  # fmt: skip
        answer = _v2_answer(result)
        return answer if isinstance(answer, web.Response) else web.json_response(answer, status=202)

    async def _run_in_tx(self, request: web.Request, body: dict[str, Any], tx: Any) -> QueryResult:
        self._database(request)
        return await self.service.run(
            _text(body, "statement"), _parameters(body), front="http-query-v2",
            client=request.remote or "", max_rows=self.max_rows, tx=tx,
        )  # fmt: skip

    async def _tx_commit(self, request: web.Request) -> web.Response:
        db = self._database(request)
        body = await _body(request)
        statements = body.get("statements")
        if not isinstance(statements, list):
            raise _bad_request('the body must be {"statements": [{"statement": …}, …]}')
        results: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        guard: list[dict[str, Any]] = []
        for item in statements:
            if not isinstance(item, dict):
                raise _bad_request("each statement must be an object")
            result = await self.service.run(
                _text(item, "statement"), _parameters(item), front="http-tx",
                client=request.remote or "", database=db, max_rows=self.max_rows,
            )  # fmt: skip
            guard.append(_guard_json(result))
            if result.blocked or result.error is not None:
                errors.append(_error_json(result))
                break  # Neo4j rolls the transaction back at the first error
            results.append(
                {
                    "columns": result.fields,
                    "data": [{"row": [to_json(v) for v in row], "meta": [None] * len(row)}
                             for row in result.rows],
                }
            )
        return web.json_response({"results": results, "errors": errors, "queryGuard": guard})

    def _database(self, request: web.Request) -> str | None:
        """The configured graph (None: the backend's own) for `{db}`, which must be its name
        or `neo4j`, the name Neo4j clients default to; anything else is not reachable."""
        db = request.match_info["db"]
        if db not in self.databases:
            raise web.HTTPNotFound(
                text=json.dumps({"errors": [{
                    "code": "Neo.ClientError.Database.DatabaseNotFound",
                    "message": f"database {db!r} does not exist here; use "
                               f"{' or '.join(sorted(self.databases))}",
                }]}),
                content_type="application/json",
            )
        return None


# ---------------------------------------------------------------------- helpers


async def _body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError) as exc:
        raise _bad_request(f"the body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise _bad_request("the body must be a JSON object")
    return body


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str):
        raise _bad_request(f"'{key}' must be a string")
    return value


def _parameters(body: dict[str, Any]) -> dict[str, Any]:
    params = body.get("parameters") or {}
    if not isinstance(params, dict):
        raise _bad_request("'parameters' must be an object")
    return params


def _bad_request(message: str) -> web.HTTPBadRequest:
    error = {"code": diag.REQUEST_INVALID, "message": message}
    return web.HTTPBadRequest(text=json.dumps({"errors": [error]}), content_type="application/json")


def _v2_answer(result: QueryResult) -> dict[str, Any] | web.Response:
    """A Query API v2 body for a result, or the error response for a blocked/failed one."""
    if result.blocked:
        return _blocked(result.verdict)
    if result.error is not None:
        return _failed(result)
    return {
        "data": {
            "fields": result.fields,
            "values": [[to_json(v) for v in row] for row in result.rows],
        },
        "bookmarks": [],
        "queryGuard": _guard_json(result),
    }


def _verdict_json(verdict: Verdict) -> dict[str, Any]:
    return {
        "action": str(verdict.action),
        "query": verdict.query,
        "forward": None if verdict.blocked else verdict.to_run,
        "findings": [f.to_dict() for f in verdict.findings],
    }


def _guard_json(result: QueryResult) -> dict[str, Any]:
    out = _verdict_json(result.verdict)
    if result.attempts:
        out["attempts"] = result.attempts
    return out


def _error_json(result: QueryResult) -> dict[str, Any]:
    if result.blocked:
        blocking = diag.blocking_findings(result.verdict)
        message = "\n".join(diag.finding_line(f) for f in blocking) or "blocked by the guard"
        return {"code": diag.block_code(result.verdict), "message": message}
    assert result.error is not None
    return {"code": result.error.code, "message": result.error.message}


def _blocked(verdict: Verdict) -> web.Response:
    result = QueryResult(verdict)
    body = {"errors": [_error_json(result)], "queryGuard": _verdict_json(verdict)}
    return web.json_response(body, status=400)


def _failed(result: QueryResult) -> web.Response:
    body = {"errors": [_error_json(result)], "queryGuard": _guard_json(result)}
    return web.json_response(body, status=400)
