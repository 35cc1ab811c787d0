"""One run of the repair loop (DESIGN §6) for `query_guard.repair.repairer.Repairer`: the attempts,
the texts already run, and the safe-vs-speculative decision.

A repair is *safe* when the fault is certain from the schema or the data (an arrow against a
type declared one way only, between different labels; a literal whose stored value differs
only in case): it is applied. Every other repair — an arrow the schema allows both ways, a
literal grounded by substring, case-insensitive relaxation, a plugin's (LLM's) rewrite — is
*speculative*: an empty answer may be the right one, so it is applied only when the client
opted in (its `question`, or `[repair] speculative = "apply"`); otherwise the client gets its
own result and the candidate as a `REPAIR.SUGGESTED` warning (its code, the query, its rows).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from query_guard.backend import BackendError, ResultStream
from query_guard.clock import elapsed_ms
from query_guard.cypher import ast
from query_guard.cypher.parser import CypherSyntaxError
from query_guard.cypher.query import CypherQuery
from query_guard.model import Edit, Finding, Severity, Verdict, apply_edits
from query_guard.repair.candidates import (
    Flip,
    aggregate_columns,
    flip_candidates,
    is_blank,
    is_empty,
    relax_case,
)
from query_guard.repair.grounding import LiteralFix, extract_bindings, ground_literals
from query_guard.repair.model import (
    BLOCKED,
    EMPTY,
    ERROR,
    ROWS,
    Attempt,
    PeekedStream,
    RepairCandidate,
    RepairOutcome,
    RepairRequest,
    RepairSettings,
    await_me_maybe,
)
from query_guard.schema.context import GuardContext

log = logging.getLogger("query_guard.repair")

PEEK = 2  # records read to decide "empty" (a second row rules out the one-aggregate-row case)
SUGGEST_COUNT = 1000  # rows a suggested candidate is counted up to

Execute = Callable[[str, dict[str, Any]], Awaitable[ResultStream]]
Check = Callable[[str], Verdict | Awaitable[Verdict]]  # frontends judge off the event loop
Candidate = tuple[str, str, str, bool]  # text, source, code, safe

OPT_IN = (
    'to have such repairs applied, send the question as transaction metadata ("question") '
    'or set [repair] speculative = "apply"'
)


@dataclass
class Run:
    attempt: Attempt
    stream: PeekedStream | None = None
    error: BackendError | None = None
    head: list[list[Any]] = field(default_factory=list)  # the peeked records

    @property
    def rows(self) -> bool:
        return self.attempt.outcome == ROWS

    @property
    def answers(self) -> bool:
        """Rows holding a non-null value (a row of nulls — `p.name` of what is now a Movie —
        is a reversed pattern matching the wrong things, not an answer)."""
        return self.rows and any(v is not None for row in self.head for v in row)


def stop_reason(candidate: RepairCandidate | None, current: str, seen: set[str]) -> str | None:
    """DESIGN §6's first two stopping rules, before a candidate runs (None: run it). The
    third — the same diagnosis twice in a row — ends the loop after that candidate ran."""
    if candidate is None or not candidate.query.strip():
        return "no candidate"
    if candidate.query.strip() == current.strip():
        return "unchanged rewrite"
    if candidate.query.strip() in seen:
        return "ping-pong"
    return None


def parse(text: str) -> CypherQuery | None:
    try:
        return CypherQuery.parse(text)
    except CypherSyntaxError:
        return None


def is_read_query(text: str, parser: Callable[[str], CypherQuery | None] | None = None) -> bool:
    """Only reads are retried: no write clause, no procedure call, anywhere."""
    query = (parser or parse)(text)
    if query is None:
        return False
    writes = (
        ast.Create, ast.Merge, ast.SetClause, ast.Remove, ast.Delete, ast.Foreach, ast.LoadCsv,
        ast.SchemaCommand, ast.CallProcedure,
    )  # fmt: skip
    if any(True for _ in query.find(*writes)):
        return False
    return not any(c.in_transactions for c in query.find(ast.CallSubquery))


class LoopOwner(Protocol):
    """What one repair run asks of its `query_guard.repair.repairer.Repairer`."""

    settings: RepairSettings

    @property
    def ctx(self) -> GuardContext: ...

    def parse(self, text: str) -> CypherQuery | None: ...

    async def propose(self, request: RepairRequest) -> RepairCandidate | None: ...


class RepairLoop:
    """The state of one repair: attempts so far, texts already run, the suggestion."""

    def __init__(
        self,
        owner: LoopOwner,
        execute: Execute,
        check: Check,
        params: dict[str, Any],
        question: str | None,
    ) -> None:
        self.owner = owner
        self.settings = owner.settings
        self.execute = execute
        self.check = check
        self.params = params
        self.question = question
        self.opted_in = question is not None or self.settings.speculative == "apply"
        self.attempts: list[Attempt] = []
        self.findings: list[Finding] = []
        self.ran: set[str] = set()
        self.suggested = False
        self.safe_flips: list[Flip] = []  # tier 1's safe flips, combined with literal fixes

    async def iterate(self, current: Run) -> RepairOutcome:
        seen = {current.attempt.query.strip()}
        prev_code: str | None = None
        error = current.attempt.error
        for _ in range(self.settings.budget):
            notes: list[Finding] = []
            parsed = self.owner.parse(current.attempt.query)
            if current.attempt.outcome == EMPTY and parsed is not None:
                found = await self.deterministic(parsed)
                if found is None:
                    notes, fixes = await self.ground(parsed)
                    found = await self.literal_fixes(parsed, fixes)
                if found is not None:
                    await close(current)
                    return self.outcome(found, found.attempt.source)
            if self.suggested and not self.opted_in:
                return self.outcome(current, "suggested")
            request = RepairRequest(
                current.attempt.query, error, self.question,
                tuple(f.message for f in notes), tuple(self.attempts), self.params,
            )  # fmt: skip
            candidate = await self.owner.propose(request)
            reason = stop_reason(candidate, current.attempt.query, seen)
            if reason is not None or candidate is None:
                return self.outcome(current, reason or "no candidate")
            seen.add(candidate.query.strip())
            run = await self.attempt(candidate.query, candidate.source, candidate.code)
            same_code = bool(candidate.code) and candidate.code == prev_code
            prev_code = candidate.code
            if run is None:  # the guard turned it into a query that already ran
                return self.outcome(current, "ping-pong")
            if run.attempt.outcome == BLOCKED:
                # recorded, never run; the next plugin call hears why
                error = f"the proposed rewrite was blocked: {run.attempt.error}"
                if same_code:
                    return self.outcome(current, "same diagnosis twice")
                continue
            if not self.opted_in:  # a plugin's rewrite is speculative: offered, not applied
                if run.rows:
                    await self.suggest(
                        run, run.attempt.code or "REPAIR", f"{run.attempt.source}'s rewrite"
                    )
                else:
                    await close(run)
                return self.outcome(current, "suggested" if run.rows else "not opted in")
            if run.rows or same_code:
                await close(current)
                return self.outcome(run, "rows" if run.rows else "same diagnosis twice")
            await close(current)
            current, error = run, run.attempt.error
        return self.outcome(current, "budget exhausted")

    async def deterministic(self, parsed: CypherQuery) -> Run | None:
        """Tier 1, relaxation, then both at once: the first candidate that answers and may be
        applied; the first speculative one that answers is suggested instead."""
        for text, source, code, safe in self.candidates(parsed):
            if not (safe or self.opted_in) and self.suggested:
                continue  # one suggestion is enough; a safe candidate may still follow
            run = await self.attempt(text, source, code)
            if run is None:
                continue
            if run.answers and (safe or self.opted_in):
                why = "" if safe else " (a speculative repair: the client opted in)"
                self.findings.append(Finding(
                    code, Severity.WARNING,
                    f"the query returned nothing; {_EXPLAIN[source]} and rows appeared{why}",
                    (0, 0), rule=f"repair.{source}",
                ))  # fmt: skip
                return run
            if run.answers:
                await self.suggest(run, code, _SUGGEST[source])
            else:
                await close(run)
        return None

    def candidates(self, parsed: CypherQuery) -> list[Candidate]:
        out: list[Candidate] = []
        flips: list[str] = []
        if self.settings.tier1:
            found = flip_candidates(parsed, self.owner.ctx.schema, self.settings.budget)
            flips = [f.text for f in found]
            self.safe_flips = [f for f in found if f.safe]
            out += [(f.text, "tier1", "DIR.FLIPPED_ON_EMPTY", f.safe) for f in found]
        if self.settings.relaxation:
            relaxed = relax_case(parsed, self.params)
            if relaxed is not None:
                out.append((relaxed, "relaxation", "FIL.CASE_INSENSITIVE", False))
                flipped = self.owner.parse(flips[0]) if flips else None
                both = relax_case(flipped, self.params) if flipped is not None else None
                if both is not None:
                    out.append((both, "tier1+relaxation", "DIR.FLIPPED_ON_EMPTY", False))
        return out

    async def ground(self, parsed: CypherQuery) -> tuple[list[Finding], list[LiteralFix]]:
        if not self.settings.grounding:
            return [], []
        bindings = extract_bindings(parsed, self.params)
        if not bindings:
            return [], []
        notes, fixes = await ground_literals(bindings, self.execute)
        self.findings += notes
        return notes, fixes

    async def literal_fixes(self, parsed: CypherQuery, fixes: list[LiteralFix]) -> Run | None:
        """The query with its literals replaced by the stored values they stand for: the safe
        fixes (and, on opt-in, the speculative ones) applied; the rest suggested. Each is also
        tried with tier 1's first safe flip (a reversed arrow and a wrong case at once)."""
        safe = [f for f in fixes if f.safe]
        groups = [(fixes, all(f.safe for f in fixes))] if self.opted_in else [(safe, True)]
        if not self.opted_in and len(safe) < len(fixes) and not self.suggested:
            groups.append((fixes, False))
        arrows: list[tuple[Edit, ...]] = [(), *(f.edits for f in self.safe_flips[:1])]
        for group, is_safe, flip in [(g, s, a) for g, s in groups for a in arrows]:
            if not group or (self.suggested and not (is_safe or self.opted_in)):
                continue
            text = apply_edits(parsed.text, [*flip, *(f.edit for f in group)])
            run = await self.attempt(text, "grounding", "ENT.LITERAL")
            if run is None:
                continue
            if run.answers and (is_safe or self.opted_in):
                self.findings += [
                    Finding("ENT.LITERAL", Severity.WARNING, f.describe(), f.binding.span,
                            hint=f.edit.replacement, rule="repair.grounding")
                    for f in group
                ]  # fmt: skip
                return run
            if run.answers:
                await self.suggest(run, "ENT.LITERAL", "the stored values containing the literals")
            else:
                await close(run)
        return None

    async def suggest(self, run: Run, code: str, why: str) -> None:
        """Offer a speculative candidate that answered: count its rows, then let it go."""
        assert run.stream is not None
        try:
            rows = len(await run.stream.fetch(SUGGEST_COUNT))
            more = run.stream.has_more()
        except BackendError:
            rows, more = run.attempt.rows, True
        await close(run)
        count = f"at least {rows}" if more else str(rows)
        self.suggested = True
        self.findings.append(Finding(
            "REPAIR.SUGGESTED", Severity.WARNING,
            f"{code}: the query returned nothing; {why} would return {count} row(s) — not "
            f"applied, since the empty answer may be right. Alternative query: "
            f"{run.attempt.query} — {OPT_IN}",
            (0, 0), hint=run.attempt.query, rule="repair",
        ))  # fmt: skip

    async def attempt(self, text: str, source: str, code: str | None) -> Run | None:
        """Guard, then run, one candidate; None when its guarded text already ran. A
        candidate that is not a plain read (an EXPLAIN, a write, a procedure) never runs."""
        started = time.perf_counter()
        try:
            verdict: Verdict | None = await await_me_maybe(self.check(text))
        except Exception as exc:  # fail closed, as the frontends do
            verdict = None
            log.warning("guard failed on a repair candidate: %r", exc)
        why = ""
        if verdict is None or verdict.blocked:
            why = "; ".join(f"{f.code}: {f.message}" for f in (verdict.findings if verdict else ()))
            why = why or "the guard failed"
        elif verdict.explain or not is_read_query(verdict.to_run, self.owner.parse):
            why = "a repair must be a plain read query"
        if why or verdict is None:
            attempt = Attempt(text, source, code, BLOCKED, error=why, ms=elapsed_ms(started))
            self.attempts.append(attempt)
            return Run(attempt)
        final = verdict.to_run
        if final.strip() in self.ran:
            return None
        return await self.judge(final, source, code, None, started)

    async def judge(
        self,
        text: str,
        source: str,
        code: str | None,
        first: ResultStream | BackendError | None,
        started: float | None = None,
    ) -> Run:
        """Execute `text` (unless `first` is its result already) and peek at the records."""
        started = time.perf_counter() if started is None else started
        self.ran.add(text.strip())
        try:
            if isinstance(first, BackendError):
                raise first
            stream = first if first is not None else await self.execute(text, self.params)
            head = await stream.fetch(PEEK)
        except BackendError as exc:
            attempt = Attempt(text, source, code, ERROR, error=exc.message, ms=elapsed_ms(started))
            self.attempts.append(attempt)
            return Run(attempt, error=exc)
        peeked = PeekedStream(stream, head)
        aggregates: frozenset[int] = frozenset()
        # only a single row with a 0 / null / empty value needs the AST: a blank aggregate?
        # (the usual lookup's one row has none: no parse, no walk over the RETURN items)
        if len(head) == 1 and any(is_blank(value) for value in head[0]):
            parsed = self.owner.parse(text)
            aggregates = aggregate_columns(parsed) if parsed is not None else frozenset()
        empty = is_empty(head, len(head) >= PEEK and stream.has_more(), aggregates)
        outcome = EMPTY if empty else ROWS
        attempt = Attempt(text, source, code, outcome, len(head), ms=elapsed_ms(started))
        self.attempts.append(attempt)
        return Run(attempt, stream=peeked, head=list(head))

    def outcome(self, chosen: Run, stop: str) -> RepairOutcome:
        findings = list(self.findings)
        if len(self.attempts) > 1:
            findings += [
                Finding("REPAIR.ATTEMPT", Severity.INFO, a.describe(i), (0, 0), rule="repair")
                for i, a in enumerate(self.attempts, 1)
            ]
        return RepairOutcome(
            chosen.attempt.query, chosen.stream, chosen.error, list(self.attempts), findings, stop
        )


_EXPLAIN = {
    "tier1": "relationship directions were reversed",
    "relaxation": "string equality was made case-insensitive",
    "tier1+relaxation": "relationship directions were reversed, string equality made "
    "case-insensitive,",
}


_SUGGEST = {
    "tier1": "reversing relationship directions",
    "relaxation": "case-insensitive string equality",
    "tier1+relaxation": "reversed directions with case-insensitive string equality",
}


async def close(run: Run) -> None:
    if run.stream is not None:
        try:
            await run.stream.discard()
        except BackendError as exc:
            log.debug("discarding a repair attempt failed: %s", exc)
