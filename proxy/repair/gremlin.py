"""Gremlin's repair strategy (`query_guard.repair.loop.Strategy`): a read traversal that
returned nothing — no results, or the one blank value (0, []) of a final `count()`, `sum()`,
`fold()` — is retried with the direction of its hops reversed: `out`↔`in`, `outE`↔`inE` with
the `inV`/`outV` that leaves the edge. No relaxation or literal grounding (yet); failed
traversals are not repaired.

Hops are found on the guard's output (`Verdict.to_run`) with the shared label tracking
(`query_guard.gremlin.labels`). A hop naming one edge label of the schema is **pinned** —
never flipped — when the labels it starts from are known and the schema declares the edge
only as written (this covers every hop the guard's direction rule already reversed); **safe**
to flip when the schema declares the edge one way only, between different labels, and the
hop's labels are unknown or fit only the reversed direction; **speculative** otherwise
(`knows` between persons). Hops inside `not(...)` are left alone (reversing a negated filter
lets other vertices through). Candidates, best first: every flippable hop reversed at once,
then each alone (at most `[repair] budget` of them). On TinkerPop's modern graph::

    g.V('1').in('created')            # marko created lop: empty
    -> g.V('1').out('created')        # safe: created is declared person -> software only
    g.V().has('person', 'name', 'vadas').out('knows')   # empty: nobody is known by vadas
    -> REPAIR.SUGGESTED ... in('knows') would return 1 result(s)  # applied on opt-in
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from query_guard.backend import ResultStream
from query_guard.gremlin.ast import Step
from query_guard.gremlin.edits import nested_traversals, rename_step
from query_guard.gremlin.labels import FLIP, KEEP, LEAVE_EDGE, Labels, LabelWalk
from query_guard.gremlin.language import GremlinQuery
from query_guard.gremlin.lexicon import MUTATING_STEPS
from query_guard.model import Edit, Verdict
from query_guard.repair.grounding import LiteralFix
from query_guard.repair.model import Candidate, Flip, Hop, RepairSettings, Words, flips
from query_guard.schema.catalog import SchemaCatalog

WORDS = Words(
    repr, noun="traversal", rows="results", unit="result(s)",
    opt_in='to have such repairs applied, send the question with the request (the request '
    'argument "question": Client.submit(…, request_options={"question": …}) or '
    'g.with_("question", …); the field "question" of the HTTP form) or set [repair] '
    'speculative = "apply"',
)  # fmt: skip
_AGGREGATES = frozenset({"count", "sum", "fold"})  # one blank value is an empty answer


class GremlinStrategy:
    language = "gremlin"
    words = WORDS
    retry_errors = False

    def __init__(
        self,
        catalog: SchemaCatalog,
        execute: Callable[[str], Awaitable[ResultStream]],
        parser: Callable[[str], GremlinQuery | None],  # None: it does not parse
    ) -> None:
        self.catalog, self.execute, self.parse = catalog, execute, parser

    def never_repaired(self, parsed: GremlinQuery | None) -> str | None:
        if parsed is None:
            return "the traversal does not parse"
        if any(s.name in MUTATING_STEPS for s in parsed.steps()):
            return "not a read traversal"
        return None

    def runnable(self, verdict: Verdict) -> bool:
        return self.never_repaired(self.parse(verdict.to_run)) is None

    def aggregates(self, parsed: GremlinQuery) -> frozenset[int]:
        """A count(), sum() or fold() at the end: its one blank value is an empty answer."""
        steps = parsed.traversal.all_steps
        return frozenset({0}) if steps and steps[-1].name in _AGGREGATES else frozenset()

    def candidates(
        self, parsed: GremlinQuery, settings: RepairSettings, fixes: Sequence[LiteralFix] | None
    ) -> list[Candidate]:
        if fixes is not None or not settings.tier1:
            return []
        return [
            Candidate(f.text, "tier1", "DIR.FLIPPED_ON_EMPTY", f.safe,
                      "in/out of its hops were reversed", "reversing in/out of its hops")
            for f in flip_candidates(parsed, self.catalog, settings.budget)[: settings.budget]
        ]  # fmt: skip

    def bindings(self, parsed: GremlinQuery) -> Sequence[Any]:
        return []

    async def stored(self, binding: Any, token: str) -> list[tuple[str, Any]] | None:
        return None


def flip_candidates(
    query: GremlinQuery, catalog: SchemaCatalog, max_single: int
) -> list[Flip]:
    """The candidates, best first (see the module docstring); no duplicates."""
    hops: list[Hop] = []
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
    return flips(query.text, [hops] + ([[h] for h in hops[:max_single]] if len(hops) > 1 else []))


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
