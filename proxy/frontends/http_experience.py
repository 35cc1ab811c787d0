"""The experience library on the HTTP front (DESIGN §10): examples for a question in
`GET /v1/context?question=…&examples=K`, the context text with its schema part ordered by
weight and cut to `[context] max_tokens` (also MCP `get_context`), and `POST /v1/feedback
{"id", "outcome"}` on the query id every guarded response carries (`queryGuard.id`)."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from query_guard.experience.library import OUTCOMES, UnknownQueryId
from query_guard.experience.schema_order import ordered_schema_text
from query_guard.frontends.bolt import diagnostics as diag
from query_guard.frontends.http_answers import bad_request, body_of, text_of
from query_guard.schema.grounding_context import context_text

MAX_EXAMPLES = 20  # examples one context request may ask for
DEFAULT_EXAMPLES = 3


def examples_wanted(request: web.Request) -> int:
    """`?examples=K` (default 3; 400 outside 0-20, with or without a question)."""
    raw = request.query.get("examples", str(DEFAULT_EXAMPLES))
    if not raw.isdigit() or int(raw) > MAX_EXAMPLES:
        raise bad_request(f"'examples' must be a whole number from 0 to {MAX_EXAMPLES}")
    return int(raw)


async def grounding(service: Any, samples: str) -> str:
    """The context text: the schema part heaviest first within `[context] max_tokens`, then
    direction notes, `samples` and the rules."""
    schema = service.guard.ctx.schema
    if schema is None:
        return context_text(None, samples)
    experience = service.experience
    weights = await experience.weights() if experience is not None else {}
    ordered = ordered_schema_text(schema, weights, service.context_tokens)
    return context_text(schema, samples, ordered)


async def examples_for(request: web.Request, k: int, experience: Any) -> list[dict[str, Any]]:
    """`k` examples for `?question=…`, best first (none when the library is off)."""
    if experience is None:
        return []
    return list(await experience.examples(request.query["question"], k))


async def feedback(request: web.Request, experience: Any) -> web.Response:
    """`{"id", "outcome": "correct" | "wrong"}` on a query id: 200 with what changed, 404
    when the id is unknown here."""
    body = await body_of(request)
    qid, outcome = text_of(body, "id"), body.get("outcome")
    if outcome not in OUTCOMES:
        raise bad_request(f"'outcome' must be one of {list(OUTCOMES)}")
    if experience is None:
        return _not_found("the experience library is off ([experience] enabled = false)")
    try:
        done = await experience.feedback(qid, outcome)
    except UnknownQueryId:
        return _not_found(
            f"no query with id {qid!r} is known here: use the id of a recent response "
            "(queryGuard.id, MCP id, Bolt qg_id, Gremlin qg_id)"
        )
    return web.json_response(done)


def _not_found(message: str) -> web.Response:
    body = {"errors": [{"code": diag.REQUEST_INVALID, "message": message}]}
    return web.Response(text=json.dumps(body), status=404, content_type="application/json")
