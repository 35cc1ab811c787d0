"""The MCP server (the `mcp` SDK's FastMCP): tools an LLM agent calls instead of a database.

`query-guard mcp [--config]` serves it over stdio (`query_guard.runner.serve_stdio`). Every tool
call goes through the same guard as the other fronts; read-only cannot be switched off by a
tool argument (it is the operator's `[guard] read_only`). Results are cut to `[mcp] max_rows`
rows and `max_chars` characters of JSON, with a note saying so, and the guard's findings come
back beside the rows so the agent can fix its own query. A refused or failed query is an error
result (`isError: true`, as the MCP specification reports tool execution failures) whose
content still carries the findings and the fix. Every tool declares an output schema
(`query_guard.frontends.mcp_results`) that its `structuredContent` follows, error results
included. The SDK is reached through `mcp_sdk`, which speaks both of its majors.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from mcp.types import CallToolResult

from query_guard.experience.library import UnknownQueryId
from query_guard.frontends.http_experience import grounding
from query_guard.frontends.json_values import to_json
from query_guard.frontends.mcp_results import (
    CheckResult,
    ContextResult,
    FeedbackResult,
    PlanResult,
    ReadResult,
)
from query_guard.frontends.mcp_sdk import annotations, new_server, tool_result
from query_guard.guard.plan import PlanShapeError
from query_guard.model import Severity, Verdict
from query_guard.run.service import QueryService
from query_guard.schema.grounding_context import schema_text
from query_guard.schema.samples import MAX_SAMPLES, sample_values, samples_text

MAX_EXAMPLES = 20  # examples one get_context call may ask for
Language = Literal["cypher", "gremlin", "sql"]
# A tool's result: `structuredContent` checked against (and declared as) the model's schema
Read = Annotated[CallToolResult, ReadResult]

INSTRUCTIONS = (
    "Read a graph database through query-guard. Call get_context first: it lists the schema, "
    "the direction of every relationship and short rules. Every query is checked before it "
    "runs: writes, unknown procedures and scripts are refused, reversed arrows and wrong "
    "relationship types are fixed, and the findings tell you what was changed or why a query "
    "was refused, so you can correct it."
)

QUESTION = (
    "question (optional): the user's question in words. When the query returns nothing, the "
    "guard may find a likelier reading (an arrow the other way, a near stored value); with the "
    "question it runs that and says so, without it the alternative is only offered "
    "(REPAIR.SUGGESTED)."
)


def build_mcp(
    service: QueryService,
    *,
    gremlin: bool = False,  # a Gremlin graph is served: the read_gremlin tool
    max_rows: int = 100,
    max_chars: int = 20_000,
) -> Any:
    """The MCP server (the SDK's object): `run_stdio_async()` serves it on stdio,
    `mcp_sdk.http_app` mounts it on the HTTP front."""
    app = new_server(INSTRUCTIONS)
    read_only = service.guard.ctx.settings.read_only
    reads = annotations(title="Read", read_only=read_only)
    mode = "read-only: writes are refused" if read_only else "writes allowed by the operator"

    @app.tool(description="The graph's schema: labels with properties, relationships with "
                          "their stored direction (start)-[:TYPE]->(end).",
              annotations=annotations(title="Schema", read_only=True))  # fmt: skip
    def get_schema() -> str:
        return schema_text(service.guard.ctx.schema)

    @app.tool(description="Grounding context for writing queries: schema, direction notes and "
                          "rules that prevent the common mistakes. Call this first. samples: "
                          f"up to that many stored values per property (0-{MAX_SAMPLES}), to "
                          "copy literal values exactly. question (optional): the user's "
                          "question; the answer then also lists up to `examples` verified "
                          "queries that answered similar questions here, best first.",
              annotations=annotations(title="Context", read_only=True))  # fmt: skip
    async def get_context(
        samples: int = 0, question: str | None = None, examples: int = 3
    ) -> Annotated[CallToolResult, ContextResult]:
        schema = service.guard.ctx.schema
        n = max(0, min(int(samples), MAX_SAMPLES))
        samples = samples_text(await sample_values(service.backend, schema, n))
        text = await grounding(service, samples)
        if not question:
            return tool_result({"context": text}, text=text)
        k = max(0, min(int(examples), MAX_EXAMPLES))
        found = await service.experience.examples(question, k) if service.experience else []
        return tool_result({"context": text, "examples": found})

    @app.tool(description="Report whether the answer of a query was right: id is the `id` of "
                          "a read_* result, outcome 'correct' or 'wrong'. Verified queries "
                          "reported correct are offered to later questions; wrong ones less.",
              annotations=annotations(title="Feedback", read_only=False))  # fmt: skip
    async def report_outcome(
        id: str, outcome: Literal["correct", "wrong"]
    ) -> Annotated[CallToolResult, FeedbackResult]:
        if service.experience is None:
            return tool_result({"id": id, "outcome": outcome,
                                "error": "the experience library is off"}, error=True)  # fmt: skip
        try:
            return tool_result(await service.experience.feedback(id, outcome))
        except UnknownQueryId:
            return tool_result({"id": id, "outcome": outcome,
                                "error": f"no query with id {id!r} is known here"},
                               error=True)  # fmt: skip

    @app.tool(description="Check a query without running it: the verdict (allow, rewrite, "
                          "block), the query that would run, and the findings. "
                          "language: cypher, gremlin or sql.",
              annotations=annotations(title="Check", read_only=True))  # fmt: skip
    async def check_query(
        query: str, language: Language = "cypher"
    ) -> Annotated[CallToolResult, CheckResult]:
        return tool_result(_verdict(await service.check(query, language)))

    @app.tool(description="Check a multi-step plan before running any of it: plan = "
                          '{"branches": [{"id", "route", "depends_on": [ids], "query"}]}, '
                          "route: cypher, gremlin, sql or a configured route name. Reports "
                          "duplicate ids, unknown dependencies or routes, cycles (with the "
                          "path), chains too deep, empty queries, and each branch's guard "
                          "verdict; valid is true when nothing needs fixing.",
              annotations=annotations(title="Validate plan", read_only=True))  # fmt: skip
    async def validate_plan(plan: dict[str, Any]) -> Annotated[CallToolResult, PlanResult]:
        try:
            answer = await service.validate_plan(plan)
        except PlanShapeError as exc:
            unread = {"valid": False, "errors": [], "branches": [], "error": str(exc)}
            return tool_result(unread, error=True)
        return tool_result(answer)  # an invalid plan is an answer, not a failed call

    @app.tool(description=f"Run a Cypher read query with optional parameters ({mode}; a LIMIT "
                          "is added when missing; reversed arrows are fixed). Returns rows and "
                          f"the guard's findings. {QUESTION}", annotations=reads)  # fmt: skip
    async def read_cypher(
        query: str, params: dict[str, Any] | None = None, question: str | None = None
    ) -> Read:
        return await _read(query, params, "cypher", question)

    async def _read(
        query: str, params: dict[str, Any] | None, language: str, question: str | None
    ) -> CallToolResult:
        result = await service.run(
            query, params or {}, front="mcp", max_rows=max_rows, language=language,
            question=question or None,
        )  # fmt: skip
        if result.blocked:
            refused = {"refused": True, **_verdict(result.verdict), "id": result.id}
            return tool_result(refused, error=True)
        out: dict[str, Any] = {"query": result.query, **_findings(result.verdict), "id": result.id}
        if result.error is not None:
            out["error"] = {"code": result.error.code, "message": result.error.message}
            return tool_result(out, error=True)
        out["fields"] = result.fields
        out["rows"] = [[to_json(v) for v in row] for row in result.rows]
        if result.truncated:
            out["note"] = f"only the first {max_rows} rows are shown; add a LIMIT or aggregate"
        if result.attempts:
            out["attempts"] = result.attempts
        return tool_result(_budget(out, max_chars))

    if service.sql is not None and service.sql.backend is not None:
        dialect = service.guard.ctx.settings.sql_dialect

        @app.tool(description=f"Run a SQL read query (dialect {dialect}) with optional named "
                              f"parameters (:name) ({mode}; one SELECT only, a LIMIT is added "
                              "when missing; misspelt tables and columns are fixed when one "
                              "name is close; a literal in the wrong case is corrected when "
                              "the query returns nothing). Returns rows and the guard's "
                              f"findings. {QUESTION}", annotations=reads)  # fmt: skip
        async def read_sql(
            query: str, params: dict[str, Any] | None = None, question: str | None = None
        ) -> Read:
            return await _read(query, params, "sql", question)

    if gremlin:

        @app.tool(description=f"Run a Gremlin read traversal with optional bindings ({mode}; "
                              "scripts, lambdas and full-graph scans are refused). "
                              f"{QUESTION}",
                  annotations=reads)  # fmt: skip
        async def read_gremlin(
            query: str, bindings: dict[str, Any] | None = None, question: str | None = None
        ) -> Read:
            return await _read(query, bindings, "gremlin", question)

    return app


def _verdict(verdict: Verdict) -> dict[str, Any]:
    return {
        "action": str(verdict.action),
        "query": None if verdict.blocked else verdict.to_run,
        **_findings(verdict),
    }


def _findings(verdict: Verdict) -> dict[str, Any]:
    """Errors and warnings with their hints; info lines (an appended LIMIT) only as codes."""
    shown = [
        {k: v for k, v in f.to_dict().items() if k in ("code", "severity", "message", "hint")}
        for f in verdict.findings
        if f.severity is not Severity.INFO
    ]
    return {"findings": shown, "codes": verdict.codes}


def _budget(out: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """Drop trailing rows until the JSON fits `max_chars` (an agent's context is finite)."""
    rows = out.get("rows")
    if not isinstance(rows, list):
        return out
    while rows and len(json.dumps(out, default=str)) > max_chars:
        keep = max(len(rows) // 2, 0)
        out["rows"] = rows = rows[:keep]
        out["note"] = f"result cut to {keep} rows to fit {max_chars} characters; narrow the query"
    return out

