"""The HTTP front (aiohttp): Neo4j's Query API v2 and legacy transactional endpoint, the guard
API (`/v1/*`, described by `/openapi.json`), `/health`, `/ready`, `/metrics` (Prometheus), the
MCP server at `/mcp` (streamable HTTP) and the operator console at `/ui` (`query_guard.console`).

Every query goes through `query_guard.run.service.QueryService` — the same guard, limits, repair
loop and audit as the Bolt front — and every response carries the guard's findings in a
`queryGuard` object. Errors use the Bolt front's Neo4j status codes. Bodies over `max_body`
bytes are refused (413). With an `authenticate` hook (`[server] users`, pass-through
credentials) every path but `/health` and `/ready` needs HTTP Basic or bearer credentials
(`query_guard.frontends.http_auth`). Before that, `query_guard.frontends.http_policy` refuses a
foreign `Host` (421, DNS rebinding), a foreign `Origin` (403) and a POST body that is not
declared JSON (415). The Query API answers in Neo4j's typed JSON when the client accepts
`application/vnd.neo4j.query`, and honours `accessMode: Read`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp_asgi import ASGIResource

from query_guard.backend import BackendError
from query_guard.frontends.http_answers import (
    access_read,
    bad_request,
    blocked,
    body_of,
    error_json,
    failed,
    guard_json,
    optional_text,
    parameters_of,
    text_of,
    v2_answer,
    v2_response,
    verdict_json,
)
from query_guard.frontends.http_auth import USER, AuthHook, HttpAuth
from query_guard.frontends.http_experience import (
    examples_for,
    examples_wanted,
    feedback,
    grounding,
)
from query_guard.frontends.http_plan import validate_plan
from query_guard.frontends.http_policy import McpBodyGuard, RequestPolicy
from query_guard.frontends.http_policy import allowed_hosts as hosts_allowed
from query_guard.frontends.http_tx import NOT_FOUND, HttpTransactions
from query_guard.frontends.http_workers import (
    forward,
    forwarded_client,
    not_found_response,
    socket_of,
)
from query_guard.frontends.json_values import to_json
from query_guard.frontends.openapi import ACCESS_MODES
from query_guard.run.metrics import CONTENT_TYPE, Metrics, of_workers, open_connections
from query_guard.run.peers import Peers
from query_guard.run.service import QueryResult, QueryService
from query_guard.schema.grounding_context import reciprocity_notes, schema_text
from query_guard.schema.samples import MAX_SAMPLES, sample_values, samples_text

log = logging.getLogger("query_guard.http")

MAX_BODY = 1024 * 1024
LANGUAGES = ("cypher", "gremlin", "sql")
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
        allowed_hosts: tuple[str, ...] = (),
        ssl_context: ssl.SSLContext | None = None,
        authenticate: AuthHook | None = None,
        bearer: bool = False,
        anonymous: bool = False,
        console: Any = None,
        peers: Peers | None = None,
    ) -> None:
        self.host, self.port = host, port
        self.ssl_context = ssl_context  # set: https:// only
        self.metrics = metrics
        self._mcp = mcp  # the MCP server (`build_mcp`) served at /mcp (streamable HTTP)
        self._mcp_stop = asyncio.Event()
        self._mcp_task: asyncio.Task[None] | None = None
        self.service = service
        self.databases = {database, "neo4j"}
        self._ready = ready
        self.max_rows = max_rows
        self._runner: web.AppRunner | None = None
        # CORS, then Host / Origin / Content-Type (`http_policy`), then credentials
        policy = RequestPolicy(cors_origins, hosts_allowed(host, allowed_hosts))
        middlewares: list[Any] = policy.middlewares
        if peers is not None:  # first: a request another worker forwarded keeps its client
            middlewares.insert(0, forwarded_client)
        if authenticate is not None:  # after CORS: a preflight carries no credentials
            auth = HttpAuth(authenticate, bearer=bearer, anonymous=anonymous)
            middlewares.append(auth.middleware)
        app = web.Application(client_max_size=max_body, middlewares=middlewares)
        # the other workers of one `serve` (`[server] workers`): /ui and /metrics show them all
        self.peers = peers
        if peers is not None and metrics is not None:
            peers.provide("metrics", metrics.render)
        r = app.router
        r.add_get("/health", self._health)
        r.add_get("/ready", self._readiness)
        r.add_get("/openapi.json", self._openapi)
        r.add_get("/metrics", self._metrics)
        r.add_post("/v1/check", self._check)
        r.add_post("/v1/query", self._query)
        r.add_get("/v1/schema", self._schema)
        r.add_get("/v1/context", self._context)
        r.add_post("/v1/feedback", self._feedback)
        r.add_post("/v1/plan/validate", self._validate_plan)
        r.add_post("/db/{db}/query/v2", self._query_v2)
        r.add_post("/db/{db}/tx/commit", self._tx_commit)
        self.transactions = HttpTransactions(
            service.backend, self._run_in_tx, v2_answer, database=self._database,
            limits=service.limits, worker=self.peers.name if self.peers else "",
            forward=self._to_worker if self.peers else None,
        )  # fmt: skip
        self.transactions.routes(r)
        if console is not None:  # the operator console at /ui (`query_guard.console.page`)
            console.attach(app, self.peers)
        if mcp is not None:
            # registered last: the MCP app answers /mcp, every other path stays ours
            from query_guard.frontends.mcp_sdk import http_app  # the SDK loads only with MCP

            asgi = McpBodyGuard(http_app(mcp), max_body)
            r.register_resource(_McpResource(asgi, root_path="/"))
        self.app = app

    @property
    def connections(self) -> int:
        return open_connections(self._runner)

    async def start(self, reuse_port: bool = False) -> None:
        if self._mcp is not None:
            self._mcp_task = asyncio.create_task(self._run_mcp_sessions())
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(
            self._runner, self.host, self.port, ssl_context=self.ssl_context,
            reuse_port=reuse_port or None,
        )  # fmt: skip
        await site.start()
        if self.peers is not None:  # other workers forward this one's transactions here
            path = socket_of(self.peers.directory, self.peers.name)
            await web.UnixSite(self._runner, str(path)).start()
        server = site._server
        if server is not None and server.sockets:  # type: ignore[attr-defined]
            self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        log.info("http frontend listening on %s:%d", self.host, self.port)

    async def close(self) -> None:
        await self.transactions.close()
        self.service.close()
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

    # ------------------------------------------------------------------ health

    async def _to_worker(self, request: web.Request, worker: str) -> web.Response:
        assert self.peers is not None
        missing = not_found_response(NOT_FOUND, request.match_info["id"])
        return await forward(request, socket_of(self.peers.directory, worker), missing)

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _metrics(self, request: web.Request) -> web.Response:
        if self.metrics is None:
            raise web.HTTPNotFound()
        body = self.metrics.render()
        if self.peers is not None:
            body = of_workers([(self.peers.name, body), *await self.peers.ask("metrics")])
        response = web.Response(body=body)
        response.headers["Content-Type"] = CONTENT_TYPE
        return response

    async def _readiness(self, request: web.Request) -> web.Response:
        state = await self._ready() if self._ready is not None else {"backend": True}
        ok = all(bool(v) for k, v in state.items() if k in ("backend", "schema"))
        return web.json_response({"ready": ok, **state}, status=200 if ok else 503)

    # ------------------------------------------------------------------ guard API

    async def _check(self, request: web.Request) -> web.Response:
        body = await body_of(request)
        text, language = text_of(body, "query"), body.get("language", "cypher")
        if language not in LANGUAGES:
            raise bad_request(f"language must be one of {list(LANGUAGES)}")
        verdict = await self.service.check(text, language, parameters_of(body))
        return web.json_response(verdict_json(verdict))

    async def _query(self, request: web.Request) -> web.Response:
        body = await body_of(request)
        text = text_of(body, "query")
        language = body.get("language", "cypher")
        if language not in LANGUAGES:
            raise bad_request("language must be 'cypher', 'gremlin' or 'sql'")
        question = optional_text(body, "question")
        result = await self.service.run(
            text,
            parameters_of(body),
            front="http",
            client=request.remote or "", user=request.get(USER),
            question=question,
            max_rows=self.max_rows,
            language=language,
        )
        if result.error is not None:
            return failed(result)
        if result.blocked:
            return blocked(result)
        return web.json_response(
            {
                "fields": result.fields,
                "rows": [[to_json(v) for v in row] for row in result.rows],
                "truncated": result.truncated,
                "query": result.query,
                "queryGuard": guard_json(result),
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
        """The grounding context; `?samples=n` adds up to n sample values per property. With
        `?question=…` the answer is JSON: the context text and up to `?examples=K` examples
        of verified queries for similar questions (`query_guard.frontends.http_experience`)."""
        raw = request.query.get("samples", "0")
        if not raw.isdigit() or int(raw) > MAX_SAMPLES:
            raise bad_request(f"'samples' must be a whole number from 0 to {MAX_SAMPLES}")
        k = examples_wanted(request)
        schema = self.service.guard.ctx.schema
        samples = await sample_values(self.service.backend, schema, int(raw))
        text = await grounding(self.service, samples_text(samples))
        if "question" not in request.query:
            return web.Response(text=text)
        examples = await examples_for(request, k, self.service.experience)
        return web.json_response({"context": text, "examples": examples})

    async def _feedback(self, request: web.Request) -> web.Response:
        return await feedback(request, self.service.experience)

    async def _validate_plan(self, request: web.Request) -> web.Response:
        return await validate_plan(request, self.service)

    async def _openapi(self, request: web.Request) -> web.Response:
        from query_guard.frontends.openapi import document

        return web.json_response(document())

    # ------------------------------------------------------------------ Neo4j APIs

    async def _query_v2(self, request: web.Request) -> web.Response:
        db = self._database(request)
        body = await body_of(request)
        result = await self.service.run(
            text_of(body, "statement"), parameters_of(body, request), front="http-query-v2",
            client=request.remote or "", user=request.get(USER), database=db,
            max_rows=self.max_rows, read_access=access_read(body),
            question=optional_text(body, "question"),
        )  # fmt: skip
        answer = v2_answer(request, result)
        return answer if isinstance(answer, web.Response) else v2_response(request, answer)

    async def _run_in_tx(
        self, request: web.Request, body: dict[str, Any], tx: Any, read: bool
    ) -> QueryResult:
        self._database(request)
        return await self.service.run(
            text_of(body, "statement"), parameters_of(body, request), front="http-query-v2",
            client=request.remote or "", user=request.get(USER), max_rows=self.max_rows, tx=tx,
            read_access=read, question=optional_text(body, "question"),
        )  # fmt: skip

    async def _tx_commit(self, request: web.Request) -> web.Response:
        """Neo4j's legacy endpoint: every statement in one backend transaction, committed when
        all ran, rolled back at the first refusal or error; `Access-Mode: READ` refuses
        writes the way a read transaction does."""
        db = self._database(request)
        body = await body_of(request)
        statements = body.get("statements")
        if not isinstance(statements, list) or not all(isinstance(s, dict) for s in statements):
            raise bad_request('the body must be {"statements": [{"statement": …}, …]}')
        mode = request.headers.get("Access-Mode", "WRITE")
        if mode not in ACCESS_MODES:
            raise bad_request(f"Access-Mode must be one of {', '.join(ACCESS_MODES)}")
        read = mode == "READ"
        results: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        guard: list[dict[str, Any]] = []
        tx = await self.service.backend.begin(db, None) if statements else None
        try:
            for item in statements:
                result = await self.service.run(
                    text_of(item, "statement"), parameters_of(item), front="http-tx",
                    client=request.remote or "", user=request.get(USER), database=db,
                    max_rows=self.max_rows, tx=tx, read_access=read,
                    question=optional_text(item, "question"),
                )  # fmt: skip
                guard.append(guard_json(result))
                if result.blocked or result.error is not None:
                    errors.append(error_json(result))
                    break
                results.append({
                    "columns": result.fields,
                    "data": [{"row": [to_json(v) for v in row], "meta": [None] * len(row)}
                             for row in result.rows],
                })  # fmt: skip
        except BaseException:
            await _rollback(tx)
            raise
        if errors:
            errors += await _rollback(tx)
        elif tx is not None:
            await tx.commit()
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


async def _rollback(tx: Any) -> list[dict[str, Any]]:
    """Roll back; a backend that cannot (FalkorDB after a write) says so as one more error."""
    if tx is None:
        return []
    try:
        await tx.rollback()
    except BackendError as exc:
        return [{"code": exc.code, "message": str(exc)}]
    except Exception:  # the backend ended it already, after the failed statement
        return []
    return []


class _McpResource(ASGIResource):  # type: ignore[misc]
    """The MCP app's resource: it answers `/mcp` only, so a wrong method on any other path
    gets aiohttp's 405 and an unknown path its 404 (not the MCP app's)."""

    def raw_match(self, path: str) -> bool:
        return path == "/mcp" or path.startswith("/mcp/")
