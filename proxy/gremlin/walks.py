"""Similarity walks in a parsed Gremlin traversal, for SEGRA's rules P1-P3 (DESIGN §5:
`gremlin_window`, `gremlin_threshold`, `gremlin_bracket`): the chains of a traversal with what
ran before each and what its output continues into, the similarity steps in them, filters that
hang inside `where(...)`/`local(...)`, and the findings' severity rule.

A *similarity step* is `bothE/outE/inE/both/out/in` naming a similarity label of
`[gremlin.similarity] edges`. Every chain is visited, anonymous traversals included ("earlier"
includes the enclosing chain's steps before the nesting step); a `local(...)` / `map(...)` /
`flatMap(...)` body's output continues into the enclosing chain's later steps, a `where(...)`
body's does not (the walk goes on from the vertex it filtered). The rules are driven by
`[gremlin.similarity]` (`edges` maps each similarity label e to Φ(e), the within-case edge that
reaches the vertices e connects: `similarReason -> hasReason`); without that table they do
nothing. Severity (`finding`): a violation a rule fixes is a warning (the rewritten walk runs);
one the configuration does not let it fix is an error — SEGRA's verifier rejects such plans,
and the message tells the LLM the exact fix.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from query_guard.gremlin.ast import Step, Traversal
from query_guard.gremlin.edits import nested_traversals, string_args
from query_guard.gremlin.labels import LEAVE_EDGE
from query_guard.gremlin.language import GremlinQuery
from query_guard.gremlin.similarity import SimilaritySettings
from query_guard.model import Edit, Finding, Severity

__all__ = ["EDGE_STEPS", "LEAVE_EDGE", "MOVES", "VERTEX_STEPS", "SimilarityStep", "chains",
           "finding", "inside", "similarity_steps"]  # fmt: skip

EDGE_STEPS = frozenset({"bothE", "outE", "inE"})
VERTEX_STEPS = frozenset({"both", "out", "in"})
MOVES = EDGE_STEPS | VERTEX_STEPS | LEAVE_EDGE | {"V", "E"}
_EDGE_OR_VERTEX = EDGE_STEPS | VERTEX_STEPS
_CONTINUES = frozenset({"local", "map", "flatMap"})
_FILTERS_INSIDE = frozenset({"where", "filter", "and", "local"})  # a has() inside filters too


@dataclass(frozen=True)
class SimilarityStep:
    """One similarity step `chain[i]` naming `labels`; `prior` ran before its chain, `cont`
    is what the chain's output continues into, `anchored`: the chain is the root's."""

    prior: list[Step]
    chain: list[Step]
    cont: list[Step]
    anchored: bool
    i: int
    labels: list[str]

    @property
    def step(self) -> Step:
        return self.chain[self.i]


def similarity_steps(q: GremlinQuery, sim: SimilaritySettings) -> Iterator[SimilarityStep]:
    """Every similarity step of `q`, chain by chain (a chain's steps in order); found once per
    parse and settings (the rules that ask share them, and only read them)."""
    return iter(q.cached("similarity_steps", sim, lambda: list(_similarity_steps(q, sim))))


def _similarity_steps(q: GremlinQuery, sim: SimilaritySettings) -> Iterator[SimilarityStep]:
    similarity = sim.labels
    for prior, chain, cont, is_root in chains(q.traversal):
        for i, step in enumerate(chain):
            if step.name not in _EDGE_OR_VERTEX:
                continue
            labels = string_args(step) or []
            if not similarity.isdisjoint(labels):
                yield SimilarityStep(prior, chain, cont, is_root, i, labels)


def chains(root: Traversal) -> Iterator[tuple[list[Step], list[Step], list[Step], bool]]:
    """(steps that ran before the chain, the chain, the steps its output continues into, is
    it the root's) for every chain. A `local(...)` / `map(...)` / `flatMap(...)` body's output
    continues into the enclosing chain's later steps; a `where(...)` body's does not (the
    walk goes on from the vertex it filtered)."""
    stack: list[tuple[list[Step], list[Step], Traversal]] = [([], [], root)]
    while stack:
        prior, cont, t = stack.pop()
        chain = t.all_steps
        yield prior, chain, cont, t is root
        for i, step in enumerate(chain):
            after = chain[i + 1 :] + cont if step.name in _CONTINUES else []
            stack.extend((prior + chain[:i], after, n) for n in nested_traversals(step))
        for step in t.source:
            stack.extend(([], [], n) for n in nested_traversals(step))


def inside(step: Step) -> Iterator[Step]:
    """The steps of `where(...)` / `filter(...)` / `and(...)` / `local(...)` bodies up to their
    first move: filters there filter the step they hang on."""
    if step.name in _FILTERS_INSIDE:
        for t in nested_traversals(step):
            for s in t.all_steps:
                if s.name in MOVES:
                    break
                yield s


def finding(code: str, message: str, step: Step, fix: tuple[Edit, ...] | None) -> Finding:
    """A fixed violation is a warning (the rewrite runs); one the configuration cannot fix is
    an error: SEGRA's verifier rejects such plans (DESIGN §5), and the message says the fix."""
    severity = Severity.WARNING if fix or code == "ANC.ID" else Severity.ERROR
    return Finding(code, severity, message, step.span, fix=fix)
