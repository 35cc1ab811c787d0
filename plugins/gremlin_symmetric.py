"""Gremlin symmetric similarity — similarity edges are walked both ways
(`DIR.SIMILARITY_ASYMMETRIC`).

A similarity edge is stored once, in whichever direction it happened to be written, so a
directed walk over it silently drops half of the peers. On labels of `[gremlin.similarity]
edges` this rule rewrites, in every chain (anonymous traversals included):

* `outE(e)` / `inE(e)` → `bothE(e)`, and the vertex step that leaves the edge (`inV()` /
  `outV()`, the first one after it, filters in between allowed) → `otherV()` — one fix;
* `out(e)` / `in(e)` → `both(e)`.

Only steps whose labels are all similarity labels are touched (`outE('hasReason',
'similarReason')` is left alone and reported without a fix). Vacuous without a
`[gremlin.similarity]` table. Findings are warnings; the fix is applied.

Example::

    g.V(1).out('hasReason').outE('similarReason').inV()
      -> g.V(1).out('hasReason').bothE('similarReason').otherV()
"""

from __future__ import annotations

from query_guard.api import Edit, Finding, GuardContext, Severity, hookimpl
from query_guard.api.gremlin import GremlinQuery, Step, gremlin_settings, rename_step, string_args

_EDGE_STEPS = {"outE": "bothE", "inE": "bothE"}
_VERTEX_STEPS = {"out": "both", "in": "both"}
_LEAVE_EDGE = frozenset({"inV", "outV", "otherV", "bothV"})
_MOVES = frozenset({"out", "in", "both", "outE", "inE", "bothE", "V", "E"})


@hookimpl
def guard_gremlin(traversal: GremlinQuery, ctx: GuardContext) -> list[Finding]:
    similarity = gremlin_settings(ctx.gremlin).similarity
    if similarity is None:
        return []
    sim_labels = similarity.labels
    findings: list[Finding] = []
    for chain in traversal.traversals():
        steps = chain.all_steps
        for i, step in enumerate(steps):
            if step.name not in _EDGE_STEPS and step.name not in _VERTEX_STEPS:
                continue
            labels = string_args(step) or []
            if not set(labels) & sim_labels:
                continue
            fix: tuple[Edit, ...] | None = None
            if set(labels) <= sim_labels:
                edits = [rename_step(step, {**_EDGE_STEPS, **_VERTEX_STEPS}[step.name])]
                leave = _leaving_step(steps[i + 1 :]) if step.name in _EDGE_STEPS else None
                if leave is not None and leave.name in ("inV", "outV"):
                    edits.append(rename_step(leave, "otherV"))
                fix = tuple(edits)
            findings.append(
                Finding(
                    "DIR.SIMILARITY_ASYMMETRIC",
                    Severity.WARNING,
                    f"{step.name}({', '.join(repr(x) for x in labels)}) walks similarity edges "
                    "in one direction, but each is stored once: half of the peers are dropped"
                    + ("; walked both ways" if fix else ""),
                    step.span,
                    fix=fix,
                )
            )
    return findings


def _leaving_step(rest: list[Step]) -> Step | None:
    """The step that leaves the edges for vertices, unless another move comes first."""
    for step in rest:
        if step.name in _LEAVE_EDGE:
            return step
        if step.name in _MOVES:
            return None
    return None
