"""The fronts that answer a whole result at once (HTTP, MCP) over the runner (`query_guard.run`):
a query becomes a `QueryRequest`, the runner judges, runs, repairs and audits it, and the
result is read whole within `[limits]` (`query_guard.run.cuts.collect`: rows and bytes, with
`LIM.RESULT_SIZE` when it was cut) and the front's own row budget (MCP's `max_rows`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from query_guard.backend import BackendError
from query_guard.guard import plan
from query_guard.guard.pipeline import Guard
from query_guard.guard.plan import PlanRules
from query_guard.model import Verdict
from query_guard.run.cuts import collect
from query_guard.run.cypher import CypherExecution
from query_guard.run.gremlin import plain
from query_guard.run.guard_pool import GuardPool, blocked
from query_guard.run.guards import LanguageGuard, Note
from query_guard.run.limits import Limits
from query_guard.run.record import OnQuery
from query_guard.run.request import LANGUAGES, Outcome, QueryRequest
from query_guard.run.runner import Route, Runner, Unserved
from query_guard.run.seen import Seen
from query_guard.run.sql import SqlExecution
from query_guard.run.status import ACCESS_MODE, UNKNOWN_ERROR


@dataclass
class QueryResult:
    """What a front sends back: the judged verdict, and rows unless it was blocked."""

    verdict: Verdict
    fields: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    truncated: bool = False  # more rows existed than the front's or `[limits]`' cut
    error: BackendError | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    query: str = ""  # the text that ran (after guard and repair)
    id: str = ""  # the query id (`queryGuard.id`, MCP `id`): the handle for feedback

    @property
    def blocked(self) -> bool:
        return self.verdict.blocked


class QueryService:
    """Shared by the HTTP and MCP fronts of one `ProxyServer` (its `runner`); built from
    parts (a guard, a backend, …) when no runner is given."""

    def __init__(
        self,
        guard: Guard,
        backend: Any,
        *,
        repairer: Any = None,
        on_query: OnQuery | None = None,
        sql: Any = None,  # proxy.sql.service.SqlService: `language="sql"` queries
        limits: Limits | None = None,
        note: Note | None = None,  # a finding for every verdict let through (SCH.NO_SCHEMA)
        runner: Runner | None = None,
        experience: Any = None,  # the experience library (examples, feedback), when on
        plan: PlanRules | None = None,  # `[plan]`: routes and bounds of validated plans
        context_tokens: int = 0,  # `[context] max_tokens`: the schema text's budget
    ) -> None:
        self.guard = guard
        self.context_tokens = context_tokens
        self.plan = plan or PlanRules()
        self.experience = experience
        self.backend = backend
        self.sql = sql
        self.limits = runner.limits if runner is not None else limits or Limits()
        if runner is None:
            unserved = Unserved("no Gremlin graph behind this front")
            routes = {"cypher": Route(LanguageGuard(guard, "cypher", note),
                                      CypherExecution(backend, repairer)),
                      "sql": sql_route(guard, sql, self.limits),
                      "gremlin": Route(LanguageGuard(guard, "gremlin"), unserved)}  # fmt: skip
            runner = Runner(routes, limits=self.limits, on_query=on_query,
                            pool=GuardPool(self.limits.guard_workers))  # fmt: skip
        self.runner = runner

    def close(self) -> None:
        self.runner.close()

    async def check(
        self, text: str, language: str = "cypher", parameters: Mapping[str, Any] | None = None
    ) -> Verdict:
        """The guard's verdict, within `[limits]`, without running anything."""
        return await self.runner.judge(language, text, dict(parameters or {}))

    async def validate_plan(self, raw: Any) -> dict[str, Any]:
        """A plan's answer (`query_guard.guard.plan`): its structure, then every branch's query
        through the guard in the route's language (raises `PlanShapeError`)."""
        branches = plan.parse_plan(raw)
        errors = plan.structure_errors(branches, self.plan)
        verdicts: dict[int, Verdict] = {}
        if not any(e.code == "PLAN.SIZE" for e in errors):
            for n, branch, language in plan.judged(branches, self.plan):
                try:
                    verdicts[n] = await self.check(branch.query, language)
                except Exception:  # fail closed, as the runner does
                    verdicts[n] = blocked(branch.query, "GUARD.RULE_ERROR",
                                          "the query guard failed on this query")  # fmt: skip
        return plan.answer(branches, errors, verdicts)

    async def run(
        self,
        text: str,
        parameters: Mapping[str, Any] | None = None,
        *,
        front: str,
        client: str = "",
        user: str | None = None,
        question: str | None = None,
        database: str | None = None,
        max_rows: int = 10_000,
        tx: Any = None,
        language: str = "cypher",
        read_access: bool = False,
    ) -> QueryResult:
        """Guard and run `text` (in `tx`, an open backend transaction, when given) and read
        its whole result. With `read_access` (Neo4j's `accessMode: Read`) a statement that
        writes is refused."""
        assert language in LANGUAGES, language
        req = QueryRequest(
            text, front, language, dict(parameters or {}), question=question,  # type: ignore[arg-type]
            database=database, read_access=read_access, tx=tx, client=client, user=user,
        )  # fmt: skip
        outcome = await self.runner.run(req)
        result = await self._read(req, outcome, max_rows)
        result.id = req.id
        return result

    async def _read(self, req: QueryRequest, outcome: Outcome, max_rows: int) -> QueryResult:
        """The outcome's whole result within the row budgets (the runner hears what was read)."""
        verdict, ran = outcome.verdict, outcome.ran or ""
        if outcome.guard_failed:
            error = BackendError("the query guard failed on this query", UNKNOWN_ERROR)
            return QueryResult(verdict, error=error)
        if outcome.blocked:
            if verdict.findings and verdict.findings[-1].rule == "access-mode":
                message = verdict.findings[-1].message
                return QueryResult(verdict, error=BackendError(message, ACCESS_MODE))
            return QueryResult(verdict)
        if outcome.error is not None or outcome.stream is None:
            error = outcome.error or BackendError("the query produced no result")
            return QueryResult(verdict, error=error, attempts=outcome.attempts, query=ran)
        rows = max_rows if not self.limits.max_result_rows else min(
            max_rows, self.limits.max_result_rows
        )
        try:
            got = await collect(outcome.stream, rows, self.limits.max_result_bytes)
        except BackendError as exc:
            self.runner.finished(Seen(req, outcome, read_error=True))
            return QueryResult(verdict, error=exc, attempts=outcome.attempts, query=ran)
        cut = got.cut is not None
        self.runner.finished(Seen(req, outcome, len(got.rows), got.rows[0] if got.rows else None,
                                  cut))  # fmt: skip
        if got.cut is not None:  # LIM.RESULT_SIZE: the client learns that rows were left out
            verdict = dataclasses.replace(verdict, findings=(*verdict.findings, got.cut))
        language = req.language
        rows = got.rows if language != "gremlin" else [[plain(v) for v in r] for r in got.rows]
        return QueryResult(verdict, got.fields, rows, cut, None, outcome.attempts, ran)


def sql_route(guard: Guard, sql: Any, limits: Limits) -> Route:
    """SQL's route: the guard for SQL and the SQL backend (`sql` None: no SQL database)."""
    fetch = (limits.max_result_rows or 100_000) + 1
    return Route(LanguageGuard(guard, "sql"), SqlExecution(sql, fetch))
