"""The repair loop for SQL (DESIGN §6, as for Cypher): a read that returns nothing — no rows,
or one row of blank aggregates (`count(*)` = 0) — has its string literals grounded against the
stored values and its equalities relaxed to case-insensitive ones.

Candidates, in order:

1. the **safe** literal fixes (a stored value equal but for case): applied when rows appear;
2. case-insensitive equality (`lower(col) = lower('x')`), speculative;
3. all literal fixes including the speculative ones (the only stored value containing the
   literal), speculative.

A speculative candidate is applied only when the client opted in (it sent its question, or
`[repair] speculative = "apply"`); otherwise the first one that answers is offered as a
`REPAIR.SUGGESTED` warning with the alternative query and its row count, and the client gets
its own (empty) result. Every candidate is judged by the guard again (SQL rules) before it
runs, read-only, on the SQL backend; every attempt is recorded (`REPAIR.ATTEMPT`). Errors are
not repaired (the database's message tells the client what is wrong).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlglot import exp

from query_guard.backend import BackendError
from query_guard.clock import elapsed_ms
from query_guard.model import Action, Finding, Severity, Verdict
from query_guard.repair.candidates import is_empty
from query_guard.repair.loop import OPT_IN
from query_guard.repair.model import BLOCKED, EMPTY, ERROR, ROWS, Attempt, RepairSettings
from query_guard.schema.sql_catalog import SqlCatalog
from query_guard.sql.grounding import (
    SqlBinding,
    SqlLiteralFix,
    extract_bindings,
    ground,
    relax_case,
    with_fixes,
)
from query_guard.sql.query import SqlQuery, SqlSyntaxError

SUGGEST_COUNT = 1000  # rows a candidate is read up to (the suggestion's count)

# the guard's verdict on a candidate (in a worker thread), the text the backend runs for a
# verdict, and the backend itself: (text, max_rows, with the client's parameters) -> (fields,
# rows); the grounding probes run without them
Check = Callable[[str], Awaitable[Verdict]]
Render = Callable[[Verdict], Awaitable[str]]
Run = Callable[[str, int, bool], Awaitable[tuple[list[str], list[list[Any]]]]]


@dataclass
class SqlResult:
    """One attempt's result (or error)."""

    attempt: Attempt
    fields: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    error: BackendError | None = None
    ran: str = ""  # the text the backend ran

    @property
    def answers(self) -> bool:
        return self.attempt.outcome == ROWS and any(v is not None for r in self.rows for v in r)


@dataclass
class SqlOutcome:
    """The result the client gets and what the loop tried."""

    chosen: SqlResult
    attempts: list[Attempt]
    findings: list[Finding]
    stop: str = ""

    @property
    def repaired(self) -> bool:
        return bool(self.attempts) and self.chosen.attempt is not self.attempts[0]

    def verdict(self, base: Verdict) -> Verdict:
        """`base` with the repair's findings; a repair's query when one was applied."""
        if not self.findings:
            return base
        findings = (*base.findings, *self.findings)
        if not self.repaired:
            return replace(base, findings=findings)
        return replace(base, action=Action.REWRITE, query=self.chosen.attempt.query,
                       findings=findings, forward="")  # fmt: skip


class SqlRepairLoop:
    def __init__(
        self,
        settings: RepairSettings,
        *,
        dialect: str,
        backend_dialect: str,
        catalog: SqlCatalog | None,
        check: Check,
        render: Render,
        run: Run,
        question: str | None = None,
        params: Mapping[str, Any] | Sequence[Any] | None = None,
    ) -> None:
        self.settings = settings
        self.params = params if isinstance(params, Mapping) else None  # named ones bind
        self.dialect, self.backend_dialect, self.catalog = dialect, backend_dialect, catalog
        self.check, self.render, self.run_text = check, render, run
        self.opted_in = question is not None or settings.speculative == "apply"
        self.attempts: list[Attempt] = []
        self.findings: list[Finding] = []
        self.ran: set[str] = set()
        self.aggregates: frozenset[int] = frozenset()
        self.notes: list[tuple[SqlBinding, Finding]] = []  # grounding's, per binding
        self.fixed: set[int] = set()  # ids of the bindings an applied fix replaced

    async def run(self, query: str, text: str, max_rows: int) -> SqlOutcome:
        """Run `text` (the backend's rendering of the judged `query`) and repair an empty
        result. Raises nothing the backend raises: errors are outcomes."""
        tree = _tree(query, self.dialect)
        self.aggregates = blank_aggregates(tree) if tree is not None else frozenset()
        first = await self.execute(query, text, "client", None, max_rows)
        if first.attempt.outcome != EMPTY or not self.settings.enabled or tree is None:
            return self.outcome(first, first.attempt.outcome)
        bindings = extract_bindings(tree, self.catalog, self.params)
        if not bindings:
            return self.outcome(first, "nothing to repair")
        fixes: list[SqlLiteralFix] = []
        if self.settings.grounding:
            self.notes, fixes = await ground(
                bindings, self.probe, self.dialect, self.backend_dialect
            )
        safe = [f for f in fixes if f.safe]
        candidates: list[tuple[str, str, str, bool, list[SqlLiteralFix]]] = []
        if safe:
            candidates.append((with_fixes(tree, safe, self.dialect), "grounding", "ENT.LITERAL",
                               True, safe))  # fmt: skip
        relaxed = relax_case(tree, bindings, self.dialect) if self.settings.relaxation else None
        if relaxed is not None:
            candidates.append((relaxed, "relaxation", "FIL.CASE_INSENSITIVE", False, []))
        if len(safe) < len(fixes):
            candidates.append((with_fixes(tree, fixes, self.dialect), "grounding",
                               "ENT.LITERAL", False, fixes))  # fmt: skip
        suggested = False
        for candidate, source, code, is_safe, used in candidates[: max(self.settings.budget, 1)]:
            if suggested and not is_safe:
                continue
            result = await self.attempt(candidate, source, code)
            if result is None or not result.answers:
                continue
            if is_safe or self.opted_in:
                self.applied(result, source, code, is_safe, used)
                return self.outcome(result, "rows")
            self.suggest(result, code, _SUGGEST[source])
            suggested = True
        return self.outcome(first, "suggested" if suggested else "no candidate answered")

    async def probe(self, text: str) -> list[list[Any]]:
        _, rows = await self.run_text(text, 60, False)
        return rows

    async def attempt(self, text: str, source: str, code: str) -> SqlResult | None:
        """Guard, then run, one candidate; None when its judged text already ran."""
        started = time.perf_counter()
        try:
            verdict = await self.check(text)
        except Exception as exc:  # fail closed, as the fronts do
            attempt = Attempt(text, source, code, BLOCKED, error=f"the guard failed: {exc!r}",
                              ms=elapsed_ms(started))  # fmt: skip
            self.attempts.append(attempt)
            return None
        if verdict.blocked:
            why = "; ".join(f"{f.code}: {f.message}" for f in verdict.findings)
            attempt = Attempt(text, source, code, BLOCKED, error=why, ms=elapsed_ms(started))
            self.attempts.append(attempt)
            return None
        rendered = await self.render(verdict)
        if rendered.strip() in self.ran:
            return None
        return await self.execute(verdict.to_run, rendered, source, code, SUGGEST_COUNT, started)

    async def execute(
        self, query: str, text: str, source: str, code: str | None, max_rows: int,
        started: float | None = None,
    ) -> SqlResult:  # fmt: skip
        started = time.perf_counter() if started is None else started
        self.ran.add(text.strip())
        try:
            fields, rows = await self.run_text(text, max_rows, True)
        except BackendError as exc:
            attempt = Attempt(query, source, code, ERROR, error=exc.message, ms=elapsed_ms(started))
            self.attempts.append(attempt)
            return SqlResult(attempt, error=exc, ran=text)
        more = max_rows >= 0 and len(rows) > max_rows
        outcome = EMPTY if is_empty(rows[:2], len(rows) > 1 or more, self.aggregates) else ROWS
        attempt = Attempt(query, source, code, outcome, min(len(rows), 2), ms=elapsed_ms(started))
        self.attempts.append(attempt)
        return SqlResult(attempt, fields, rows, None, text)

    def applied(
        self, result: SqlResult, source: str, code: str, safe: bool, fixes: list[SqlLiteralFix]
    ) -> None:
        why = "" if safe else " (a speculative repair: the client opted in)"
        if fixes:
            self.fixed |= {id(f.binding) for f in fixes}
            self.findings += [
                Finding("ENT.LITERAL", Severity.WARNING, f.describe(self.dialect) + why,
                        f.binding.span, rule="repair.grounding")
                for f in fixes
            ]  # fmt: skip
            return
        self.findings.append(Finding(
            code, Severity.WARNING,
            f"the query returned nothing; {_EXPLAIN[source]} and rows appeared{why}",
            (0, 0), rule=f"repair.{source}",
        ))  # fmt: skip

    def suggest(self, result: SqlResult, code: str, why: str) -> None:
        rows = len(result.rows)
        count = f"at least {SUGGEST_COUNT}" if rows > SUGGEST_COUNT else str(rows)
        query = result.attempt.query
        self.findings.append(Finding(
            "REPAIR.SUGGESTED", Severity.WARNING,
            f"{code}: the query returned nothing; {why} would return {count} row(s) — not "
            f"applied, since the empty answer may be right. Alternative query: {query} — "
            f"{OPT_IN}",
            (0, 0), hint=query, rule="repair",
        ))  # fmt: skip

    def outcome(self, chosen: SqlResult, stop: str) -> SqlOutcome:
        notes = [n for b, n in self.notes if id(b) not in self.fixed]
        findings = notes + self.findings
        if len(self.attempts) > 1:
            findings += [
                Finding("REPAIR.ATTEMPT", Severity.INFO, a.describe(i), (0, 0), rule="repair")
                for i, a in enumerate(self.attempts, 1)
            ]
        return SqlOutcome(chosen, list(self.attempts), findings, stop)


_EXPLAIN = {"relaxation": "string equality was made case-insensitive"}
_SUGGEST = {
    "relaxation": "case-insensitive string equality",
    "grounding": "the stored values containing the literals",
}


def blank_aggregates(tree: exp.Expression) -> frozenset[int]:
    """Positions of the aggregate columns of an ungrouped outermost SELECT (one row of zeros
    or nulls there is an empty answer); empty otherwise."""
    if not isinstance(tree, exp.Select) or tree.args.get("group"):
        return frozenset()
    return frozenset(
        i for i, e in enumerate(tree.selects)
        if any(not isinstance(a.parent, exp.Window) for a in e.find_all(exp.AggFunc))
    )  # fmt: skip


def _tree(text: str, dialect: str) -> exp.Expression | None:
    """The single read statement of `text`, or None (several, not a query, no parse)."""
    try:
        query = SqlQuery.parse(text, dialect)
    except SqlSyntaxError:
        return None
    if len(query.statements) != 1 or not isinstance(query.statements[0].tree, exp.Query):
        return None
    return query.statements[0].tree
