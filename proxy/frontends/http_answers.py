"""Request bodies and response bodies of the HTTP front: JSON bodies read strictly (400 with
`Neo.ClientError.Request.Invalid`), Query API answers in plain or typed JSON (chosen by the
`Accept` header; typed parameters read when the `Content-Type` says so), and errors with the
Bolt front's Neo4j status codes beside the guard's findings (`queryGuard`)."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from query_guard.frontends.bolt import diagnostics as diag
from query_guard.frontends.http_auth import UNAUTHORIZED
from query_guard.frontends.json_bodies import JsonBodyError, parse_json
from query_guard.frontends.json_values import from_typed, to_json, to_typed
from query_guard.model import Verdict
from query_guard.run.service import QueryResult

TYPED = "application/vnd.neo4j.query"  # Neo4j's typed JSON (also `….v1.1`)
CHALLENGE = 'Basic realm="query-guard"'


def typed_requested(request: web.Request) -> str | None:
    """The typed-JSON media type the client accepts (None: plain JSON)."""
    for part in request.headers.get("Accept", "").split(","):
        media = part.split(";", 1)[0].strip().lower()
        if media.startswith(TYPED):
            return media
    return None


async def json_of(request: web.Request) -> Any:
    """The request's JSON body: 400 when it is not UTF-8 (or its charset), not JSON, or nested
    deeper than `json_bodies.MAX_DEPTH` (413 past the size limit)."""
    raw = await request.read()
    try:
        return parse_json(raw, encoding=request.charset or "utf-8")
    except JsonBodyError as exc:
        raise bad_request(str(exc)) from exc


async def body_of(request: web.Request) -> dict[str, Any]:
    body = await json_of(request)
    if not isinstance(body, dict):
        raise bad_request("the body must be a JSON object")
    return body


def text_of(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str):
        raise bad_request(f"'{key}' must be a string")
    return value


def parameters_of(body: dict[str, Any], request: web.Request | None = None) -> dict[str, Any]:
    """`parameters` of a body; typed JSON when the request's Content-Type is Neo4j's."""
    params = body.get("parameters", {})
    if not isinstance(params, dict):
        raise bad_request("'parameters' must be an object")
    if request is not None and request.content_type.lower().startswith(TYPED):
        try:
            return {str(k): from_typed(v) for k, v in params.items()}
        except ValueError as exc:
            raise bad_request(f"'parameters': {exc}") from exc
    return params


def optional_text(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if (value is not None and not isinstance(value, str)) or (key in body and value is None):
        raise bad_request(f"'{key}' must be a string when given")
    return value


def access_read(body: dict[str, Any]) -> bool:
    """Does the body ask for Neo4j's `accessMode: Read`?"""
    mode = body.get("accessMode", "Write")
    if not isinstance(mode, str) or mode.lower() not in ("read", "write"):
        raise bad_request("'accessMode' must be 'Read' or 'Write'")
    return mode.lower() == "read"


def bad_request(message: str) -> web.HTTPBadRequest:
    error = {"code": diag.REQUEST_INVALID, "message": message}
    return web.HTTPBadRequest(text=json.dumps({"errors": [error]}), content_type="application/json")


def v2_answer(request: web.Request, result: QueryResult) -> dict[str, Any] | web.Response:
    """A Query API v2 body for a result, or the error response for a blocked/failed one."""
    if result.error is not None:
        return failed(result)
    if result.blocked:
        return blocked(result)
    value = to_typed if typed_requested(request) else to_json
    return {
        "data": {
            "fields": result.fields,
            "values": [[value(v) for v in row] for row in result.rows],
        },
        "bookmarks": [],
        "queryGuard": guard_json(result),
    }


def v2_response(request: web.Request, payload: dict[str, Any], status: int = 202) -> web.Response:
    """`payload` with the content type the client asked for (typed or plain JSON)."""
    media = typed_requested(request) or "application/json"
    return web.json_response(payload, status=status, content_type=media)


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    return {
        "action": str(verdict.action),
        "query": verdict.query,
        "forward": None if verdict.blocked else verdict.to_run,
        "findings": [f.to_dict() for f in verdict.findings],
    }


def guard_json(result: QueryResult) -> dict[str, Any]:
    """The guard's part of a response: the verdict, repair attempts, and the query id (the
    handle for `POST /v1/feedback`)."""
    out = verdict_json(result.verdict)
    if result.attempts:
        out["attempts"] = result.attempts
    if result.id:
        out["id"] = result.id
    return out


def error_json(result: QueryResult) -> dict[str, Any]:
    if result.error is not None:  # a database error, or a refusal with its own code
        return {"code": result.error.code, "message": result.error.message}
    blocking = diag.blocking_findings(result.verdict)
    message = "\n".join(diag.finding_line(f) for f in blocking) or "blocked by the guard"
    return {"code": diag.block_code(result.verdict), "message": message}


def blocked(result: QueryResult) -> web.Response:
    body = {"errors": [error_json(result)], "queryGuard": guard_json(result)}
    return web.json_response(body, status=400)


def failed(result: QueryResult) -> web.Response:
    """400 with the error (401 with a challenge when the database refused the credentials)."""
    body = {"errors": [error_json(result)], "queryGuard": guard_json(result)}
    if result.error is not None and result.error.code == UNAUTHORIZED:
        response = web.json_response(body, status=401)
        response.headers["WWW-Authenticate"] = CHALLENGE
        return response
    return web.json_response(body, status=400)
