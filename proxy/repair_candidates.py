"""Deterministic repair candidates for a query that returned nothing (DESIGN §6), as span edits
on the parsed query, and the emptiness test that starts the repair loop.

- **Tier 1** (CypherGuard Algorithm 2): reverse every directed relationship. A multi-hop query
  usually has one wrong arrow, and reversing all of them then breaks the right ones, so after
  the all-reversed candidate we also offer "reverse the arrows the schema does not pin down"
  and single-arrow flips of those arrows (an arrow is *pinned* when both endpoint labels are
  known and the schema declares its type only in the written direction).
- **Relaxation** (LAST-CQ): exact string equality becomes case-insensitive —
  `x.p = 'v'` → `toLower(x.p) = toLower('v')`, `x.p IN ['a']` → `toLower(x.p) IN
  [toLower('a')]`, and an inline map entry `(x {p: 'v'})` moves into the MATCH's WHERE.

Example::

    >>> q = CypherQuery.parse("MATCH (m)<-[:ACTED_IN]-(p) RETURN p")
    >>> reverse_all_directions(q)
    'MATCH (m)-[:ACTED_IN]->(p) RETURN p'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plugins.limits import contains_aggregate
from proxy.cypher import ast
from proxy.cypher.patterns import (
    Hop,
    admissible_types,
    endpoint_labels,
    flip_edits,
    quote_name,
    read_hops,
)
from proxy.cypher.query import CypherQuery
from proxy.model import Edit, apply_edits
from proxy.schema import SchemaCatalog

# ---------------------------------------------------------------- emptiness


def aggregate_columns(query: CypherQuery) -> frozenset[int]:
    """Result columns holding an aggregate: RETURN items containing an aggregate function, in
    every UNION branch of the last statement (a `RETURN *` tells nothing)."""
    if not query.script.statements:
        return frozenset()
    statement = query.script.statements[-1]
    branches = statement.branches if isinstance(statement, ast.UnionQuery) else [statement]
    columns: set[int] | None = None
    for branch in branches:
        ret = branch.clauses[-1] if branch.clauses else None
        if not isinstance(ret, ast.Return) or ret.star:
            return frozenset()
        found = {i for i, item in enumerate(ret.items) if contains_aggregate(item.expr)}
        columns = found if columns is None else columns & found
    return frozenset(columns or ())


def is_empty(rows: Sequence[Sequence[Any]], more: bool, aggregates: frozenset[int]) -> bool:
    """DESIGN §6: no rows, or one row whose aggregates are all 0, null or an empty list
    (`count(m) = 0` is what an empty answer looks like in a counting query)."""
    if not rows:
        return True
    if len(rows) > 1 or more or not aggregates:
        return False
    row = rows[0]
    return all(is_blank(row[i]) for i in aggregates if i < len(row))


def is_blank(value: Any) -> bool:
    """0, null or an empty list / map: what an aggregate over nothing returns."""
    if value is None or (isinstance(value, list | tuple | dict) and not value):
        return True
    return isinstance(value, int | float) and not isinstance(value, bool) and value == 0


# ---------------------------------------------------------------- tier 1: directions


def directed_hops(query: CypherQuery) -> list[Hop]:
    """Hops of the matched patterns with an arrow (undirected ones have nothing to flip)."""
    seen: set[int] = set()
    out = []
    for hop in read_hops(query):
        if hop.rel.direction != "both" and id(hop.rel) not in seen:
            seen.add(id(hop.rel))
            out.append(hop)
    return out


def reverse_all_directions(query: CypherQuery) -> str | None:
    """The query with every directed relationship reversed (None: no arrow to reverse)."""
    hops = directed_hops(query)
    if not hops:
        return None
    return apply_edits(query.text, [e for hop in hops for e in flip_edits(hop.rel)])


def flip_candidates(query: CypherQuery, schema: SchemaCatalog | None, max_single: int) -> list[str]:
    """Tier-1 candidates, best first: all arrows reversed; the unpinned arrows reversed; then
    single unpinned arrows (at most `max_single`, multi-hop queries only). No duplicates."""
    hops = directed_hops(query)
    if not hops:
        return []
    free = [h for h in hops if schema is None or not _pinned(query, h, schema)]
    groups: list[list[Hop]] = [hops, free]
    if len(free) > 1:
        groups += [[h] for h in free[:max_single]]
    out: list[str] = []
    for group in groups:
        if not group:
            continue
        text = apply_edits(query.text, [e for hop in group for e in flip_edits(hop.rel)])
        if text not in out:
            out.append(text)
    return out


def _pinned(query: CypherQuery, hop: Hop, schema: SchemaCatalog) -> bool:
    """Both endpoint labels known and the schema declares the type only as written."""
    left, right = endpoint_labels(query, hop.left), endpoint_labels(query, hop.right)
    types = admissible_types(hop.rel.types, schema)
    if not left or not right or not types:
        return False
    start, end = (right, left) if hop.rel.direction == "in" else (left, right)
    forward = any(schema.fits(start, t, end) for t in types)
    backward = any(schema.fits(end, t, start) for t in types)
    return forward and not backward


# ---------------------------------------------------------------- relaxation


def relax_case(query: CypherQuery, parameters: Mapping[str, Any] | None = None) -> str | None:
    """Exact string equality made case-insensitive (None: nothing to relax)."""
    params = parameters or {}
    edits: list[Edit] = []
    in_where = _where_nodes(query)
    for op in query.find(ast.BinaryOp):
        if id(op) in in_where:
            edits += _relax_comparison(query, op, params)
    uses_star = any(p.star for p in query.find(ast.Projection))
    counter = 0
    for match in query.find(ast.Match):
        conditions: list[str] = []
        for path in match.patterns:
            for node in path.elements:
                if not isinstance(node, ast.NodePattern):
                    continue
                found, counter = _relax_map(query, node, params, conditions, counter, uses_star)
                edits += found
        if conditions:
            edits += _add_conditions(match, conditions)
    if not edits:
        return None
    return apply_edits(query.text, edits)


def _where_nodes(query: CypherQuery) -> set[int]:
    """ids of every expression node inside a WHERE (clause, pattern or subquery)."""
    out: set[int] = set()
    for node in query.nodes:
        where = getattr(node, "where", None)
        if isinstance(where, ast.Node):
            out.update(id(n) for n in where.walk())
    return out


def _string_value(expr: ast.Expr, params: Mapping[str, Any]) -> bool:
    if isinstance(expr, ast.Literal):
        return expr.kind == "string"
    return isinstance(expr, ast.Parameter) and isinstance(params.get(expr.name), str)


def _lower(query: CypherQuery, node: ast.Node) -> Edit:
    return Edit(node.span[0], node.span[1], f"toLower({query.source(node)})")


def _relax_comparison(
    query: CypherQuery, op: ast.BinaryOp, params: Mapping[str, Any]
) -> list[Edit]:
    if op.op == "=":
        for prop, value in ((op.left, op.right), (op.right, op.left)):
            if isinstance(prop, ast.PropertyLookup) and _string_value(value, params):
                return [_lower(query, prop), _lower(query, value)]
        return []
    if (
        op.op == "IN"
        and isinstance(op.left, ast.PropertyLookup)
        and isinstance(op.right, ast.ListLiteral)
    ):
        items = [i for i in op.right.items if _string_value(i, params)]
        if items:
            return [_lower(query, op.left), *(_lower(query, i) for i in items)]
    return []


def _relax_map(
    query: CypherQuery,
    node: ast.NodePattern,
    params: Mapping[str, Any],
    conditions: list[str],
    counter: int,
    uses_star: bool,
) -> tuple[list[Edit], int]:
    props = node.properties
    if not isinstance(props, ast.MapLiteral):
        return [], counter
    loose = [(k, v) for k, _, v in props.entries if _string_value(v, params)]
    if not loose:
        return [], counter
    edits: list[Edit] = []
    if node.variable is not None:
        name = quote_name(node.variable.name)
    elif uses_star:
        return [], counter  # a new variable would add a column to `RETURN *`
    else:
        name = f"_qg{counter}"
        counter += 1
        edits.append(Edit(node.span[0] + 1, node.span[0] + 1, name))
    kept = [
        query.text[key_span[0] : value.span[1]]
        for key, key_span, value in props.entries
        if not _string_value(value, params)
    ]
    start = props.span[0]
    while not kept and start > node.span[0] + 1 and query.text[start - 1] == " ":
        start -= 1  # `(m:Movie {…})` -> `(m:Movie)`, not `(m:Movie )`
    edits.append(Edit(start, props.span[1], "{" + ", ".join(kept) + "}" if kept else ""))
    for key, value in loose:
        conditions.append(f"toLower({name}.{quote_name(key)}) = toLower({query.source(value)})")
    return edits, counter


def _add_conditions(match: ast.Match, conditions: list[str]) -> list[Edit]:
    joined = " AND ".join(conditions)
    if match.where is None:
        end = match.patterns[-1].span[1]
        return [Edit(end, end, f" WHERE {joined}")]
    start, end = match.where.span
    return [Edit(start, start, f"{joined} AND ("), Edit(end, end, ")")]
