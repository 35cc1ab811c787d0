"""Execution-triggered repair for Gremlin (DESIGN §6): a read traversal that returned nothing
is retried with the direction of its hops reversed — `out`↔`in`, `outE`↔`inE` with the
`inV`/`outV` that leaves the edge — under the same safe-vs-speculative rule as Cypher
(`query_guard.repair.loop`).

Hops are found on the guard's output (`Verdict.to_run`) with the shared label tracking
(`query_guard.gremlin.labels`). A hop naming one edge label of the schema is

* **pinned** — never flipped — when the labels it starts from are known and the schema
  declares the edge only as written (this covers every hop the guard's direction rule
  already reversed: its fix fits the schema only as written);
* **safe** to flip when the schema declares the edge one way only, between different labels,
  and the hop's labels are unknown or fit only the reversed direction: the schema then says
  the hop was written the wrong way round;
* **speculative** otherwise (an edge declared both ways or joining a label to itself,
  `knows` between persons): an empty answer may be the right one.

Hops inside `not(...)` are left alone (reversing a negated filter lets other vertices
through; results appearing would not say the hop was wrong). Candidates, best first: every
flippable hop reversed at once, then each alone (at most
`[repair] budget` runs). Each is re-guarded (a blocked candidate is recorded, never run) and
run as its verdict's `to_run`; the first one with results wins when it is safe or the client
opted in (its `question`, or `[repair] speculative = "apply"`) and is reported as
`DIR.FLIPPED_ON_EMPTY`; otherwise the client gets its own empty result and the candidate as a
`REPAIR.SUGGESTED` warning. When more than one traversal ran, every attempt is listed as a
`REPAIR.ATTEMPT` finding. Example, on TinkerPop's modern graph (`knows`: person → person,
`created`: person → software)::

    g.V('1').in('created')            # marko created lop: empty
    -> g.V('1').out('created')        # safe: created is declared person -> software only
    g.V().has('person', 'name', 'vadas').out('knows')   # empty: nobody is known by vadas
    -> REPAIR.SUGGESTED ... in('knows') would return 1 result(s)  # applied on opt-in
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from query_guard.backend import BackendError
from query_guard.clock import elapsed_ms
from query_guard.gremlin.ast import Step
from query_guard.gremlin.edits import nested_traversals, rename_step
from query_guard.gremlin.errors import GremlinScriptError, GremlinSyntaxError
from query_guard.gremlin.labels import FLIP, KEEP, LEAVE_EDGE, Labels, LabelWalk
from query_guard.gremlin.language import GremlinQuery
from query_guard.gremlin.lexicon import MUTATING_STEPS
from query_guard.model import Edit, Finding, Severity, Verdict, apply_edits
from query_guard.repair.candidates import is_blank
from query_guard.repair.model import (
    BLOCKED,
    EMPTY,
    ERROR,
    ROWS,
    Attempt,
    RepairSettings,
    await_me_maybe,
)
from query_guard.schema.catalog import SchemaCatalog

Run = Callable[[str, Mapping[str, Any]], Awaitable[list[Any]]]  # guarded text -> results
Check = Callable[[str], Verdict | Awaitable[Verdict]]

OPT_IN = (
    'to have such repairs applied, send the question with the request (the request argument '
    '"question": Client.submit(…, request_options={"question": …}) or g.with_("question", …); '
    'the field "question" of the HTTP form) or set [repair] speculative = "apply"'
)
_AGGREGATES = frozenset({"count", "sum", "fold"})  # one blank value is an empty answer


@dataclass(frozen=True, slots=True)
class GremlinFlip:
    """A candidate: the traversal with some hops reversed, and whether that is safe."""

    text: str
    safe: bool


@dataclass
class GremlinRepair:
    """What the client gets: the traversal that answered, its results, what was tried."""

    query: str
    results: list[Any]
    attempts: list[Attempt] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    stop: str = ""

    @property
    def repaired(self) -> bool:
        return bool(self.attempts) and self.query != self.attempts[0].query


def is_empty_result(query: GremlinQuery, results: list[Any]) -> bool:
    """No results, or the one blank value (0, []) an aggregate over nothing returns."""
    if not results:
        return True
    steps = query.traversal.all_steps
    last = steps[-1].name if steps else ""
    return len(results) == 1 and last in _AGGREGATES and is_blank(results[0])


def flip_candidates(
    query: GremlinQuery, catalog: SchemaCatalog, max_single: int
) -> list[GremlinFlip]:
    """The candidates, best first (see the module docstring); no duplicates."""
    hops: list[tuple[tuple[Edit, ...], bool]] = []
    negated = {
        id(n) for s in query.steps() if s.name == "not"
        for t in nested_traversals(s) for n in t.walk()
    }  # fmt: skip

    def on_hop(step: Step, rest: list[Step], e: str, labels: Labels) -> str:
        if step.name in FLIP and id(step) not in negated:
            safe = _classify(step.name, e, labels, catalog)
            if safe is not None:
                hops.append((_flip_edits(step, rest), safe))
        return step.name

    LabelWalk(catalog, on_hop).run(query.traversal)
    groups = [hops] + ([[h] for h in hops[:max_single]] if len(hops) > 1 else [])
    out: list[GremlinFlip] = []
    for group in groups:
        if not group:
            continue
        text = apply_edits(query.text, [e for edits, _ in group for e in edits])
        if all(f.text != text for f in out):
            out.append(GremlinFlip(text, all(safe for _, safe in group)))
    return out


def _classify(name: str, e: str, labels: Labels, cat: SchemaCatalog) -> bool | None:
    """True: a safe flip; False: a speculative one; None: pinned, never flipped."""
    pairs = {(d.start, d.end) for d in cat.declarations(e)}
    both_ways = any(s == t or (t, s) in pairs for s, t in pairs)
    if labels is None:
        return not both_ways
    out = name in ("out", "outE")
    written = cat.fits(labels, e, None) if out else cat.fits(None, e, labels)
    reversed_ = cat.fits(None, e, labels) if out else cat.fits(labels, e, None)
    if not reversed_:
        return None  # pinned as written, or no such edge at these labels either way
    return not written and not both_ways


def _flip_edits(step: Step, rest: list[Step]) -> tuple[Edit, ...]:
    edits = [rename_step(step, FLIP[step.name])]
    if step.name in ("outE", "inE"):
        leave = next((s for s in rest if s.name in LEAVE_EDGE or s.name not in KEEP), None)
        if leave is not None and leave.name in ("inV", "outV"):
            edits.append(rename_step(leave, "outV" if leave.name == "inV" else "inV"))
    return tuple(edits)


async def repair_gremlin(
    query: str,
    results: list[Any],
    *,
    settings: RepairSettings,
    catalog: SchemaCatalog | None,
    check: Check,
    run: Run,
    bindings: Mapping[str, Any] | None = None,
    question: str | None = None,
) -> GremlinRepair:
    """`query` (a guarded traversal's `to_run`) came back with `results`: repair it when they
    are empty (see the module docstring). Raises nothing a backend raises."""
    if len(results) > 1 or (results and not is_blank(results[0])):
        return GremlinRepair(query, results, [], stop="rows")  # plainly rows: no parse needed
    first = GremlinRepair(query, results, [Attempt(query, "client", None, EMPTY)])
    try:
        parsed = GremlinQuery.parse(query)
    except (GremlinSyntaxError, GremlinScriptError):
        return _done(first, "the traversal does not parse")
    if not is_empty_result(parsed, results):
        return GremlinRepair(query, results, [], stop="rows")
    if not settings.enabled or not settings.tier1 or catalog is None:
        return _done(first, "disabled" if catalog is not None else "no schema")
    if any(s.name in MUTATING_STEPS for s in parsed.steps()):
        return _done(first, "not a read traversal")
    opted_in = question is not None or settings.speculative == "apply"
    ran = {query.strip()}
    suggested = False
    for flip in flip_candidates(parsed, catalog, settings.budget)[: settings.budget]:
        if not (flip.safe or opted_in) and suggested:
            continue
        got = await _attempt(first, flip.text, check, run, bindings or {}, ran)
        if got is None:
            continue
        final, rows = got
        if flip.safe or opted_in:
            why = "" if flip.safe else " (a speculative repair: the client opted in)"
            first.findings.append(Finding(
                "DIR.FLIPPED_ON_EMPTY", Severity.WARNING,
                f"the traversal returned nothing; in/out of its hops were reversed and "
                f"results appeared{why}",
                (0, 0), hint=final, rule="repair.tier1",
            ))  # fmt: skip
            first.query, first.results = final, rows
            return _done(first, "rows")
        suggested = True
        first.findings.append(Finding(
            "REPAIR.SUGGESTED", Severity.WARNING,
            f"DIR.FLIPPED_ON_EMPTY: the traversal returned nothing; reversing in/out of its "
            f"hops would return {len(rows)} result(s) — not applied, since the empty answer "
            f"may be right. Alternative traversal: {final} — {OPT_IN}",
            (0, 0), hint=final, rule="repair",
        ))  # fmt: skip
    return _done(first, "suggested" if suggested else "no candidate answered")


async def _attempt(
    into: GremlinRepair,
    text: str,
    check: Check,
    run: Run,
    bindings: Mapping[str, Any],
    ran: set[str],
) -> tuple[str, list[Any]] | None:
    """Guard, then run, one candidate (recorded in `into.attempts`): its final text and
    results when they are not empty."""
    started = time.perf_counter()
    try:
        verdict: Verdict | None = await await_me_maybe(check(text))
    except Exception:  # fail closed: a candidate the guard could not judge never runs
        verdict = None
    if verdict is None or verdict.blocked:
        why = "; ".join(f"{f.code}: {f.message}" for f in (verdict.findings if verdict else ()))
        into.attempts.append(Attempt(text, "tier1", "DIR.FLIPPED_ON_EMPTY", BLOCKED,
                                     error=why or "the guard failed",
                                     ms=elapsed_ms(started)))  # fmt: skip
        return None
    final = verdict.to_run
    if final.strip() in ran:  # the guard turned it back into a traversal that already ran
        return None
    ran.add(final.strip())
    try:
        rows = await run(final, bindings)
    except BackendError as exc:
        into.attempts.append(Attempt(final, "tier1", "DIR.FLIPPED_ON_EMPTY", ERROR,
                                     error=exc.message, ms=elapsed_ms(started)))  # fmt: skip
        return None
    try:
        empty = is_empty_result(GremlinQuery.parse(final), rows)
    except (GremlinSyntaxError, GremlinScriptError):
        empty = not rows
    outcome = EMPTY if empty else ROWS
    into.attempts.append(Attempt(final, "tier1", "DIR.FLIPPED_ON_EMPTY", outcome,
                                 min(len(rows), 2), ms=elapsed_ms(started)))  # fmt: skip
    return None if empty else (final, rows)


def _done(repair: GremlinRepair, stop: str) -> GremlinRepair:
    repair.stop = stop
    if len(repair.attempts) > 1:
        repair.findings += [
            Finding("REPAIR.ATTEMPT", Severity.INFO, a.describe(i), (0, 0), rule="repair")
            for i, a in enumerate(repair.attempts, 1)
        ]
    return repair
