"""Cypher's deterministic repair candidates for a query that returned nothing (DESIGN §6), as
span edits on the parsed query, and the aggregate columns that say what "empty" is.

- **Tier 1** (CypherGuard Algorithm 2): reverse directed relationships. Arrows the schema
  *pins* (both endpoint labels known, the type declared only as written) are never flipped,
  nor *mutual* arrows — the same type the other way between the same two variables,
  `(a)-[:FOLLOWS]->(b)-[:FOLLOWS]->(a)`, whose meaning a flip destroys. Candidates, best
  first: the free arrows of the MATCH patterns reversed; every free arrow reversed (arrows
  inside expressions — `size(…)`, pattern predicates, subqueries — too); then single flips,
  MATCH arrows before expression arrows. A flip is *safe* (DESIGN §6) when every reversed
  arrow's type is declared one way only, between different labels, and the reversed arrow fits
  the endpoints' labels while the written one does not: the schema then says the arrow was
  wrong. Any other flip (a same-label type like FOLLOWS, a type declared both ways, no
  schema) is *speculative*: an empty answer may be the right one.
- **Relaxation** (LAST-CQ): exact string equality becomes case-insensitive —
  `x.p = 'v'` → `toLower(x.p) = toLower('v')`, `x.p IN ['a']` → `toLower(x.p) IN
  [toLower('a')]`, and an inline map entry `(x {p: 'v'})` moves into the MATCH's WHERE.

Example::

    >>> q = CypherQuery.parse("MATCH (m)<-[:ACTED_IN]-(p) RETURN p")
    >>> [f.text for f in flip_candidates(q, None, 1)]
    ['MATCH (m)-[:ACTED_IN]->(p) RETURN p']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from query_guard.cypher import ast
from query_guard.cypher.functions import contains_aggregate
from query_guard.cypher.patterns import (
    Hop,
    admissible_types,
    endpoint_labels,
    flip_edits,
    quote_name,
    read_hops,
    type_names,
)
from query_guard.cypher.query import CypherQuery
from query_guard.model import Edit, apply_edits
from query_guard.repair.model import Flip, flips
from query_guard.schema.catalog import SchemaCatalog

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


def flip_candidates(
    query: CypherQuery, schema: SchemaCatalog | None, max_single: int
) -> list[Flip]:
    """Tier-1 candidates, best first (see the module docstring); no duplicates."""
    hops = directed_hops(query)
    mutual = _mutual(query, hops)
    free = [
        h for h in hops
        if id(h.rel) not in mutual and (schema is None or not _pinned(query, h, schema))
    ]  # fmt: skip
    nested = _in_expressions(query)
    edits = {
        id(h.rel): (tuple(flip_edits(h.rel)), schema is not None and _safe_flip(query, h, schema))
        for h in free
    }
    main = [edits[id(h.rel)] for h in free if id(h.rel) not in nested]
    groups = [main, list(edits.values())]
    if len(free) > 1:
        ordered = main + [edits[id(h.rel)] for h in free if id(h.rel) in nested]
        groups += [[h] for h in ordered[:max_single]]
    return flips(query.text, groups)


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


def _safe_flip(query: CypherQuery, hop: Hop, schema: SchemaCatalog) -> bool:
    """The schema says this arrow is written the wrong way round (see the module docstring)."""
    types = admissible_types(hop.rel.types, schema)
    if not types:
        return False
    for t in types:
        pairs = {(d.start, d.end) for d in schema.declarations(t)}
        if any(s == e or (e, s) in pairs for s, e in pairs):
            return False
    left, right = endpoint_labels(query, hop.left), endpoint_labels(query, hop.right)
    start, end = (right, left) if hop.rel.direction == "in" else (left, right)
    if not any(schema.fits(end, t, start) for t in types):
        return False
    return not (start or end) or not any(schema.fits(start, t, end) for t in types)


def _mutual(query: CypherQuery, hops: list[Hop]) -> set[int]:
    """ids of arrows whose query also has the same type the other way between the same two
    variables (`(a)-[:F]->(b)-[:F]->(a)`, `(a)-[:F]->(b), (b)-[:F]->(a)`)."""
    seen: dict[tuple[str, str, frozenset[str]], list[int]] = {}
    for hop in hops:
        if hop.left.variable is None or hop.right.variable is None:
            continue
        a, b = hop.left.variable.name, hop.right.variable.name
        start, end = (b, a) if hop.rel.direction == "in" else (a, b)
        types = frozenset(n.name for n in type_names(hop.rel.types))
        seen.setdefault((start, end, types), []).append(id(hop.rel))
    out: set[int] = set()
    for (start, end, types), rels in seen.items():
        if start != end and (end, start, types) in seen:
            out.update(rels)
    return out


def _in_expressions(query: CypherQuery) -> set[int]:
    """ids of relationships inside expressions: pattern predicates and comprehensions,
    `size(…)`, EXISTS / COUNT / COLLECT subqueries."""
    holders = (ast.PatternPredicate, ast.PatternComprehension, ast.SubqueryExpr)
    return {
        id(n) for holder in query.find(*holders) for n in holder.walk()
        if isinstance(n, ast.RelPattern)
    }  # fmt: skip


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
