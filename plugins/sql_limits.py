"""SQL limits — bound what a SQL query can return (`LIM.INJECTED`, `LIM.CAPPED`), through the
AST of the outermost query only.

A query without a row limit on its outermost level gets one (`guard.default_limit`): appended as
` LIMIT n` where the dialect writes LIMIT (after ORDER BY, and binding the whole UNION, which is
what LIMIT at the end means there), or written by sqlglot in the dialect's own form (`TOP`,
`FETCH FIRST`) where it does not. A literal limit above `guard.max_limit` is lowered. Not
touched: a query that yields one row anyway (every selected item aggregates and there is no
GROUP BY), limits inside subqueries and CTEs (the outer bound covers them, and an aggregate's
input is never cut), a limit given as a parameter.

Example (default_limit 1000)::

    SELECT name FROM customers ORDER BY name   ->   … ORDER BY name LIMIT 1000
"""

from __future__ import annotations

from sqlglot import exp

from query_guard.context import GuardContext
from query_guard.hookspecs import hookimpl
from query_guard.model import Edit, Finding, Severity
from query_guard.sql.query import SqlQuery, SqlStatement

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
    if cap and isinstance(count, exp.Literal) and not count.is_string:
        value = int(count.this) if str(count.this).isdigit() else None
        if value is not None and value > cap:
            start, end = query.span_of(count, statement)
            return Finding(
                "LIM.CAPPED", Severity.INFO,
                f"LIMIT {value} exceeds guard.max_limit; lowered to {cap}", (start, end),
                fix=(Edit(start, end, str(cap)),), final=True,
            )  # fmt: skip
    return None


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
