"""The execution-triggered repair loop (DESIGN §6): when a read query fails or returns nothing,
try deterministic candidates (reversed arrows, case-insensitive equality), ground its literals,
and ask `guard_repair` plugins (e.g. the LLM plugin) for a rewrite — within a budget, every
candidate re-guarded before it runs, every attempt recorded.

The loop is async because it executes on a backend; its decisions (`is_empty`, `stop_reason`,
the candidates in `proxy.repair_candidates`) are pure functions. Results are *peeked*: only the
first records of an attempt are read to decide, and the chosen attempt's stream is handed back
whole (`PeekedStream`), so a query that returns rows at once streams as before.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pluggy
from cachetools import LRUCache

from proxy.backends.base import BackendError, BackendUnavailable, ResultStream
from proxy.context import GuardContext
from proxy.cypher import ast
from proxy.cypher.parser import CypherSyntaxError
from proxy.cypher.query import CypherQuery
from proxy.grounding import extract_bindings, probe_literals
from proxy.model import Finding, Severity, Verdict
from proxy.repair_candidates import aggregate_columns, flip_candidates, is_empty, relax_case
from proxy.repair_model import (
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

__all__ = [
    "BLOCKED", "EMPTY", "ERROR", "ROWS", "Attempt", "PeekedStream", "RepairCandidate",
    "RepairOutcome", "RepairRequest", "RepairSettings", "Repairer", "await_me_maybe",
    "build_repairer", "is_read_query", "stop_reason",
]  # fmt: skip

log = logging.getLogger(__name__)

PARSE_CACHE = 1024  # entries at most
PARSE_COST = 50  # bytes of a parse per character of its text (measured: ~42)
_MISSING = object()


def _parse_cost(parsed: CypherQuery | None, floor: int) -> int:
    """Approximate bytes a cached parse holds (at least `floor`, which bounds the count)."""
    text = getattr(parsed, "text", "") if parsed is not None else ""
    return max(floor, PARSE_COST * len(text) + 1024)

PEEK = 2  # records read to decide "empty" (a second row rules out the one-aggregate-row case)

Execute = Callable[[str, dict[str, Any]], Awaitable[ResultStream]]
Check = Callable[[str], Verdict | Awaitable[Verdict]]


@dataclass
class _Run:
    attempt: Attempt
    stream: PeekedStream | None = None
    error: BackendError | None = None
    head: list[list[Any]] = field(default_factory=list)  # the peeked records

    @property
    def rows(self) -> bool:
        return self.attempt.outcome == ROWS


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


def is_read_query(text: str, parse: Callable[[str], CypherQuery | None] | None = None) -> bool:
    """Only reads are retried: no write clause, no procedure call, anywhere."""
    query = (parse or _parse)(text)
    if query is None:
        return False
    writes = (
        ast.Create, ast.Merge, ast.SetClause, ast.Remove, ast.Delete, ast.Foreach, ast.LoadCsv,
        ast.SchemaCommand, ast.CallProcedure,
    )  # fmt: skip
    if any(True for _ in query.find(*writes)):
        return False
    return not any(c.in_transactions for c in query.find(ast.CallSubquery))


# ---------------------------------------------------------------- the loop


class Repairer:
    """One server's repair loop: settings, the guard's plugin manager and context."""

    def __init__(
        self,
        settings: RepairSettings | None = None,
        pm: pluggy.PluginManager | None = None,
        ctx: GuardContext | None = None,
    ) -> None:
        self.settings = settings or RepairSettings()
        self.pm = pm
        self.ctx = ctx or GuardContext()
        # parses of the texts the loop judges (clients repeat parameterised queries), bounded
        # by approximate bytes: a parse holds ~42x its text (AST, tokens, scopes)
        limits = self.ctx.settings
        budget = limits.cache_bytes or PARSE_CACHE * PARSE_COST * 1024
        self._parses: LRUCache[str, CypherQuery | None] = LRUCache(
            maxsize=budget, getsizeof=lambda parsed: _parse_cost(parsed, budget // PARSE_CACHE)
        )
        self._parse_max_query = limits.cache_max_query_bytes

    def parse(self, text: str) -> CypherQuery | None:
        """The parsed query (None when it does not parse), cached per repairer (short ones)."""
        cached = self._parses.get(text, _MISSING)
        if cached is not _MISSING:
            return cached  # type: ignore[return-value]
        parsed = _parse(text)
        if not self._parse_max_query or len(text) <= self._parse_max_query:
            with contextlib.suppress(ValueError):  # larger than the whole cache
                self._parses[text] = parsed
        return parsed

    def applies(self, query: str) -> bool:
        return self.settings.enabled and is_read_query(query, self.parse)

    async def run(
        self,
        query: str,
        *,
        execute: Execute,
        check: Check,
        parameters: Mapping[str, Any] | None = None,
        question: str | None = None,
        first: ResultStream | BackendError | None = None,
        retry_errors: bool = True,
    ) -> RepairOutcome:
        """Run `query` (or judge `first`, its already started result) and repair it if it
        fails or comes back empty. Raises nothing the backend raises: errors are outcomes."""
        params = dict(parameters or {})
        loop = _Loop(self, execute, check, params, question)
        current = await loop.judge(query, "client", None, first)
        if current.rows or not self.settings.enabled:
            return loop.outcome(current, "rows" if current.rows else "disabled")
        if not is_read_query(query, self.parse):
            return loop.outcome(current, "not a read query")
        if current.error is not None and not retry_errors:
            return loop.outcome(current, "errors are not retried here")
        if isinstance(current.error, BackendUnavailable):
            return loop.outcome(current, "the database is unavailable")
        return await loop.iterate(current)

    async def propose(self, request: RepairRequest) -> RepairCandidate | None:
        """Ask each `guard_repair` implementation in hook order; the first candidate wins.
        A plugin that raises (an LLM timeout) is logged and skipped."""
        if self.pm is None:
            return None
        for impl in reversed(self.pm.hook.guard_repair.get_hookimpls()):
            args = {"request": request, "ctx": self.ctx}
            try:
                result = await await_me_maybe(impl.function(**{k: args[k] for k in impl.argnames}))
            except Exception as exc:
                log.warning("repair plugin %s failed: %r", impl.plugin_name, exc)
                continue
            if isinstance(result, str):
                result = RepairCandidate(result)
            if isinstance(result, RepairCandidate):
                if not result.source:
                    result = RepairCandidate(result.query, result.code, result.cause,
                                             impl.plugin_name)  # fmt: skip
                return result
        return None


class _Loop:
    """The state of one repair: attempts so far, texts already run."""

    def __init__(
        self,
        owner: Repairer,
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
        self.attempts: list[Attempt] = []
        self.findings: list[Finding] = []
        self.ran: set[str] = set()

    async def iterate(self, current: _Run) -> RepairOutcome:
        seen = {current.attempt.query.strip()}
        prev_code: str | None = None
        error = current.attempt.error
        for _ in range(self.settings.budget):
            notes: list[Finding] = []
            parsed = self.owner.parse(current.attempt.query)
            if current.attempt.outcome == EMPTY and parsed is not None:
                found = await self.deterministic(parsed)
                if found is not None:
                    await _close(current)
                    return self.outcome(found, found.attempt.source)
                notes = await self.ground(parsed)
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
            if run.rows or same_code:
                await _close(current)
                return self.outcome(run, "rows" if run.rows else "same diagnosis twice")
            await _close(current)
            current, error = run, run.attempt.error
        return self.outcome(current, "budget exhausted")

    async def deterministic(self, parsed: CypherQuery) -> _Run | None:
        """Tier 1, relaxation, then both at once: the first candidate whose peeked records
        hold a non-null value (a row of nulls — `p.name` of what is now a Movie — is a
        reversed pattern matching the wrong things, not an answer)."""
        for text, source, code in self.candidates(parsed):
            run = await self.attempt(text, source, code)
            if run is None:
                continue
            if run.rows and any(v is not None for row in run.head for v in row):
                self.findings.append(Finding(
                    code, Severity.WARNING,
                    f"the query returned nothing; {_EXPLAIN[source]} and rows appeared",
                    (0, 0), rule=f"repair.{source}",
                ))  # fmt: skip
                return run
            await _close(run)
        return None

    def candidates(self, parsed: CypherQuery) -> list[tuple[str, str, str]]:
        out: list[tuple[str, str, str]] = []
        flips: list[str] = []
        if self.settings.tier1:
            schema = self.owner.ctx.schema
            flips = flip_candidates(parsed, schema, max_single=self.settings.budget)
            out += [(q, "tier1", "DIR.FLIPPED_ON_EMPTY") for q in flips]
        if self.settings.relaxation:
            relaxed = relax_case(parsed, self.params)
            if relaxed is not None:
                out.append((relaxed, "relaxation", "FIL.CASE_INSENSITIVE"))
                flipped = self.owner.parse(flips[0]) if flips else None
                both = relax_case(flipped, self.params) if flipped is not None else None
                if both is not None:
                    out.append((both, "tier1+relaxation", "DIR.FLIPPED_ON_EMPTY"))
        return out

    async def ground(self, parsed: CypherQuery) -> list[Finding]:
        if not self.settings.grounding:
            return []
        bindings = extract_bindings(parsed, self.params)
        notes = await probe_literals(bindings, self.execute) if bindings else []
        self.findings += notes
        return notes

    async def attempt(self, text: str, source: str, code: str | None) -> _Run | None:
        """Guard, then run, one candidate; None when its guarded text already ran."""
        started = time.perf_counter()
        try:
            verdict = await await_me_maybe(self.check(text))  # frontends judge off the loop
        except Exception as exc:  # fail closed, as the frontends do
            verdict = None
            log.warning("guard failed on a repair candidate: %r", exc)
        if verdict is None or verdict.blocked:
            why = "; ".join(f"{f.code}: {f.message}" for f in (verdict.findings if verdict else ()))
            attempt = Attempt(text, source, code, BLOCKED, error=why or "the guard failed",
                              ms=_ms(started))  # fmt: skip
            self.attempts.append(attempt)
            return _Run(attempt)
        final = verdict.query
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
    ) -> _Run:
        """Execute `text` (unless `first` is its result already) and peek at the records."""
        started = time.perf_counter() if started is None else started
        self.ran.add(text.strip())
        try:
            if isinstance(first, BackendError):
                raise first
            stream = first if first is not None else await self.execute(text, self.params)
            head = await stream.fetch(PEEK)
        except BackendError as exc:
            attempt = Attempt(text, source, code, ERROR, error=exc.message, ms=_ms(started))
            self.attempts.append(attempt)
            return _Run(attempt, error=exc)
        peeked = PeekedStream(stream, head)
        aggregates: frozenset[int] = frozenset()
        if len(head) == 1:  # only a single row needs the AST: is it a blank aggregate?
            parsed = self.owner.parse(text)
            aggregates = aggregate_columns(parsed) if parsed is not None else frozenset()
        empty = is_empty(head, len(head) >= PEEK and stream.has_more(), aggregates)
        outcome = EMPTY if empty else ROWS
        attempt = Attempt(text, source, code, outcome, len(head), ms=_ms(started))
        self.attempts.append(attempt)
        return _Run(attempt, stream=peeked, head=list(head))

    def outcome(self, chosen: _Run, stop: str) -> RepairOutcome:
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


def _parse(text: str) -> CypherQuery | None:
    try:
        return CypherQuery.parse(text)
    except CypherSyntaxError:
        return None


async def _close(run: _Run) -> None:
    if run.stream is not None:
        try:
            await run.stream.discard()
        except BackendError as exc:
            log.debug("discarding a repair attempt failed: %s", exc)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


# ---------------------------------------------------------------- wiring


def build_repairer(guard: Any, config: Any) -> Repairer | None:
    """The server's repairer from `[repair]` (None when disabled): repair plugins
    (`proxy.plugins.BUILTIN_REPAIR`, each module's `from_config(repair_table)`) are registered
    on the guard's own plugin manager, next to third-party `guard_repair` implementations."""
    from proxy.plugins import BUILTIN_REPAIR

    settings = RepairSettings.from_config(config.repair)
    if not settings.enabled:
        return None
    pm: pluggy.PluginManager = guard.pm
    for module_path in BUILTIN_REPAIR:
        name = module_path.rsplit(".", 1)[1]
        if pm.is_blocked(name) or pm.has_plugin(name):
            continue
        plugin = importlib.import_module(module_path).from_config(config.repair)
        if plugin is not None:
            pm.register(plugin, name=name)
    return Repairer(settings, pm, guard.ctx)
