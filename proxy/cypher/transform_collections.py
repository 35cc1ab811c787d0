"""lark callbacks -> typed Cypher AST: list literals and comprehensions, maps and map
projections, CASE, and EXISTS / COUNT / COLLECT subqueries.

One family of the AST builder's rules (assembled in builders.py); children are read by the
names of each rule's declared shape (build_children.py).
"""

from __future__ import annotations

from typing import Any

from query_guard.cypher.ast import (
    BinaryOp,
    CaseExpr,
    ListComprehension,
    ListLiteral,
    MapLiteral,
    MapProjection,
    PatternComprehension,
    SubqueryExpr,
    Variable,
)
from query_guard.cypher.build_children import Rules
from query_guard.cypher.build_parts import (
    BracedMapProjection,
    BuildError,
    Paren,
    Part,
    ex,
    exprs,
    in_binding,
    pattern_of,
    span_of,
)
from query_guard.cypher.transform_predicates import check_case

RULES = Rules()
rule = RULES.rule

# ---------------------------------------------------------------- lists and maps


LIST_EMPTY = rule("list_empty", "LSQB RSQB")


@LIST_EMPTY
def list_empty(c: list[Any]) -> ListLiteral:
    return ListLiteral(span_of(c), [])


LIST_ITEMS = rule("list_items", "LSQB *items RSQB")


@LIST_ITEMS
def list_items(c: list[Any]) -> ListLiteral | ListComprehension:
    items = exprs(c[LIST_ITEMS.items])
    if len(items) == 1:
        (head,) = items
        if isinstance(head, BinaryOp) and head.op == "IN" and isinstance(head.left, Variable):
            return ListComprehension(span_of(c), head.left, head.right, None, None)
    return ListLiteral(span_of(c), items)


def _comprehension(
    c: list[Any], head: Any, where: Any, projection: Any
) -> ListComprehension | PatternComprehension:
    where = ex(where) if where is not None else None
    projection = ex(projection) if projection is not None else None
    pattern = pattern_of(head)
    if pattern is not None:
        if projection is None:
            raise BuildError("a pattern comprehension needs `| expression`", span_of(c))
        return PatternComprehension(span_of(c), pattern[0], pattern[1], where, projection)
    var, source = in_binding(head, "a list comprehension")
    return ListComprehension(span_of(c), var, source, where, projection)


LIST_FILTER = rule("list_filter", "LSQB head=expr WHERE predicate=expr BAR? projection=expr? RSQB")


@LIST_FILTER
def list_filter(c: list[Any]) -> ListComprehension | PatternComprehension:
    return _comprehension(
        c, c[LIST_FILTER.head], c[LIST_FILTER.predicate], c[LIST_FILTER.projection]
    )


LIST_EXTRACT = rule("list_extract", "LSQB head=expr BAR projection=expr RSQB")


@LIST_EXTRACT
def list_extract(c: list[Any]) -> ListComprehension | PatternComprehension:
    return _comprehension(c, c[LIST_EXTRACT.head], None, c[LIST_EXTRACT.projection])


MAP_ENTRY = rule("map_entry", "key=symbolic_name COLON value=expr")


@MAP_ENTRY
def map_entry(c: list[Any]) -> Part:
    key: Part = c[MAP_ENTRY.key]
    value = c[MAP_ENTRY.value]  # a node or a Paren
    span = (key.span[0], value.span[1])
    return Part("entry", (key.value, key.span, value.expr if type(value) is Paren else value), span)


MAP_LITERAL = rule("map_literal", "LBRACE *entries RBRACE")


@MAP_LITERAL
def map_literal(c: list[Any]) -> MapLiteral:
    span = (c[MAP_LITERAL.lbrace].start_pos, c[MAP_LITERAL.rbrace].end_pos)
    return MapLiteral(span, [p.value for p in c[MAP_LITERAL.entries] if type(p) is Part])


PROJ_PROPERTY = rule("proj_property", "DOT key=symbolic_name")


@PROJ_PROPERTY
def proj_property(c: list[Any]) -> Part:
    return Part("item", ("property", c[PROJ_PROPERTY.key].value), span_of(c))


PROJ_ALL = rule("proj_all", "DOT STAR")


@PROJ_ALL
def proj_all(c: list[Any]) -> Part:
    return Part("item", ("all", "*"), span_of(c))


PROJ_VARIABLE = rule("proj_variable", "variable")


@PROJ_VARIABLE
def proj_variable(c: list[Any]) -> Part:
    return Part("item", ("variable", c[PROJ_VARIABLE.variable].name), span_of(c))


PROJ_LITERAL = rule("proj_literal", "key=symbolic_name COLON value=expr")


@PROJ_LITERAL
def proj_literal(c: list[Any]) -> Part:
    return Part(
        "item",
        ("literal", c[PROJ_LITERAL.key].value, ex(c[PROJ_LITERAL.value])),
        c[PROJ_LITERAL.key].span,
    )


MAP_PROJECTION = rule("map_projection", "variable LBRACE *items RBRACE")


@MAP_PROJECTION
def map_projection(c: list[Any]) -> MapProjection:
    parts = [p for p in c[MAP_PROJECTION.items] if type(p) is Part]
    key_spans = [p.span for p in parts if p.value[0] == "literal"]
    items = [p.value for p in parts]
    return BracedMapProjection(
        span_of(c), c[MAP_PROJECTION.variable], items, c[MAP_PROJECTION.lbrace].start_pos, key_spans
    )


# ---------------------------------------------------------------- CASE, subqueries


CASE_EXPR = rule("case_expr", "CASE subject=expr? *alternatives ELSE? default=expr? END")


@CASE_EXPR
def case_expr(c: list[Any]) -> CaseExpr:
    subject = ex(c[CASE_EXPR.subject]) if c[CASE_EXPR.subject] is not None else None
    alternatives = [p.value for p in c[CASE_EXPR.alternatives] if type(p) is Part]
    default = ex(c[CASE_EXPR.default]) if c[CASE_EXPR.default] is not None else None
    check_case(subject, alternatives)
    return CaseExpr(span_of(c), subject, alternatives, default)


SUBQUERY_FULL = rule("subquery_full", "kind=EXISTS|COUNT|COLLECT LBRACE query RBRACE")


@SUBQUERY_FULL
def subquery_full(c: list[Any]) -> SubqueryExpr:
    return SubqueryExpr(
        span_of(c), c[SUBQUERY_FULL.kind].value.upper(), c[SUBQUERY_FULL.query], [], None
    )


SUBQUERY_PATTERN = rule(
    "subquery_pattern", "kind=EXISTS|COUNT|COLLECT LBRACE pattern where? RBRACE"
)


@SUBQUERY_PATTERN
def subquery_pattern(c: list[Any]) -> SubqueryExpr:
    where = ex(c[SUBQUERY_PATTERN.where]) if c[SUBQUERY_PATTERN.where] is not None else None
    return SubqueryExpr(
        span_of(c),
        c[SUBQUERY_PATTERN.kind].value.upper(),
        None,
        c[SUBQUERY_PATTERN.pattern].value,
        where,
    )
