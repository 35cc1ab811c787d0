"""AlignDirections — flip an arrow the schema declares only the other way (`DIR.REVERSED`).

A directed relationship between endpoints with *different* labels that the schema declares only
in the opposite direction matches nothing; flipping the arrow is the fix (CypherGuard, rule 2).
Any label of a multi-label or label-expression node may satisfy the schema; `[:A|B]` and
`[:!A]` fit when at least one admissible type fits; an untyped relationship fits when any
declared type fits between the labels; an unlabelled endpoint is a wildcard. Variable-length
and quantified patterns, undirected patterns, and same-label endpoints (reciprocity's job) are
never flipped. A pattern that fits in neither direction gets `SCH.NO_PATH` (no fix).
Relationship types the schema does not declare are left to `fix_rel_types`.

Example (schema `(Person, WORKS_AT, Organization)`)::

    MATCH (p:Person)<-[:WORKS_AT]-(o:Organization) RETURN o
    ->  MATCH (p:Person)-[:WORKS_AT]->(o:Organization) RETURN o
"""

from __future__ import annotations

from query_guard.api import Finding, GuardContext, SchemaCatalog, Severity, hookimpl
from query_guard.api.cypher import (
    CypherQuery,
    admissible_types,
    endpoint_labels,
    flip_edits,
    read_hops,
)


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    schema = ctx.schema
    if schema is None:
        return []
    findings: list[Finding] = []
    for hop in read_hops(query):
        if hop.variable_length:
            continue
        types = admissible_types(hop.rel.types, schema)
        if not types:  # undeclared names (fix_rel_types) or an unjudgeable expression
            continue
        left, right = endpoint_labels(query, hop.left), endpoint_labels(query, hop.right)
        if not left and not right:
            continue  # nothing to judge the direction by
        start, end = (right, left) if hop.rel.direction == "in" else (left, right)
        if len(types) == 1:  # the common case: one type, without a generator
            (only,) = types
            forward = schema.fits(start, only, end)
            backward = forward or schema.fits(end, only, start)
        else:
            forward = any(schema.fits(start, t, end) for t in types)
            backward = forward or any(schema.fits(end, t, start) for t in types)
        if forward or (backward and hop.rel.direction == "both"):
            continue
        described = f"{_describe(left)}{query.source(hop.rel)}{_describe(right)}"
        if not backward:
            findings.append(
                Finding(
                    "SCH.NO_PATH",
                    Severity.WARNING,
                    f"{described} fits the schema in neither direction: it can match nothing",
                    hop.rel.span,
                    hint="declared: " + "; ".join(_declared(schema, types)),
                )
            )
        elif not left & right:  # same-label endpoints are reciprocity's business
            findings.append(
                Finding(
                    "DIR.REVERSED",
                    Severity.WARNING,
                    f"{described} points against the stored direction; arrow reversed",
                    hop.rel.span,
                    fix=flip_edits(hop.rel),
                    final=True,
                )
            )
    return findings


def _describe(labels: frozenset[str]) -> str:
    return "(:" + "|".join(sorted(labels)) + ")" if labels else "()"


def _declared(schema: SchemaCatalog, types: set[str]) -> list[str]:
    found = [
        f"(:{d.start})-[:{d.type}]->(:{d.end})"
        for t in sorted(types)
        for d in schema.declarations(t)
    ]
    return found[:6]
