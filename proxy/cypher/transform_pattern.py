"""The pattern family of the lark-callbacks -> typed AST builder (builders.py): node and
relationship patterns, quantifiers and variable lengths, shortest paths, and patterns used
inside expressions (`WHERE (a)-->(b)`, pattern comprehensions).
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from lark import Token

from query_guard.cypher.ast import (
    NodePattern,
    PathPattern,
    PatternElement,
    PatternPredicate,
    QuantifiedPath,
    RelPattern,
    Variable,
    VarLength,
)
from query_guard.cypher.build_children import Children, Rules
from query_guard.cypher.build_parts import BuildError, Part, as_node_pattern, ex, span_of

# arrow token -> (length of the left piece, length of the right piece, direction)
_BARE_ARROWS = {
    "ARROW_OUT": (1, 2, "out"),  # -->  = "-" + "->"
    "ARROW_IN": (2, 1, "in"),  # <--  = "<-" + "-"
    "ARROW_UNDIRECTED": (1, 1, "both"),  # --  = "-" + "-"
    "ARROW_BOTH": (2, 2, "both"),  # <--> = "<-" + "->"
}


def _check_elements(elements: list[PatternElement], span: tuple[int, int]) -> None:
    """Nodes and relationships alternate; quantified paths may also sit next to nodes."""
    if isinstance(elements[0], RelPattern) or isinstance(elements[-1], RelPattern):
        raise BuildError("a pattern must start and end with a node", span)
    for left, right in pairwise(elements):
        if isinstance(left, RelPattern) and isinstance(right, RelPattern):
            raise BuildError("two relationships need a node between them", right.span)
        if isinstance(left, NodePattern) and isinstance(right, NodePattern):
            raise BuildError("two nodes need a relationship between them", right.span)


RULES = Rules()
rule = RULES.rule

# ---------------------------------------------------------------- patterns


@rule("pattern", "*parts")
def pattern(c: Children) -> Part:
    return Part("patterns", [x for x in c.parts if isinstance(x, PathPattern)], c.span)


@rule("path_elements", "*elements")
def path_elements(c: Children) -> Part:
    span = c.span
    elements = list(c.elements)
    _check_elements(elements, span)
    return Part("elements", elements, span)


@rule("shortest_call", "function=SHORTESTPATH|ALLSHORTESTPATHS LPAR path_elements RPAR")
def shortest_call(c: Children) -> Part:
    name = "allShortestPaths" if c.function.type == "ALLSHORTESTPATHS" else "shortestPath"
    return Part("shortest", (name, c.path_elements.value), c.span)


@rule("path_selector", "*words")
def path_selector(c: Children) -> Part:
    words = [x.value.upper() for x in c.words if isinstance(x, Token)]
    return Part("selector", " ".join(words), c.span)


@rule("pattern_part", "variable? EQ? selector=path_selector? body=path_body")
def pattern_part(c: Children) -> PathPattern:
    body: Part = c.body
    shortest = c.selector.value if c.selector is not None else None
    if body.kind == "shortest":
        shortest, elements = body.value
    else:
        elements = body.value
    return PathPattern(c.span, c.variable, elements, shortest)


@rule("node_pattern", "LPAR variable? labels=node_labels? properties? where? RPAR")
def node_pattern(c: Children) -> NodePattern:
    return NodePattern(c.span, c.variable, c.labels, c.properties, c.where)


@rule("quantified_path", "LPAR inner=path_elements where? RPAR quantifier?")
def quantified_path(c: Children) -> QuantifiedPath:
    inner: Part = c.inner
    path = PathPattern(inner.span, None, inner.value)
    return QuantifiedPath(c.span, path, c.quantifier, c.where)


@rule(
    "rel_detail",
    "variable? types=node_labels? length=var_length? properties? where?",
)
def rel_detail(c: Children) -> Part:
    return Part("detail", (c.variable, c.types, c.length, c.properties, c.where), (0, 0))


@rule(
    "rel_bracket",
    "opener=DASH_BRACKET|LARROW_BRACKET detail=rel_detail RSQB closer=MINUS|ARROW_RIGHT"
    " quantifier?",
)
def rel_bracket(c: Children) -> RelPattern:
    opener, closer = c.opener, c.closer
    start = opener.start_pos
    left_len = 2 if opener.type == "LARROW_BRACKET" else 1
    right_len = 2 if closer.type == "ARROW_RIGHT" else 1
    direction = {(1, 2): "out", (2, 1): "in"}.get((left_len, right_len), "both")
    variable, types, length, properties, where = c.detail.value
    return RelPattern(
        c.span,
        variable,
        types,
        direction,
        (start, start + left_len),
        (closer.start_pos, closer.start_pos + right_len),
        length,
        properties,
        where,
        c.quantifier,
    )


@rule("rel_bare", "arrow=ARROW_BOTH|ARROW_OUT|ARROW_IN|ARROW_UNDIRECTED quantifier?")
def rel_bare(c: Children) -> RelPattern:
    arrow: Token = c.arrow
    left_len, right_len, direction = _BARE_ARROWS[arrow.type]
    start = arrow.start_pos
    left = (start, start + left_len)
    right = (start + left_len, start + left_len + right_len)
    return RelPattern(c.span, None, None, direction, left, right, quantifier=c.quantifier)


@rule("var_length", "STAR lo=INTEGER? dots=DOTDOT? hi=INTEGER?")
def var_length(c: Children) -> VarLength:
    lo = int(c.lo.value) if c.lo is not None else None
    if c.dots is None:  # `*` or `*n`
        return VarLength(c.span, lo, lo)
    hi = int(c.hi.value) if c.hi is not None else None
    return VarLength(c.span, lo, hi)


@rule("quant_plus", "PLUS")
def quant_plus(c: Children) -> VarLength:
    return VarLength(c.span, 1, None)


@rule("quant_star", "STAR")
def quant_star(c: Children) -> VarLength:
    return VarLength(c.span, 0, None)


@rule("quant_exact", "LBRACE n=INTEGER RBRACE")
def quant_exact(c: Children) -> VarLength:
    n = int(c.n.value)
    return VarLength(c.span, n, n)


@rule("quant_range", "LBRACE lo=INTEGER? COMMA hi=INTEGER? RBRACE")
def quant_range(c: Children) -> VarLength:
    lo = int(c.lo.value) if c.lo is not None else None
    hi = int(c.hi.value) if c.hi is not None else None
    return VarLength(c.span, lo, hi)


# ---------------------------------------------------------------- patterns in expressions


@rule("pp_node_empty", "LPAR RPAR")
def pp_node_empty(c: Children) -> NodePattern:
    return NodePattern(c.span, None, None, None)


@rule("pp_node", "LPAR labels=node_labels properties? where? RPAR")
def pp_node(c: Children) -> NodePattern:
    return NodePattern(c.span, None, c.labels, c.properties, c.where)


@rule("pp_node_where", "LPAR expr where RPAR")
def pp_node_where(c: Children) -> NodePattern:
    node = as_node_pattern(c.expr)
    return NodePattern(c.span, node.variable, node.labels, node.properties, c.where)


@rule("pp_node_labeled", "LPAR subject=postfix_expr labels=check_labels properties where? RPAR")
def pp_node_labeled(c: Children) -> NodePattern:
    variable = ex(c.subject)
    if not isinstance(variable, Variable):
        raise BuildError("expected a variable in a node pattern", variable.span)
    return NodePattern(c.span, variable, c.labels, c.properties, c.where)


@rule("pp_rest", "*items")
def pp_rest(c: Children) -> list[Any]:
    return list(c.items)


@rule("pattern_predicate", "first=pp_first_node rest=pp_rest")
def pattern_predicate(c: Children) -> PatternPredicate:
    first = c.first if isinstance(c.first, NodePattern) else as_node_pattern(c.first)
    elements = [first, *c.rest]
    span = span_of([first, *c.rest])
    return PatternPredicate(span, PathPattern(span, None, elements))
