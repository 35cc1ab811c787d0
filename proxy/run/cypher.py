"""Cypher on a graph backend, for the runner: EXPLAIN answered here; the judged text on the
backend (in the request's transaction when there is one); a result that plainly has rows goes
out as it is; a failed or empty one goes to the repair loop (DESIGN §6).

Inside an explicit transaction only empty results are repaired: a failed statement ends the
transaction on Neo4j, so a retry there could not run (FalkorDB would allow it; one rule for
all). Proxy-answered procedures (`COMPAT.PROCEDURE`) are never repaired: their rows are the
answer.

The schema catalog (`SchemaFreshness`, the server's `SchemaSource`) hears of every write that
ran (`written`; with several workers, every worker's catalog does), and is made fresh before a
proxy-answered procedure is answered (`ensure_fresh`): when it changed, the query is judged
again, so its rows hold the labels, types and keys written since. So is a query whose verdict
names a label, type or property the catalog lacks (`SCH.UNKNOWN_*`): written a moment ago, the
name must not be "fixed" to another one (a read right after a write comes before the
background refresh)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from query_guard.backend import Backend, BackendError, BackendUnavailable, ResultStream
from query_guard.compat.explain import answer_explain
from query_guard.model import Action, Finding, Verdict
from query_guard.repair.loop import PEEK
from query_guard.repair.model import is_blank
from query_guard.repair.repairer import Repairer
from query_guard.run.request import Outcome, QueryRequest
from query_guard.run.runner import WRITES

PROXY_ANSWERED = "COMPAT.PROCEDURE"  # the finding on a proxy-answered procedure's rewrite
# a label, type or property the schema catalog does not hold
UNKNOWN_NAMES = frozenset({"SCH.UNKNOWN_LABEL", "SCH.UNKNOWN_REL_TYPE", "SCH.UNKNOWN_PROPERTY"})
Judge = Callable[[str, dict[str, Any]], Awaitable[Verdict]]


class SchemaFreshness(Protocol):
    """What the execution tells the schema catalog's source (`query_guard.schema.source`)."""

    async def written(self, *, background: bool = True) -> None: ...

    async def ensure_fresh(self) -> bool: ...


@dataclass(frozen=True)
class Plan:
    """What a verdict that lets a query through says to run."""

    verdict: Verdict
    final: str  # the query as judged (rewritten when the guard rewrote it)
    to_run: str  # what the database runs: the guard's emission of `final`
    repairable: bool

    @classmethod
    def of(cls, verdict: Verdict, query: str) -> Plan:
        final = verdict.query if verdict.action is Action.REWRITE else query
        # the database runs the guard's canonical emission of what it judged, never raw text
        to_run = verdict.to_run if verdict.forward else final
        repairable = not verdict.findings or PROXY_ANSWERED not in verdict.codes
        return cls(verdict, final, to_run, repairable)


class CypherExecution:
    """Runs judged Cypher on `backend`, through `repairer` when it is on."""

    def __init__(
        self,
        backend: Backend,
        repairer: Repairer | None = None,
        schema: SchemaFreshness | None = None,
    ) -> None:
        self.backend = backend
        self.repairer = repairer
        self.schema = schema

    async def execute(
        self, req: QueryRequest, verdict: Verdict, judge: Judge, record: dict[str, Any]
    ) -> Outcome:
        # a proxy-answered procedure, or a name the catalog lacks (SCH.UNKNOWN_*: maybe written
        # a moment ago, before the background refresh): judged again on a fresh catalog
        codes = verdict.codes if verdict.findings else ()
        answered = PROXY_ANSWERED in codes or not UNKNOWN_NAMES.isdisjoint(codes)
        if answered and self.schema is not None:
            await self.schema.ensure_fresh()
            # judged again from the catalog as it is now: it may have changed here or in a
            # background refresh since the verdict was made (unchanged: the cached verdict)
            verdict = await judge(req.text, req.parameters)
            if verdict.blocked:
                return Outcome(verdict)
        outcome = await self._execute(req, verdict, judge, record)
        writes = verdict.query_type in WRITES and not verdict.explain
        if self.schema is not None and writes and outcome.error is None:
            await self.schema.written(background=req.tx is None)
        return outcome

    async def _execute(
        self, req: QueryRequest, verdict: Verdict, judge: Judge, record: dict[str, Any]
    ) -> Outcome:
        plan = Plan.of(verdict, req.text)
        if verdict.explain:  # answered here, never executed (and never repaired)
            answer = await answer_explain(self.backend, verdict, req.parameters, req.database)
            record["detail"]["explain"] = True
            return Outcome(verdict, answer, ran=plan.to_run)

        async def execute(text: str, params: dict[str, Any]) -> ResultStream:
            if req.tx is not None:
                return await req.tx.run(text, params)
            return await self.backend.run(text, params, req.database)

        first: ResultStream | BackendError
        try:
            first = await execute(plan.to_run, req.parameters)
        except BackendError as exc:
            if not (plan.repairable and self._loop_sees(req, exc)):
                return Outcome(verdict, error=exc, ran=plan.to_run)
            first = exc
        if not isinstance(first, BackendError):
            try:
                if not (plan.repairable and self._loop_sees(req, None)):
                    return Outcome(verdict, first, ran=plan.to_run)
                if await plainly_has_rows(first):
                    return Outcome(verdict, first, ran=plan.to_run)
            except BackendError as exc:  # the loop judges the error, as if it had peeked
                first = exc
        return await self._repair(req, plan, first, execute, judge, record)

    def _loop_sees(self, req: QueryRequest, error: BackendError | None) -> bool:
        """Does the repair loop see this result? (It retries reads only, and only when they
        fail or come back empty; it parses the query only then.)"""
        if self.repairer is None or not self.repairer.settings.enabled:
            return False
        return error is None or not (req.tx is not None or isinstance(error, BackendUnavailable))

    async def _repair(
        self,
        req: QueryRequest,
        plan: Plan,
        first: ResultStream | BackendError,
        execute: Callable[[str, dict[str, Any]], Awaitable[ResultStream]],
        judge: Judge,
        record: dict[str, Any],
    ) -> Outcome:
        assert self.repairer is not None
        outcome = await self.repairer.run(
            plan.final,
            execute=execute,
            check=lambda text: judge(text, req.parameters),
            parameters=req.parameters,
            question=req.question,
            first=first,
            retry_errors=req.tx is None,
            forward=plan.to_run,
            database=req.database,
        )
        attempts = [a.to_dict() for a in outcome.attempts] if len(outcome.attempts) > 1 else []
        if attempts:
            record["repair"] = attempts
        if outcome.error is not None or outcome.stream is None:
            error = _with_suggestions(
                outcome.error or BackendError("the repair loop produced no result"),
                outcome.findings,
            )
            return Outcome(outcome.verdict(plan.verdict), error=error, ran=outcome.query,
                           attempts=attempts)  # fmt: skip
        if len(outcome.attempts) == 1 and _rewound(first):
            # the loop only peeked at the client's own result: it goes out from its first record
            assert not isinstance(first, BackendError)
            return Outcome(plan.verdict, first, ran=plan.to_run)
        return Outcome(outcome.verdict(plan.verdict), outcome.stream, ran=outcome.query,
                       attempts=attempts)  # fmt: skip


def _with_suggestions(exc: BackendError, findings: list[Finding]) -> BackendError:
    """A failure carries no notifications: a suggested repair goes into its message."""
    offers = [f.message for f in findings if f.code == "REPAIR.SUGGESTED"]
    if not offers:
        return exc
    return BackendError(exc.message + "\nREPAIR.SUGGESTED: " + "\n".join(offers), exc.code)


async def plainly_has_rows(stream: ResultStream) -> bool:
    """The repair loop's judgement "rows", reached without it for a result that plainly has
    some: two records, or one with no blank value (DESIGN §6: "empty" is no rows, or one row
    whose aggregates are all 0, null or empty). Only for streams that can put their peeked
    records back (`rewind`), so they are still relayed raw (or, in memory, read again);
    anything else goes to the loop. The Gremlin execution asks the same."""
    rewind = getattr(stream, "rewind", None)
    if rewind is None:
        return False
    head = await stream.fetch(PEEK)
    rewind()
    if len(head) >= PEEK:
        return True
    return len(head) == 1 and not any(map(is_blank, head[0]))


def _rewound(stream: Any) -> bool:
    rewind = getattr(stream, "rewind", None)
    return rewind is not None and not isinstance(stream, BackendError) and rewind()
