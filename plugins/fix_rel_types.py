"""FixRelTypes — replace a relationship type the schema never declares (`SCH.UNKNOWN_REL_TYPE`).

An undeclared type matches nothing. The rule reads the two endpoint labels around it (from the
node pattern, or the variable's labels anywhere in the same scope, `WHERE v:Label` included).
If the schema declares exactly one type between those labels (either direction) the type is
replaced; if several, the most similar name wins; if none, the finding has no fix. With both
endpoints unlabelled every declared type is a candidate, so a replacement then needs a
similar name (similarity ≥ `min_similarity`, default 0.6, `[rules.fix_rel_types]`).
Negated types (`[:!X]`) and patterns of CREATE / MERGE are left alone, and so is a type the
same query creates (`… WHERE NOT (t)-[:HAS_BRANCH]->() CREATE (t)-[:HAS_BRANCH]->(b)`: the
schema cannot know it before the first such write, and it is not a misspelling).

Example (schema `(Person, ACTED_IN, Movie)`)::

    MATCH (p:Person)-[:STARRED_IN]->(m:Movie) RETURN m   ->   … -[:ACTED_IN]-> …
"""

from __future__ import annotations

from query_guard.api import Edit, Finding, GuardContext, Option, Severity, hookimpl
from query_guard.api.cypher import (
    CypherQuery,
    ast,
    endpoint_labels,
    quote_name,
    read_hops,
    similarity,
)

OPTIONS = {
    "min_similarity": Option(
        float, 0.6, "name similarity (0-1) a replacement needs when no endpoint is labelled"
    ),
}


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    schema = ctx.schema
    if schema is None or not schema.relationships:  # no relationship types
        return []
    default = OPTIONS["min_similarity"].default
    min_similarity = float(ctx.option("fix_rel_types", "min_similarity", default))
    findings: list[Finding] = []
    seen: set[int] = set()
    created: frozenset[str] | None = None  # computed when a name is not declared (rare)
    for hop in read_hops(query):
        types = hop.rel.types
        if types is None or id(hop.rel) in seen:
            continue
        seen.add(id(hop.rel))
        negated: set[int] | None = None  # computed when a name is unknown (rare)
        # a plain type (the common case) is its own only name
        names = (types,) if type(types) is ast.LabelName else types.find_all(ast.LabelName)
        for name in names:
            if schema.has_type(name.name):
                continue
            if created is None:
                created = _created_types(query)
            if name.name in created:
                continue
            if negated is None:
                negated = _negated(hop.rel.types)
            left, right = endpoint_labels(query, hop.left), endpoint_labels(query, hop.right)
            candidates = schema.types_between(left or None, right or None)
            best = max(candidates, key=lambda t: similarity(name.name, t), default=None)
            # With an endpoint label the candidates are already narrowed by the schema;
            # with none, every declared type is a candidate and only a similar name will do.
            fixable = (
                best is not None
                and id(name) not in negated
                and (
                    bool(left or right)
                    or len(candidates) == 1
                    or similarity(name.name, best) >= min_similarity
                )
            )
            where = f" between {_labels(left)} and {_labels(right)}" if left or right else ""
            if fixable and best is not None:
                findings.append(
                    Finding(
                        "SCH.UNKNOWN_REL_TYPE",
                        Severity.WARNING,
                        f"relationship type {name.name!r} is not in the schema; "
                        f"{best!r} is the declared type{where}",
                        name.name_span,
                        fix=(Edit(*name.name_span, quote_name(best)),),
                        hint=best,
                    )
                )
            else:
                findings.append(
                    Finding(
                        "SCH.UNKNOWN_REL_TYPE",
                        Severity.WARNING,
                        f"relationship type {name.name!r} is not in the schema and no declared "
                        f"type fits{where}",
                        name.name_span,
                        hint=("declared: " + ", ".join(candidates[:8])) if candidates else None,
                    )
                )
    return findings


def _created_types(query: CypherQuery) -> frozenset[str]:
    """The relationship types the query's CREATE / MERGE patterns write."""
    return frozenset(
        name.name
        for clause in query.find(ast.Create, ast.Merge)
        for rel in clause.find_all(ast.RelPattern)
        if rel.types is not None
        for name in rel.types.find_all(ast.LabelName)
    )


def _negated(types: ast.LabelExpr) -> set[int]:
    """ids of the names under a `!` (one walk: `!!…A` must not cost its length squared)."""
    out: set[int] = set()
    stack: list[tuple[ast.Node, bool]] = [(types, False)]
    while stack:
        node, under = stack.pop()
        under = under or isinstance(node, ast.LabelNot)
        if under:
            out.add(id(node))
        stack.extend((child, under) for child in node.children())  # type: ignore[misc]
    return out


def _labels(labels: frozenset[str]) -> str:
    return "(:" + "|".join(sorted(labels)) + ")" if labels else "()"
