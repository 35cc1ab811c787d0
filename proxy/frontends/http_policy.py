"""Who may reach the HTTP front from a browser: CORS, `Origin`, `Host` and `Content-Type`.

A web page can send a "simple" cross-origin POST (`text/plain`, no preflight) to a proxy on
the user's machine, and a page whose name is re-pointed at 127.0.0.1 (DNS rebinding) is
same-origin with the proxy. So, before any handler or credential check:

* `Host` must name the proxy (`[server] http_allowed_hosts`; by default the loopback names
  when it listens on loopback, the listen address otherwise, anything when it listens on every
  interface) — else 421;
* a request carrying an `Origin` must come from one of `[server] http_cors_origins` ("*" =
  any) — else 403 (clients that are no browser send no `Origin`, nor does a browser for a
  same-origin GET);
* a POST with a body must say `Content-Type: application/json` (a charset may follow; Neo4j's
  typed `application/vnd.neo4j.query` too) — else 415, so a body no browser may send
  cross-origin without a preflight is never read as JSON.

`/health` and `/ready` (probes) are exempt. Errors use the front's shape: Neo4j's
`{"errors": [{code, message}]}`, or a JSON-RPC error at `/mcp`. `McpBodyGuard` wraps the MCP
SDK's ASGI app: its bodies get the size limit and the JSON nesting bound of every other body.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from aiohttp import web

from query_guard.frontends.json_bodies import JsonBodyError, parse_json

OPEN_PATHS = frozenset({"/health", "/ready"})
JSON = "application/json"
TYPED = "application/vnd.neo4j.query"  # Neo4j's typed JSON (also `….v1.1`)
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
FORBIDDEN = "Neo.ClientError.Security.Forbidden"
INVALID_FORMAT = "Neo.ClientError.Request.InvalidFormat"
PARSE_ERROR, INVALID_REQUEST = -32700, -32600  # JSON-RPC error codes
Asgi = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def host_name(value: str) -> str:
    """The host of a `Host` header or listen address, without port or brackets, lower case."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    if value.count(":") == 1:
        value = value.partition(":")[0]
    return value.rstrip(".")


def allowed_hosts(listen_host: str, configured: Iterable[str]) -> frozenset[str] | None:
    """The `Host` names the front answers (None: any). `configured` (`[server]
    http_allowed_hosts`) replaces the default; "*" in it means any."""
    names = frozenset(host_name(n) for n in configured)
    if "*" in names:
        return None
    if names:
        return names
    listen = host_name(listen_host)
    if listen in ("", "0.0.0.0", "::"):
        return None  # every interface: any name may reach it (documented in SECURITY.md)
    if listen == "localhost" or _is_loopback(listen):
        return frozenset({*LOOPBACK_NAMES, listen})
    return frozenset({listen})


def _is_loopback(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def refusal(path: str, status: int, code: str, message: str) -> web.Response:
    """An error in the shape of the front that `path` belongs to."""
    if path == "/mcp" or path.startswith("/mcp/"):
        rpc = PARSE_ERROR if status == 400 else INVALID_REQUEST
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": None,
                                "error": {"code": rpc, "message": message}}  # fmt: skip
    else:
        body = {"errors": [{"code": code, "message": message}]}
    return web.json_response(body, status=status)


class RequestPolicy:
    """The CORS and checking middlewares (`middlewares`, CORS first so refusals a page may
    read carry its headers)."""

    def __init__(self, cors_origins: Iterable[str], hosts: frozenset[str] | None) -> None:
        self.cors_origins = frozenset(cors_origins)
        self.hosts = hosts

    @property
    def middlewares(self) -> list[Any]:
        return [self.cors, self.check]

    def origin_allowed(self, origin: str | None) -> bool:
        return origin is not None and (origin in self.cors_origins or "*" in self.cors_origins)

    @web.middleware
    async def cors(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """CORS only for the configured origins (`[server] http_cors_origins`; "*" = any)."""
        origin = request.headers.get("Origin")
        allowed = self.origin_allowed(origin)
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

    @web.middleware
    async def check(self, request: web.Request, handler: Any) -> web.StreamResponse:
        refused = None if request.path in OPEN_PATHS else self.refusal(request)
        return refused if refused is not None else await handler(request)

    def refusal(self, request: web.Request) -> web.Response | None:
        """Why `request` is refused (None: it is not)."""
        path = request.path
        host = request.headers.get("Host")
        if self.hosts is not None and host is not None and host_name(host) not in self.hosts:
            return refusal(path, 421, FORBIDDEN, (
                f"this proxy does not answer to the host name {host_name(host)!r} (a DNS "
                f"rebinding guard); allowed: {', '.join(sorted(self.hosts))} — add it to "
                "[server] http_allowed_hosts"
            ))  # fmt: skip
        origin = request.headers.get("Origin")
        if origin is not None and not self.origin_allowed(origin):
            return refusal(path, 403, FORBIDDEN, (
                f"requests from the web origin {origin!r} are refused; allow it in [server] "
                "http_cors_origins"
            ))  # fmt: skip
        if request.method == "POST" and (request.body_exists or "Content-Type" in request.headers):
            media = request.headers.get("Content-Type", "").partition(";")[0].strip().lower()
            if media != JSON and not media.startswith(TYPED):
                return refusal(path, 415, INVALID_FORMAT, (
                    f"the body must be sent as Content-Type: application/json, not "
                    f"{media or 'without a Content-Type'!r}"
                ))  # fmt: skip
        return None


class McpBodyGuard:
    """The MCP SDK's ASGI app behind the body checks of the rest of the front: a POST body over
    `max_body` bytes gets 413, one that is not UTF-8 JSON or nests too deeply a JSON-RPC parse
    error (400), before the SDK parses it (its JSON parser recurses)."""

    def __init__(self, app: Asgi, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message.get("type") != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            more = bool(message.get("more_body", False))
            if self.max_body and len(body) > self.max_body:
                await _rpc_error(send, 413, INVALID_REQUEST,
                                 f"the body is larger than {self.max_body} bytes "
                                 "([server] http_max_body_bytes)")  # fmt: skip
                return
        try:
            parse_json(bytes(body))
        except JsonBodyError as exc:
            await _rpc_error(send, 400, PARSE_ERROR, f"Parse error: {exc}")
            return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()  # type: ignore[no-any-return]
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)


async def _rpc_error(send: Any, status: int, code: int, message: str) -> None:
    payload = json.dumps({"jsonrpc": "2.0", "id": None,
                          "error": {"code": code, "message": message}}).encode()  # fmt: skip
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(payload)).encode())]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload, "more_body": False})
