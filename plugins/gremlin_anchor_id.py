"""Gremlin anchors, SEGRA's P4 `ANC.ID` (DESIGN §5): `has('case', 'id', X)` / `has('id', X)`
address a property vertices do not have (the id is not a property).

*Fixed* to `hasLabel('case').hasId(X)` / `hasId(X)` (a warning: the rewrite runs). Skipped
when the schema catalog declares an `id` property for that label. Active without a
`[gremlin.similarity]` table.
"""

from __future__ import annotations

from query_guard.api import Finding, GuardContext, hookimpl
from query_guard.api.gremlin import GremlinQuery, String, finding, replace_node


@hookimpl
def guard_gremlin(traversal: GremlinQuery, ctx: GuardContext) -> list[Finding]:
    return _anchor_by_id(traversal, ctx)


def _anchor_by_id(q: GremlinQuery, ctx: GuardContext) -> list[Finding]:
    findings = []
    for step in q.steps():
        if step.name != "has" or len(step.args) not in (2, 3):
            continue
        *head, key, value = step.args
        if not (isinstance(key, String) and key.value == "id"):
            continue
        label = head[0] if head else None
        if label is not None and not isinstance(label, String):
            continue
        if _declares_id(ctx, label.value if label is not None else None):
            continue
        has_id = f"hasId({q.source(value)})"
        text = f"hasLabel({q.source(label)}).{has_id}" if label is not None else has_id
        findings.append(
            finding(
                "ANC.ID",
                f"{q.source(step)} filters on a property 'id' that vertices do "
                "not have; the id is addressed with hasId()/g.V(id)",
                step,
                (replace_node(step, text),),
            )
        )
    return findings


def _declares_id(ctx: GuardContext, label: str | None) -> bool:
    schema = ctx.schema
    if schema is None:
        return False
    if label is None:
        return "id" in schema.all_node_properties
    return "id" in schema.node_properties(label)
