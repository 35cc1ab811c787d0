"""The repair loop (DESIGN §6), once for every language: a `Strategy` says how one language's
queries are parsed, judged empty, run and rewritten; this module decides what runs, in which
order, what is applied and when to stop.

One run: the client's query runs (or its started result is judged); rows end it. A failed or
empty read then gets up to `[repair] budget` rounds. In each, for an empty result, the
language's deterministic candidates run first (tier 1 and relaxation), then its literals are
grounded (`query_guard.repair.grounding`) and the candidates built from the fixes run; the
first one that answers is kept. Otherwise the `guard_repair` hook (the LLM plugin) is asked
for a rewrite, and the loop stops when it proposes nothing, the current query again
(no-change), a query that already ran (ping-pong), or — after running it — the same
diagnosis twice in a row.

Every candidate is judged by the guard again before it runs and runs as its verdict's
`to_run`: a blocked one (a repair can never smuggle in a write), or one that is not a plain
read, never runs and is recorded; one whose judged text already ran is skipped. Every attempt
is recorded (`REPAIR.ATTEMPT` when more than one ran).

A repair is *safe* when the fault is certain from the schema or the data (an arrow against a
type declared one way only, between different labels; a literal whose stored value differs
only in case): it is applied. Every other repair — an arrow the schema allows both ways, a
literal grounded by substring, case-insensitive relaxation, a plugin's (LLM's) rewrite — is
*speculative*: an empty answer may be the right one, so it is applied only when the client
opted in (its `question`, or `[repair] speculative = "apply"`); otherwise the client gets its
own result and the candidate as a `REPAIR.SUGGESTED` warning (its code, the query, its rows).

Experience breaks ties (DESIGN §10): when the runner hands the loop weights (`Weigh`: the
weight verified runs and feedback deposited on the schema elements a candidate's text uses),
the deterministic candidates of one step are tried heaviest first — a reversed arrow onto the
pattern that worked before ahead of a relaxation that keeps the arrow, or the other way round.
Only the order changes: the same candidates, each still safe or speculative, the same stopping
rules; equal weights (and no weights) keep the language's own order, and a query that returned
rows never reaches a candidate.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from query_guard.backend import BackendError, BackendUnavailable, ResultStream
from query_guard.clock import elapsed_ms
from query_guard.model import Finding, Severity, Verdict
from query_guard.repair.grounding import Grounded, LiteralFix, fixed, ground
from query_guard.repair.model import (
    BLOCKED,
    EMPTY,
    ERROR,
    ROWS,
    Attempt,
    Candidate,
    PeekedStream,
    RepairCandidate,
    RepairOutcome,
    RepairRequest,
    RepairSettings,
    Weigh,
    Words,
    await_me_maybe,
    is_blank,
    is_empty,
)

log = logging.getLogger("query_guard.repair")

PEEK = 2  # records read to decide "empty" (a second row rules out the one-aggregate-row case)
SUGGEST_COUNT = 1000  # rows a suggested candidate is counted up to

Check = Callable[[str], Verdict | Awaitable[Verdict]]  # fronts judge off the event loop
Propose = Callable[[RepairRequest], Awaitable[RepairCandidate | None]]


class Strategy(Protocol):
    """What the loop asks of one language (`query_guard.repair.cypher`, `.gremlin`, `.sql`)."""

    language: str
    words: Words
    retry_errors: bool  # does a failed query get repaired (or only an empty one)?
    execute: Callable[[str], Awaitable[ResultStream]]  # runs a judged query

    def parse(self, text: str) -> Any | None: ...

    def never_repaired(self, parsed: Any | None) -> str | None: ...

    def runnable(self, verdict: Verdict) -> bool: ...  # a plain read a repair may run

    def aggregates(self, parsed: Any) -> frozenset[int]: ...  # columns "empty" when blank

    def candidates(
        self, parsed: Any, settings: RepairSettings, fixes: Sequence[LiteralFix] | None
    ) -> list[Candidate]: ...  # fixes None: before grounding (tier 1, relaxation)

    def bindings(self, parsed: Any) -> Sequence[Any]: ...

    async def stored(self, binding: Any, token: str) -> list[tuple[str, Any]] | None: ...


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


class RepairLoop:
    """The state of one repair: attempts so far, texts already run, the suggestion."""

    def __init__(
        self,
        strategy: Strategy,
        settings: RepairSettings,
        check: Check,
        propose: Propose,
        params: dict[str, Any],
        question: str | None,
        weights: Callable[[], Awaitable[Weigh | None]] | None = None,
    ) -> None:
        self.strategy, self.settings, self.words = strategy, settings, strategy.words
        self.weights = weights  # asked once, when a step first has candidates to order
        self.weigh: Weigh | None = None
        self.check, self.propose = check, propose
        self.params = params
        self.question = question
        self.opted_in = question is not None or settings.speculative == "apply"
        self.attempts: list[Attempt] = []
        self.findings: list[Finding] = []
        self.ran: set[str] = set()
        self.suggested = False
        self.notes: dict[int, tuple[int, Grounded]] = {}  # id(binding) -> (index, note)

    async def run(
        self, query: str, to_run: str, first: ResultStream | BackendError | None, retry: bool
    ) -> RepairOutcome:
        """Run `to_run` (the judged `query`), or judge `first`, its started result; repair it
        when it fails or comes back empty."""
        current = await self.judge(to_run, "client", None, first)
        if current.rows or not self.settings.enabled:
            return self.outcome(current, "rows" if current.rows else "disabled")
        reason = self.strategy.never_repaired(self.strategy.parse(query))
        if reason is not None:
            return self.outcome(current, reason)
        if current.error is not None and not (retry and self.strategy.retry_errors):
            return self.outcome(current, "errors are not retried here")
        if isinstance(current.error, BackendUnavailable):
            return self.outcome(current, "the database is unavailable")
        return await self.iterate(current)

    async def iterate(self, current: Run) -> RepairOutcome:
        seen = {current.attempt.query.strip()}
        prev_code: str | None = None
        error = current.attempt.error
        for _ in range(self.settings.budget):
            notes: list[Finding] = []
            parsed = self.strategy.parse(current.attempt.query)
            if current.attempt.outcome == EMPTY and parsed is not None:
                found = await self.deterministic(parsed, None)
                if found is None:
                    notes, fixes = await self.ground(parsed)
                    found = await self.deterministic(parsed, fixes)
                if found is not None:
                    await close(current)
                    return self.outcome(found, found.attempt.source)
            if self.suggested and not self.opted_in:
                return self.outcome(current, "suggested")
            request = RepairRequest(
                current.attempt.query, error, self.question,
                tuple(f.message for f in notes), tuple(self.attempts), self.params,
                self.strategy.language,
            )  # fmt: skip
            candidate = await self.propose(request)
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

    async def deterministic(self, parsed: Any, fixes: Sequence[LiteralFix] | None) -> Run | None:
        """The language's candidates in its order: the first that answers and may be applied;
        the first speculative one that answers is suggested instead."""
        for c in await self.ordered(self.strategy.candidates(parsed, self.settings, fixes)):
            if not (c.safe or self.opted_in) and self.suggested:
                continue  # one suggestion is enough; a safe candidate may still follow
            run = await self.attempt(c.text, c.source, c.code)
            if run is None or run.attempt.outcome == BLOCKED:
                continue
            if run.answers and (c.safe or self.opted_in):
                self.applied(run, c)
                return run
            if run.answers:
                await self.suggest(run, c.code, c.offer)
            else:
                await close(run)
        return None

    async def ordered(self, candidates: list[Candidate]) -> list[Candidate]:
        """`candidates` heaviest first by experience (stable: ties keep the language's order)."""
        if len(candidates) < 2 or self.weights is None:
            return candidates
        if self.weigh is None:
            try:
                self.weigh = await self.weights() or _weightless
            except Exception as exc:  # the weights only order: without them, today's order
                log.warning("experience weights unavailable for repair: %r", exc)
                self.weigh = _weightless
        return candidates if self.weigh is _weightless else by_weight(candidates, self.weigh)

    async def ground(self, parsed: Any) -> tuple[list[Finding], list[LiteralFix]]:
        """The notes on the query's literals (kept as findings) and the fixes they offer."""
        if not self.settings.grounding:
            return [], []
        bindings = self.strategy.bindings(parsed)
        found = await ground(bindings, self.strategy.stored, self.words) if bindings else []
        for g in found:
            self.notes[id(g.binding)] = (len(self.findings), g)
            self.findings.append(g.note)
        return [g.note for g in found], [g.fix for g in found if g.fix is not None]

    def applied(self, run: Run, c: Candidate) -> None:
        why = "" if c.safe else " (a speculative repair: the client opted in)"
        for fix in c.fixes:  # the binding's note becomes the fix's finding
            index, g = self.notes[id(fix.binding)]
            self.findings[index] = fixed(g, self.words, why)
        if c.fixes:
            return
        w = self.words
        self.findings.append(Finding(
            c.code, Severity.WARNING,
            f"the {w.noun} returned nothing; {c.done} and {w.rows} appeared{why}",
            (0, 0), hint=run.attempt.query, rule=f"repair.{c.source}",
        ))  # fmt: skip

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
        w, query = self.words, run.attempt.query
        self.findings.append(Finding(
            "REPAIR.SUGGESTED", Severity.WARNING,
            f"{code}: the {w.noun} returned nothing; {why} would return {count} {w.unit} — "
            f"not applied, since the empty answer may be right. Alternative {w.noun}: {query} "
            f"— {w.opt_in}",
            (0, 0), hint=query, rule="repair",
        ))  # fmt: skip

    async def attempt(self, text: str, source: str, code: str | None) -> Run | None:
        """Guard, then run, one candidate; None when its guarded text already ran. A
        candidate that is not a plain read (an EXPLAIN, a write, a procedure) never runs."""
        started = time.perf_counter()
        try:
            verdict: Verdict | None = await await_me_maybe(self.check(text))
        except Exception as exc:  # fail closed, as the fronts do
            verdict = None
            log.warning("guard failed on a repair candidate: %r", exc)
        why = ""
        if verdict is None or verdict.blocked:
            why = "; ".join(f"{f.code}: {f.message}" for f in (verdict.findings if verdict else ()))
            why = why or "the guard failed"
        elif verdict.explain or not self.strategy.runnable(verdict):
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
            stream = first if first is not None else await self.strategy.execute(text)
            head = await stream.fetch(PEEK)
        except BackendError as exc:
            attempt = Attempt(text, source, code, ERROR, error=exc.message, ms=elapsed_ms(started))
            self.attempts.append(attempt)
            return Run(attempt, error=exc)
        aggregates: frozenset[int] = frozenset()
        # only a single row with a 0 / null / empty value needs the parse: a blank aggregate?
        # (the usual lookup's one row has none: no parse, no walk over the returned items)
        if len(head) == 1 and any(is_blank(value) for value in head[0]):
            parsed = self.strategy.parse(text)
            aggregates = self.strategy.aggregates(parsed) if parsed is not None else aggregates
        empty = is_empty(head, len(head) >= PEEK and stream.has_more(), aggregates)
        outcome = EMPTY if empty else ROWS
        attempt = Attempt(text, source, code, outcome, len(head), ms=elapsed_ms(started))
        self.attempts.append(attempt)
        return Run(attempt, stream=PeekedStream(stream, head), head=list(head))

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


def _weightless(_text: str) -> float:
    return 0.0


def by_weight(candidates: Sequence[Candidate], weigh: Weigh) -> list[Candidate]:
    """The candidates heaviest first; a stable sort, so equal weights keep their order."""
    scores = {id(c): weigh(c.text) for c in candidates}
    return sorted(candidates, key=lambda c: -scores[id(c)])


async def close(run: Run) -> None:
    if run.stream is not None:
        try:
            await run.stream.discard()
        except BackendError as exc:
            log.debug("discarding a repair attempt failed: %s", exc)
