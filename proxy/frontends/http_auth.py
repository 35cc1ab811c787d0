"""Who may use the HTTP front: HTTP Basic or bearer credentials, checked by the same hook as the
Bolt front's logon — `[server] users` (scrypt hashes, `query_guard.config.auth`) and/or the
backend's pass-through (`[backend] credentials = "passthrough"`: the request's credentials
become the backend session's, and the first accepted request discovers a schema that waits for
a client's credentials).

Without such a hook the front checks nothing (as before). With one, every path but `/health`
and `/ready` (probes) needs credentials — the Query API, the guard API `/v1/*`, `/mcp`,
`/metrics`, `/openapi.json` — and a request without acceptable ones gets 401 with
`Neo.ClientError.Security.Unauthorized` and a `WWW-Authenticate` challenge, as Neo4j answers.
(A pass-through backend with an account of its own, and no users configured, serves
requests without credentials with that account, as the Bolt front does.)

Each request is served in a task of its own, so the credentials it brings (kept in a context
variable by the pass-through hook) reach that request's backend calls and no other's.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import inspect
from collections.abc import Callable
from typing import Any

from aiohttp import web

UNAUTHORIZED = "Neo.ClientError.Security.Unauthorized"
OPEN_PATHS = frozenset({"/health", "/ready"})
USER = "query_guard.user"  # the request key of the principal whose credentials were checked
AuthHook = Callable[[dict[str, Any]], Any]


def auth_map(header: str | None) -> dict[str, Any] | None:
    """An `Authorization` header as a Bolt auth map (None: missing or malformed)."""
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer" and value:
        return {"scheme": "bearer", "credentials": value}
    if scheme.lower() != "basic" or not value:
        return None
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    principal, sep, credentials = decoded.partition(":")
    if not sep:
        return None
    return {"scheme": "basic", "principal": principal, "credentials": credentials}


def unauthorized(message: str, challenge: str) -> web.Response:
    body = {"errors": [{"code": UNAUTHORIZED, "message": message}]}
    response = web.json_response(body, status=401)
    response.headers["WWW-Authenticate"] = challenge
    return response


class HttpAuth:
    """The middleware: `check` is the logon hook (an auth map -> accepted, maybe awaitable)."""

    def __init__(self, check: AuthHook, *, bearer: bool = False, anonymous: bool = False) -> None:
        self.check = check
        # a request without credentials goes to the hook as scheme "none" (a pass-through
        # backend's own account serves it) instead of getting 401 at once
        self.anonymous = anonymous
        # a bearer token is only worth sending where the backend judges credentials itself
        self.challenge = 'Basic realm="query-guard"' + (
            ', Bearer realm="query-guard"' if bearer else ""
        )

    @web.middleware
    async def middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path in OPEN_PATHS or request.method == "OPTIONS":
            return await handler(request)  # type: ignore[no-any-return]
        header = request.headers.get("Authorization")
        auth = auth_map(header)
        if auth is None and header is None and self.anonymous:
            auth = {"scheme": "none"}
        if auth is None:
            return unauthorized(
                "No authentication header supplied (HTTP Basic or Bearer).", self.challenge
            )

        async def authenticated() -> web.StreamResponse:
            accepted = self.check(auth)
            if inspect.isawaitable(accepted):
                accepted = await accepted
            if not accepted:
                return unauthorized(
                    "The client is unauthorized due to authentication failure.", self.challenge
                )
            request[USER] = auth.get("principal")  # the audit record's `user`
            return await handler(request)  # type: ignore[no-any-return]

        # its own task: the credentials the hook keeps stay with this request
        return await asyncio.create_task(authenticated())

