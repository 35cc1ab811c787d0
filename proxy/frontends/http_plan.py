"""`POST /v1/plan/validate` (DESIGN §10, SEGRA): the body is a plan
`{"branches": [{"id", "route", "depends_on", "query"}, …]}`; the answer (200, also for an
invalid plan) is `{"valid", "errors": [{"branch", "code", "message"}], "branches": [{"id",
"action", "query", "findings"}]}` (`query_guard.guard.plan`). A body that is not a plan's shape (a
field of the wrong type) is a 400 naming the field."""

from __future__ import annotations

from aiohttp import web

from query_guard.frontends.http_answers import bad_request, body_of
from query_guard.guard.plan import PlanShapeError
from query_guard.run.service import QueryService


async def validate_plan(request: web.Request, service: QueryService) -> web.Response:
    body = await body_of(request)
    try:
        return web.json_response(await service.validate_plan(body))
    except PlanShapeError as exc:
        raise bad_request(str(exc)) from None
