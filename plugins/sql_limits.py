"""SQL limits — bound what a SQL query can return (`LIM.INJECTED`, `LIM.CAPPED`), through the
AST of the outermost query only.

A query without a row limit on its outermost level gets one (`guard.default_limit`): appended as
` LIMIT n` where the dialect writes LIMIT (after ORDER BY, and binding the whole UNION, which is
what LIMIT at the end means there), or written by sqlglot in the dialect's own form (`TOP`,
`FETCH FIRST`) where it does not. A literal limit above `guard.max_limit` is lowered, and so
is one that sets no limit (`LIMIT ALL`, `LIMIT NULL`, SQLite's negative `LIMIT -1`); a limit
known only when the query runs (a parameter `$1` / `?`, an expression) is bounded as
`LEAST(x, max_limit)` (SQLite: `MIN(x, max_limit)`). Not touched: a query that yields one row
anyway (every selected item aggregates and there is no GROUP BY), limits inside subqueries and
CTEs (the outer bound covers them, and an aggregate's input is never cut).

Example (default_limit 1000)::

    SELECT name FROM customers ORDER BY name   ->   … ORDER BY name LIMIT 1000
"""

from __future__ import annotations

from sqlglot import exp

from query_guard.api import Edit, Finding, GuardContext, Severity, hookimpl
from query_guard.api.sql import SqlQuery, SqlStatement

LIMIT_DIALECTS = frozenset(
    {"postgres", "sqlite", "mysql", "duckdb", "bigquery", "snowflake", "spark", "databricks",
     "trino", "presto", "clickhouse", "redshift", "hive", "doris", "starrocks", "athena"}
)  # fmt: skip


@hookimpl
def guard_sql(query: SqlQuery, ctx: GuardContext) -> list[Finding]:
    default, cap = ctx.settings.default_limit, ctx.settings.max_limit
    findings = []
    for statement in query.statements:
        tree = statement.tree
        if not isinstance(tree, exp.Query):
            continue
        finding = _check(query, statement, tree, default, cap)
        if finding is not None:
            findings.append(finding)
    return findings


def _check(
    query: SqlQuery, statement: SqlStatement, tree: exp.Query, default: int, cap: int
) -> Finding | None:
    limit = tree.args.get("limit")
    if limit is None:
        if not default or _single_row(tree):
            return None
        return _inject(query, statement, tree, default)
    count = limit.args.get("count") if isinstance(limit, exp.Fetch) else limit.expression
    if not cap or count is None or _bounded(count, cap):
        return None
    if isinstance(count, exp.Literal) and not count.is_string and str(count.this).isdigit():
        start, end = query.span_of(count, statement)
        return Finding(
            "LIM.CAPPED", Severity.INFO,
            f"LIMIT {count.this} exceeds guard.max_limit; lowered to {cap}", (start, end),
            fix=(Edit(start, end, str(cap)),), final=True,
        )  # fmt: skip
    # sqlglot keeps no position for ALL, NULL, $1 or an expression: the statement is rewritten
    written = count.sql(dialect=query.dialect)
    bounded = tree.copy()
    new_limit = bounded.args["limit"]
    if _unlimited(count):  # LIMIT ALL / NULL / a negative count (SQLite): no limit at all
        message = f"LIMIT {written} sets no limit; lowered to guard.max_limit ({cap})"
        value: exp.Expression = exp.Literal.number(cap)
    else:  # a parameter or an expression: its value is known only when it runs
        message = f"LIMIT {written} is known only when it runs: bounded by guard.max_limit ({cap})"
        value = exp.Least(this=count.copy(), expressions=[exp.Literal.number(cap)])
    new_limit.set("count" if isinstance(new_limit, exp.Fetch) else "expression", value)
    start, end = statement.span
    fix = (Edit(start, end, bounded.sql(dialect=query.dialect)),)
    return Finding("LIM.CAPPED", Severity.INFO, message, (start, end), fix=fix, final=True)


def _bounded(count: exp.Expression, cap: int) -> bool:
    """A literal count within the cap, or LEAST/MIN(…, n) with such a literal n."""
    if isinstance(count, exp.Literal) and not count.is_string and str(count.this).isdigit():
        return int(count.this) <= cap
    if isinstance(count, exp.Least):
        return any(_bounded(arg, cap) for arg in [count.this, *count.expressions]
                   if isinstance(arg, exp.Literal))  # fmt: skip
    return False


def _unlimited(count: exp.Expression) -> bool:
    if isinstance(count, exp.Null | exp.Neg):
        return True
    return isinstance(count, exp.Var | exp.Column) and count.name.upper() == "ALL"


def _inject(query: SqlQuery, statement: SqlStatement, tree: exp.Query, n: int) -> Finding:
    start, end = statement.span
    message = f"no LIMIT: LIMIT {n} appended (guard.default_limit)"
    if query.dialect in LIMIT_DIALECTS:
        fix = (Edit(end, end, f" LIMIT {n}"),)
        span = (end, end)
    else:  # TOP / FETCH FIRST: the dialect's own form, written by sqlglot
        limited = tree.copy().limit(n)
        fix = (Edit(start, end, limited.sql(dialect=query.dialect)),)
        span = (start, end)
    return Finding("LIM.INJECTED", Severity.INFO, message, span, fix=fix, final=True)


def _single_row(tree: exp.Query) -> bool:
    if not isinstance(tree, exp.Select) or tree.args.get("group"):
        return False
    items = tree.expressions
    return bool(items) and all(any(True for _ in e.find_all(exp.AggFunc)) for e in items)
