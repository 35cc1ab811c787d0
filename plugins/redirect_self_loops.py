"""RedirectSelfLoops — direct an undirected pattern over a reciprocal type (`DIR.RECIPROCAL`).

When a same-label type is stored in both directions for (almost) every pair — its measured
reciprocity reaches `guard.reciprocity_threshold`, default 0.9 — an undirected pattern
`(a:Person)-[:KNOWS]-(b:Person)` meets every pair once per stored edge and doubles counts.
Making it directed (`->`) counts each pair once (CypherGuard, rule 3). Reciprocity comes from
the schema catalog (`query-guard schema` measures it). Untyped, variable-length and quantified
patterns are left alone, as are types that are not reciprocal.

Example (KNOWS reciprocity 1.0)::

    MATCH (a:Person)-[:KNOWS]-(b:Person) RETURN count(*)
    ->  MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN count(*)
"""

from __future__ import annotations

from query_guard.api import Edit, Finding, GuardContext, Severity, hookimpl
from query_guard.api.cypher import CypherQuery, admissible_types, endpoint_labels, read_hops


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    schema = ctx.schema
    if schema is None:
        return []
    findings: list[Finding] = []
    for hop in read_hops(query):
        rel = hop.rel
        if rel.direction != "both" or hop.variable_length or rel.types is None:
            continue
        types = admissible_types(rel.types, schema)
        shared = endpoint_labels(query, hop.left) & endpoint_labels(query, hop.right)
        if not types or not shared:
            continue
        if not all(any(schema.is_reciprocal(t, label) for label in shared) for t in types):
            continue
        findings.append(
            Finding(
                "DIR.RECIPROCAL",
                Severity.WARNING,
                f"{', '.join(sorted(types))} is stored in both directions between "
                f":{'|'.join(sorted(shared))} nodes, so an undirected pattern counts every pair "
                "twice; made directed",
                rel.span,
                fix=(Edit(*rel.right_span, "->"),),
                final=True,
            )
        )
    return findings
