"""Gremlin directions — flip `out`↔`in` when the schema declares the edge only the other way
(`DIR.REVERSED`, DESIGN §5).

The schema is `[gremlin.schema] edges = [[from, edge, to], …]` when configured, else the
schema catalog (`--schema`, discovery). The rule follows each chain and keeps the labels the
current vertex may have (`query_guard.gremlin.labels`): `hasLabel` / `has(label, k, v)` set them,
filters keep them, hops move them along the declared edges
(`g.V().hasLabel('case').out('hasReason')` is on `reason` vertices); they survive
`repeat(...)` (every label its body reaches), `where(...)` and `as('a')…select('a')`, and
anonymous traversals under `where`, `local`, `filter`, `union`, … start from the labels of
the step they hang on (`where(__.as('a')…)` from those of 'a').

With labels known and a single edge label e the schema declares: if no declaration of e
starts at the current labels but one ends there, `out(e)` becomes `in(e)` (and vice versa),
`outE(e)` becomes `inE(e)` and the vertex step leaving the edge (`inV()` ↔ `outV()`) is flipped
with it. Edges whose declarations join a label to itself are never flipped, nor is `both*`.
An edge label that fits the current labels in neither direction is reported as `SCH.NO_PATH`
without a fix. Findings are warnings.
"""

from __future__ import annotations

from query_guard.api import Edit, Finding, GuardContext, SchemaCatalog, Severity, hookimpl
from query_guard.api.gremlin import (
    FLIP,
    KEEP,
    LEAVE_EDGE,
    GremlinQuery,
    Labels,
    LabelWalk,
    Step,
    gremlin_settings,
    rename_step,
)


@hookimpl
def guard_gremlin(traversal: GremlinQuery, ctx: GuardContext) -> list[Finding]:
    catalog = gremlin_settings(ctx.gremlin).schema.catalog() or ctx.schema
    if catalog is None:
        return []
    findings: list[Finding] = []

    def on_hop(step: Step, rest: list[Step], e: str, labels: Labels) -> str | None:
        if labels is None or step.name == "both":
            return step.name
        verdict = direction(step.name, e, labels, catalog)
        if verdict == "none":
            findings.append(_no_path(step, e, labels))
            return None
        if verdict != "flip":
            return step.name
        edits = [rename_step(step, FLIP[step.name])]
        if step.name in ("outE", "inE"):
            leave = next((s for s in rest if s.name in LEAVE_EDGE or s.name not in KEEP), None)
            if leave is not None and leave.name in ("inV", "outV"):
                edits.append(rename_step(leave, "outV" if leave.name == "inV" else "inV"))
        findings.append(_reversed(step, e, labels, tuple(edits)))
        return FLIP[step.name]

    LabelWalk(catalog, on_hop).run(traversal.traversal)
    return findings


def direction(step_name: str, e: str, labels: frozenset[str], cat: SchemaCatalog) -> str:
    """One of "ok", "flip", "none" (fits neither way) or "skip" (a self-joining edge)."""
    if any(d.start == d.end for d in cat.declarations(e)):
        return "skip"
    forward = step_name in ("out", "outE")
    fits = cat.fits(labels, e, None) if forward else cat.fits(None, e, labels)
    if fits:
        return "ok"
    reverse = cat.fits(None, e, labels) if forward else cat.fits(labels, e, None)
    return "flip" if reverse else "none"


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
