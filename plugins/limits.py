"""Limits — bound what a query can return (`LIM.INJECTED`, `LIM.CAPPED`).

A query whose final RETURN has no LIMIT gets `LIMIT <guard.default_limit>` appended (in each
UNION branch, since a LIMIT binds to its branch), unless it yields one row anyway: a pure
aggregation (every item aggregates) or a RETURN preceded only by WITH projections. A
literal LIMIT above `guard.max_limit` is lowered to it; a LIMIT known only when the query
runs (`LIMIT $n`, `LIMIT 10 * $pages`) is bounded as `CASE WHEN x <= max THEN x ELSE max END`
(Neo4j evaluates it). FalkorDB accepts only a literal or a parameter there, so for it a
parameter stays as written (the proxy cuts any result at `[limits] max_result_rows`, by
default max_limit, and FalkorDB refuses a computed LIMIT itself). 0 switches either bound
off. Subquery RETURNs are not touched: the outer LIMIT bounds them. In a Cypher 25 sequential
query (`… NEXT …`) the last part's RETURN is the one bounded, and it is fed by the parts
before it (never "only projections"). An `EXPLAIN` returns no rows (the proxy answers it with
the plan), so it is left as written.

Example (default_limit 1000)::

    MATCH (m:Movie) RETURN m.title   ->   MATCH (m:Movie) RETURN m.title LIMIT 1000
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from query_guard.api import Edit, Finding, GuardContext, Severity, hookimpl
from query_guard.api.cypher import (
    Conditional,
    CypherQuery,
    NextChain,
    ast,
    contains_aggregate,
    is_explain,
)


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    default, cap = ctx.settings.default_limit, ctx.settings.max_limit
    findings: list[Finding] = []
    if is_explain(query):
        return findings
    # without an aggregate function anywhere no RETURN is a pure aggregation (no walk needed)
    aggregates = any(contains_aggregate(call) for call in query.find(ast.FunctionCall))
    for statement in query.script.statements:
        clauses = getattr(statement, "clauses", None)  # one plain query (most): no generator
        if clauses and isinstance(clauses[-1], ast.Return) and type(statement) is ast.SingleQuery:
            branches: Iterable[tuple[ast.SingleQuery, bool]] = ((statement, False),)
        else:
            branches = _final_branches(statement)
        for branch, fed in branches:
            ret = branch.clauses[-1] if branch.clauses else None
            if not isinstance(ret, ast.Return):
                continue
            if not fed and _single_row_source(branch.clauses):
                continue
            finding = _check_return(ret, default, cap, query.text, ctx.dialect, aggregates)
            if finding is not None:
                findings.append(finding)
    return findings


def _final_branches(
    statement: ast.Query, fed: bool = False
) -> Iterator[tuple[ast.SingleQuery, bool]]:
    """The queries whose RETURN hands rows to the client: UNION branches, the branches of a
    Cypher 25 conditional query (`WHEN … THEN RETURN …`) and the last part of a sequential
    one (`… NEXT … RETURN …`), each with whether earlier NEXT parts feed it rows."""
    branches = statement.branches if isinstance(statement, ast.UnionQuery) else [statement]
    for branch in branches:
        last = branch.clauses[-1] if branch.clauses else None
        if isinstance(last, Conditional):
            for inner in last.branches:
                yield from _final_branches(inner, fed)
        elif isinstance(last, NextChain):
            yield from _final_branches(last.parts[-1], fed or len(last.parts) > 1)
        else:
            yield branch, fed


def _single_row_source(clauses: list[ast.Clause]) -> bool:
    """Only projections before the final RETURN (`RETURN 1`, `WITH 2 AS x RETURN x`): one row.
    (Most queries start with a MATCH: the first clause answers, no slice or generator.)"""
    if len(clauses) > 1 and not isinstance(clauses[0], ast.With):
        return False
    return all(isinstance(c, ast.With) for c in clauses[:-1])


def _check_return(
    ret: ast.Return, default: int, cap: int, text: str, dialect: str, aggregates: bool = True
) -> Finding | None:
    limit = ret.limit
    if limit is None:
        if not default or (aggregates and is_pure_aggregation(ret)):
            return None
        return Finding(
            "LIM.INJECTED",
            Severity.INFO,
            f"no LIMIT: LIMIT {default} appended (guard.default_limit)",
            (ret.span[1], ret.span[1]),
            fix=(Edit(ret.span[1], ret.span[1], f" LIMIT {default}"),),
            final=True,
        )
    value = limit.value if isinstance(limit, ast.Literal) else None
    if cap and isinstance(value, int) and value > cap:
        return Finding(
            "LIM.CAPPED",
            Severity.INFO,
            f"LIMIT {value} exceeds guard.max_limit; lowered to {cap}",
            limit.span,
            fix=(Edit(*limit.span, str(cap)),),
            final=True,
        )
    if cap and not isinstance(limit, ast.Literal) and not _capped(limit, cap):
        if dialect == "falkordb":
            return None  # FalkorDB takes only a literal or a parameter; the result cut bounds it
        written = text[limit.span[0] : limit.span[1]]
        if not isinstance(limit, ast.Parameter):
            written = f"({written})"  # an expression keeps its meaning beside `<=`
        bounded = f"CASE WHEN {written} <= {cap} THEN {written} ELSE {cap} END"
        return Finding(
            "LIM.CAPPED",
            Severity.INFO,
            f"LIMIT {written} is known only when the query runs: bounded by guard.max_limit "
            f"({cap})",
            limit.span,
            fix=(Edit(*limit.span, bounded),),
            final=True,
        )
    return None


def _capped(limit: ast.Expr, cap: int) -> bool:
    """`CASE WHEN x <= n THEN x ELSE n END` with n ≤ cap: the bound this rule writes."""
    if not isinstance(limit, ast.CaseExpr) or limit.subject is not None:
        return False
    if len(limit.alternatives) != 1 or not isinstance(limit.default, ast.Literal):
        return False
    when, _ = limit.alternatives[0]
    bound = when.right if isinstance(when, ast.BinaryOp) and when.op == "<=" else None
    return all(
        isinstance(n, ast.Literal) and isinstance(n.value, int) and n.value <= cap
        for n in (bound, limit.default)
    )


def is_pure_aggregation(ret: ast.Projection) -> bool:
    """Every returned item contains an aggregate (so the RETURN yields exactly one row)."""
    if ret.star or not ret.items:
        return False
    return all(contains_aggregate(item.expr) for item in ret.items)
