"""SQL's side of literal grounding (`query_guard.repair.grounding`) and its rewrites.

A *binding* is `column = 'literal'` (either side; a named parameter `:name` whose value is a
string counts, and a fix writes the stored value in its place) on a column of a real table of
the query (qualified, or unqualified with exactly one table of its SELECT having it). Its two
probes are built as sqlglot trees and written in the backend's dialect: does the exact value
exist (`SELECT 1 … WHERE col = 'v' LIMIT 1`)? if not, which distinct stored values contain the
literal's longest word, case-insensitively (`lower(CAST(col AS TEXT)) LIKE '%word%'`)?
*Relaxation* rewrites every such `col = 'x'` to `lower(col) = lower('x')`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import traverse_scope

from query_guard.repair.grounding import MAX_BINDINGS, SIMILAR_SAMPLE, LiteralFix
from query_guard.schema.sql_catalog import SqlCatalog


@dataclass(frozen=True, eq=False)
class SqlBinding:
    """`column = 'value'` (or one value of `column IN (…)`) on a real table: the comparison's
    index in `tree.find_all(exp.EQ, exp.In)` order (the same in a copy of the tree), the
    value's position in an IN list (-1 for `=`), the table and column as the query names
    them."""

    node_index: int
    item: int
    table: exp.Table
    column: exp.Identifier
    value: str
    span: tuple[int, int]  # the literal in the parsed text

    case_insensitive = False

    @property
    def where(self) -> str:
        return f"{self.table.name}.{self.column.name}"

    def show(self, label: str, quoted: str) -> str:
        return quoted


def sql_literal(value: Any, dialect: str) -> str:
    if isinstance(value, str):
        return exp.Literal.string(value).sql(dialect=dialect)
    return "NULL" if value is None else str(value)


# ---------------------------------------------------------------- extraction (pure)


def extract_bindings(
    tree: exp.Expression,
    catalog: SqlCatalog | None,
    params: Mapping[str, Any] | None = None,
    limit: int = MAX_BINDINGS,
) -> list[SqlBinding]:
    """The first `limit` distinct string equalities on table columns, in source order."""
    tables = _column_tables(tree, catalog)
    out: list[SqlBinding] = []
    seen: set[tuple[str, str, str]] = set()
    for index, node in enumerate(tree.find_all(exp.EQ, exp.In)):
        targets = _targets(node)
        if targets is None:
            continue
        column, values = targets
        table = tables.get(id(column))
        if table is None:
            continue
        for item, value_node in values:
            value = _string(value_node, params)
            key = (table.name.lower(), column.name.lower(), value or "")
            if value is None or key in seen:
                continue
            seen.add(key)
            out.append(SqlBinding(index, item, table, column.this, value, _span(value_node)))
    out.sort(key=lambda b: b.span)
    return out[:limit]


def _string(node: exp.Expression, params: Mapping[str, Any] | None) -> str | None:
    """A string literal's text, or a named parameter's string value."""
    if isinstance(node, exp.Literal):
        return str(node.this)
    found = params.get(node.name) if isinstance(params, Mapping) and node.name else None
    return found if isinstance(found, str) else None


def _targets(
    node: exp.Expression,
) -> tuple[exp.Column, list[tuple[int, exp.Expression]]] | None:
    """`col = v` / `v = col` / `col IN (v, …)` (not negated): the column and its string
    literals or placeholders, each with its position (-1: the EQ's one side)."""
    if isinstance(node.parent, exp.Not):
        return None
    if isinstance(node, exp.In):
        column = node.this
        if node.args.get("query") or not _is_column(column):
            return None
        values = [(i, e) for i, e in enumerate(node.expressions) if _is_value(e)]
        return (column, values) if values else None
    left, right = node.this, node.expression
    if isinstance(right, exp.Column) and not isinstance(left, exp.Column):
        left, right = right, left
    if not (_is_column(left) and _is_value(right)):
        return None
    return left, [(-1, right)]


def _is_column(node: exp.Expression) -> bool:
    return isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier)


def _is_value(node: exp.Expression) -> bool:
    return (isinstance(node, exp.Literal) and node.is_string) or isinstance(node, exp.Placeholder)


def _value_node(node: exp.Expression, item: int) -> exp.Expression | None:
    targets = _targets(node)
    if targets is None:
        return None
    return next((v for i, v in targets[1] if i == item), None)


def _column_tables(tree: exp.Expression, catalog: SqlCatalog | None) -> dict[int, exp.Table]:
    """id(column node) -> the table it reads (real tables only; CTEs and derived tables are
    scopes, not tables)."""
    try:
        scopes = traverse_scope(tree)
    except SqlglotError:
        return {}
    out: dict[int, exp.Table] = {}
    for scope in scopes:
        tables = {n: s for n, s in scope.sources.items() if isinstance(s, exp.Table)}
        for column in scope.columns:
            if column.table:
                table = tables.get(column.table)
            else:
                owners = [t for t in tables.values() if _has_column(t, column.name, catalog)]
                table = owners[0] if len(owners) == 1 else None
                if table is None and len(scope.sources) == 1 and len(tables) == 1:
                    table = next(iter(tables.values()))
            if table is not None:
                out[id(column)] = table
    return out


def _has_column(table: exp.Table, name: str, catalog: SqlCatalog | None) -> bool:
    if catalog is None:
        return False
    return name.lower() in {c.lower() for c in catalog.columns(table.name)}


def _span(node: exp.Expression) -> tuple[int, int]:
    meta = node.meta
    if "start" in meta and "end" in meta:
        return int(meta["start"]), int(meta["end"]) + 1
    return 0, 0


# ---------------------------------------------------------------- rewrites (pure)


def with_fixes(tree: exp.Expression, fixes: Sequence[LiteralFix], dialect: str) -> str:
    """The query with each fix's literal replaced by the stored value."""
    out = tree.copy()
    nodes = list(out.find_all(exp.EQ, exp.In))
    for fix in fixes:
        value = _value_node(nodes[fix.binding.node_index], fix.binding.item)
        if value is not None:
            value.replace(exp.Literal.string(fix.value))
    return out.sql(dialect=dialect)


def relax_case(tree: exp.Expression, bindings: Sequence[SqlBinding], dialect: str) -> str | None:
    """`col = 'x'` -> `lower(col) = lower('x')` (and `lower(col) IN (lower('x'), …)`) for
    every binding's comparison; None without one."""
    if not bindings:
        return None
    out = tree.copy()
    nodes = list(out.find_all(exp.EQ, exp.In))
    for index in sorted({b.node_index for b in bindings}):
        node = nodes[index]
        targets = _targets(node)
        if targets is None:
            continue
        column = exp.Lower(this=targets[0].copy())
        if isinstance(node, exp.In):
            items = [exp.Lower(this=e.copy()) if _is_value(e) else e.copy()
                     for e in node.expressions]  # fmt: skip
            node.replace(exp.In(this=column, expressions=items))
        else:
            node.replace(exp.EQ(this=column, expression=exp.Lower(this=targets[1][0][1].copy())))
    return out.sql(dialect=dialect)


def probe_queries(b: SqlBinding, token: str, dialect: str) -> tuple[str, str]:
    """(exact probe, similar-values probe) in the backend's `dialect`."""
    table = exp.Table(this=b.table.this.copy(), db=b.table.args.get("db"))
    exact = (
        exp.select("1").from_(table.copy())
        .where(exp.EQ(this=exp.column(b.column.copy()), expression=exp.Literal.string(b.value)))
        .limit(1)
    )  # fmt: skip
    text = exp.Lower(this=exp.cast(exp.column(b.column.copy()), "text"))
    like = exp.Like(this=text, expression=exp.Literal.string(f"%{token.lower()}%"))
    similar = (
        exp.select(exp.column(b.column.copy())).distinct().from_(table.copy()).where(like)
        .limit(SIMILAR_SAMPLE)
    )  # fmt: skip
    return exact.sql(dialect=dialect), similar.sql(dialect=dialect)
