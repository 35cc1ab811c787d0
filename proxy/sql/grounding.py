"""Literal grounding and case relaxation for SQL (DESIGN §6, the Cypher rules carried over):
when a SQL read returns nothing, the string literals it compares columns with are checked
against what the table stores.

A *binding* is `column = 'literal'` (either side; a named parameter `:name` whose value is a
string counts, and a fix writes the stored value in its place) on a column of a real table of
the query (qualified, or unqualified with exactly one table of its SELECT having it). Two probes per
binding, built as sqlglot trees and written in the backend's dialect: does the exact value
exist (`SELECT 1 … WHERE col = 'v' LIMIT 1`)? if not, which distinct stored values contain the
literal's longest word, case-insensitively (`lower(CAST(col AS TEXT)) LIKE '%word%'`)?

Exactly one stored value equal to the literal but for case is a **safe** fix ('germany' ->
'Germany'); otherwise exactly one stored value containing the literal is a **speculative** one
('Anders' -> 'Maria Anders'). *Relaxation* rewrites every such `col = 'x'` to
`lower(col) = lower('x')` (speculative: several case variants may be stored).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import traverse_scope

from query_guard.backend import BackendError
from query_guard.model import Finding, Severity
from query_guard.repair.grounding import rank_stored
from query_guard.schema.sql_catalog import SqlCatalog

MAX_BINDINGS = 3
SIMILAR_SAMPLE = 50  # distinct stored values read per probe; more: no fix, only the note
_TOKEN = re.compile(r"\w+", re.UNICODE)

# runs a probe (backend dialect) and returns its rows
Probe = Callable[[str], Awaitable[list[list[Any]]]]


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

    @property
    def where(self) -> str:
        return f"{self.table.name}.{self.column.name}"


@dataclass(frozen=True, eq=False)
class SqlLiteralFix:
    binding: SqlBinding
    value: str
    safe: bool  # equal but for case (safe) or the only stored value containing it

    def describe(self, dialect: str) -> str:
        how = "equal but for case" if self.safe else "the only stored value containing it"
        return (
            f"{sql_literal(self.binding.value, dialect)} is not stored in {self.binding.where}; "
            f"used {sql_literal(self.value, dialect)} ({how})"
        )


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


def with_fixes(tree: exp.Expression, fixes: Sequence[SqlLiteralFix], dialect: str) -> str:
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


# ---------------------------------------------------------------- probes


async def ground(
    bindings: Sequence[SqlBinding], probe: Probe, dialect: str, backend_dialect: str
) -> tuple[list[tuple[SqlBinding, Finding]], list[SqlLiteralFix]]:
    """One `ENT.LITERAL` note per binding whose value is not stored, and the fixes found."""
    notes: list[tuple[SqlBinding, Finding]] = []
    fixes: list[SqlLiteralFix] = []
    for b in bindings:
        tokens = _TOKEN.findall(b.value)
        token = max(tokens, key=len) if tokens else ""
        exact, similar = probe_queries(b, token, backend_dialect)
        try:
            if await probe(exact):
                continue
            rows = await probe(similar) if token else []
        except BackendError:  # a probe the database refuses says nothing
            continue
        stored = [r[0] for r in rows if r and isinstance(r[0], str)]
        fix = literal_fix(b, stored) if len(rows) < SIMILAR_SAMPLE else None
        if fix is not None:
            fixes.append(fix)
        best = [v for _, v in rank_stored(b.value, [("", v) for v in stored])]
        head = f"{sql_literal(b.value, dialect)} is not stored in {b.where}"
        if best:
            shown = ", ".join(sql_literal(v, dialect) for v in best)
            hint: str | None = sql_literal(best[0], dialect)
            message = f"{head}; stored: {shown} — copy it exactly"
        else:
            message, hint = f"{head}; no similar value — reconsider the column or table", None
        notes.append((b, Finding("ENT.LITERAL", Severity.WARNING, message, b.span, hint=hint,
                                 rule="repair.grounding")))  # fmt: skip
    return notes, fixes


def literal_fix(b: SqlBinding, stored: Sequence[str]) -> SqlLiteralFix | None:
    """The fix for a binding, given every stored value holding its longest word."""
    target = b.value.lower()
    values = set(stored)
    equal = [v for v in values if v.lower() == target]
    if len(equal) == 1:
        return SqlLiteralFix(b, equal[0], safe=True)
    containing = [v for v in values if target in v.lower()]
    if not equal and len(containing) == 1:
        return SqlLiteralFix(b, containing[0], safe=False)
    return None
