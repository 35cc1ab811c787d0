"""Gremlin directions — flip `out`↔`in` when the schema declares the edge only the other way
(`DIR.REVERSED`, DESIGN §5).

The schema is `[gremlin.schema] edges = [[from, edge, to], …]` when configured, else the
schema catalog (`--schema`, discovery). The rule follows each chain and keeps the labels the
current vertex may have:

* `hasLabel('x', …)` or `has('x', key, value)` sets them (`g.V().hasLabel('case')`);
* filters, `as()`, `dedup()`, `limit()` … keep them;
* `out(e)` / `in(e)` / `both(e)` and `outE(e)…inV()` move them along the declared edges
  (`g.V().hasLabel('case').out('hasReason')` is on `reason` vertices);
* anything else (maps, aggregations, unlabelled moves) forgets them.

Anonymous traversals under `where`, `filter`, `not`, `and`, `or`, `local`, `map`,
`flatMap`, `sideEffect`, `coalesce`, `union`, `optional` and `choose` start from the labels of
the step they hang on; others start unknown.

With labels known and a single edge label e the schema declares: if no declaration of e
starts at the current labels but one ends there, `out(e)` becomes `in(e)` (and vice versa),
`outE(e)` becomes `inE(e)` and the vertex step leaving the edge (`inV()` ↔ `outV()`) is flipped
with it. Edges whose declarations join a label to itself are never flipped, nor is `both*`.
An edge label that fits the current labels in neither direction is reported as `SCH.NO_PATH`
without a fix. Findings are warnings.
"""

from __future__ import annotations

from dataclasses import dataclass

from proxy.context import GuardContext
from proxy.gremlin.ast import Step, String
from proxy.gremlin.edits import nested_traversals, rename_step, string_args
from proxy.gremlin.language import GremlinQuery
from proxy.gremlin.similarity import gremlin_settings
from proxy.hookspecs import hookimpl
from proxy.model import Edit, Finding, Severity
from proxy.schema import SchemaCatalog

Labels = frozenset[str] | None

_KEEP = frozenset(
    {"has", "hasId", "hasNot", "hasKey", "hasValue", "where", "filter", "not", "and", "or", "is",
     "as", "dedup", "limit", "range", "tail", "sample", "coin", "order", "by", "simplePath",
     "cyclicPath", "identity", "barrier", "sideEffect", "aggregate", "store", "timeLimit",
     "emit", "until", "times", "with"}
)  # fmt: skip
_INHERIT = frozenset(
    {"where", "filter", "not", "and", "or", "local", "map", "flatMap", "sideEffect", "coalesce",
     "union", "optional", "choose"}
)  # fmt: skip
_FLIP = {"out": "in", "in": "out", "outE": "inE", "inE": "outE"}
_LEAVE_EDGE = frozenset({"inV", "outV", "otherV", "bothV"})


@dataclass(frozen=True, slots=True)
class _OnEdge:
    """Between `outE(e)` and the vertex step: which end the walk came from."""

    label: str
    came_from: Labels  # labels at the near end
    forward: bool  # True: outE (near end = start of the edge)
    flipped: bool = False  # the leaving inV/outV is being renamed along with the edge step


@hookimpl
def guard_gremlin(traversal: GremlinQuery, ctx: GuardContext) -> list[Finding]:
    catalog = gremlin_settings(ctx.gremlin).schema.catalog() or ctx.schema
    if catalog is None:
        return []
    findings: list[Finding] = []
    _walk(traversal.traversal.all_steps, None, catalog, findings)
    for step in traversal.traversal.source:
        for t in nested_traversals(step):
            _walk(t.all_steps, None, catalog, findings)
    return findings


def _walk(chain: list[Step], labels: Labels, catalog: SchemaCatalog, out: list[Finding]) -> None:
    edge: _OnEdge | None = None
    for i, step in enumerate(chain):
        for t in nested_traversals(step):
            _walk(t.all_steps, labels if step.name in _INHERIT else None, catalog, out)
        if edge is not None and step.name in _LEAVE_EDGE:
            labels, edge = _leave(step, edge, catalog), None
            continue
        if edge is not None and step.name in _KEEP:
            continue
        edge = None
        if step.name == "hasLabel":
            names = string_args(step)
            labels = frozenset(names) if names else None
        elif step.name == "has" and len(step.args) == 3 and isinstance(step.args[0], String):
            labels = frozenset({step.args[0].value})
        elif step.name in ("out", "in", "both"):
            labels = _vertex_step(step, labels, catalog, out)
        elif step.name in ("outE", "inE"):
            edge = _edge_step(step, chain[i + 1 :], labels, catalog, out)
            labels = None
        elif step.name not in _KEEP:
            labels = None


def _single_label(step: Step, catalog: SchemaCatalog) -> str | None:
    names = string_args(step)
    if not names or len(names) != 1 or not catalog.has_type(names[0]):
        return None
    return names[0]


def _direction(step_name: str, e: str, labels: frozenset[str], cat: SchemaCatalog) -> str:
    """One of "ok", "flip", "none" (fits neither way) or "skip" (a self-joining edge)."""
    if any(d.start == d.end for d in cat.declarations(e)):
        return "skip"
    forward = step_name in ("out", "outE")
    fits = cat.fits(labels, e, None) if forward else cat.fits(None, e, labels)
    if fits:
        return "ok"
    reverse = cat.fits(None, e, labels) if forward else cat.fits(labels, e, None)
    return "flip" if reverse else "none"


def _vertex_step(step: Step, labels: Labels, cat: SchemaCatalog, out: list[Finding]) -> Labels:
    e = _single_label(step, cat)
    if e is None or labels is None:
        return None
    name = step.name
    if name != "both":
        verdict = _direction(name, e, labels, cat)
        if verdict == "flip":
            out.append(_reversed(step, e, labels, (rename_step(step, _FLIP[name]),)))
            name = _FLIP[name]
        elif verdict == "none":
            out.append(_no_path(step, e, labels))
            return None
    return _ends(e, labels, cat, forward=name in ("out", "both"), backward=name in ("in", "both"))


def _edge_step(
    step: Step, rest: list[Step], labels: Labels, cat: SchemaCatalog, out: list[Finding]
) -> _OnEdge | None:
    e = _single_label(step, cat)
    if e is None or labels is None:
        return None
    name = step.name
    verdict = _direction(name, e, labels, cat)
    if verdict == "none":
        out.append(_no_path(step, e, labels))
        return None
    if verdict == "flip":
        edits = [rename_step(step, _FLIP[name])]
        leave = next((s for s in rest if s.name in _LEAVE_EDGE or s.name not in _KEEP), None)
        if leave is not None and leave.name in ("inV", "outV"):
            edits.append(rename_step(leave, "outV" if leave.name == "inV" else "inV"))
        out.append(_reversed(step, e, labels, tuple(edits)))
        name = _FLIP[name]
    return _OnEdge(e, labels, forward=name == "outE", flipped=verdict == "flip")


def _leave(step: Step, edge: _OnEdge, cat: SchemaCatalog) -> Labels:
    if edge.came_from is None:
        return None
    if step.name == "bothV":
        return None
    # otherV reaches the far end; inV is the far end of an outE walk, outV of an inE walk
    is_in = (step.name == "inV") != edge.flipped  # a flipped inV is an outV now
    far = step.name == "otherV" or is_in == edge.forward
    if not far:
        return edge.came_from
    return _ends(edge.label, edge.came_from, cat, forward=edge.forward, backward=not edge.forward)


def _ends(
    e: str, labels: frozenset[str], cat: SchemaCatalog, forward: bool, backward: bool
) -> Labels:
    found: set[str] = set()
    for d in cat.declarations(e):
        if forward and d.start in labels:
            found.add(d.end)
        if backward and d.end in labels:
            found.add(d.start)
    return frozenset(found) or None


def _reversed(step: Step, e: str, labels: frozenset[str], fix: tuple[Edit, ...]) -> Finding:
    shown = "|".join(sorted(labels))
    return Finding(
        "DIR.REVERSED",
        Severity.WARNING,
        f"the schema declares '{e}' only towards {shown}, not from it: {step.name}('{e}') reversed",
        step.span,
        fix=fix,
    )


def _no_path(step: Step, e: str, labels: frozenset[str]) -> Finding:
    shown = "|".join(sorted(labels))
    return Finding(
        "SCH.NO_PATH",
        Severity.WARNING,
        f"the schema declares no '{e}' edge at {shown} vertices in either direction",
        step.span,
    )
