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
from query_guard.cypher.build_children import Rules
from query_guard.cypher.build_parts import BuildError, Part, as_node_pattern, ex, span_of

# arrow token -> (length of the left piece, length of the right piece, direction)
_BARE_ARROWS = {
    "ARROW_OUT": (1, 2, "out"),  # -->  = "-" + "->"
    "ARROW_IN": (2, 1, "in"),  # <--  = "<-" + "-"
    "ARROW_UNDIRECTED": (1, 1, "both"),  # --  = "-" + "-"
    "ARROW_BOTH": (2, 2, "both"),  # <--> = "<-" + "->"
}


_ONE_HOP = (NodePattern, RelPattern, NodePattern)


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


PATTERN = rule("pattern", "*parts")


@PATTERN
def pattern(c: list[Any]) -> Part:
    parts = c[PATTERN.parts]
    if len(parts) == 1:  # one path (most patterns): a PathPattern, whose span is the pattern's
        return Part("patterns", parts, parts[0].span)
    return Part("patterns", [x for x in parts if isinstance(x, PathPattern)], span_of(c))


PATH_ELEMENTS = rule("path_elements", "*elements")


@PATH_ELEMENTS
def path_elements(c: list[Any]) -> Part:
    elements = c[PATH_ELEMENTS.elements]  # nodes only, in a list of their own (a slice)
    span = (elements[0].span[0], elements[-1].span[1])
    kinds = tuple(map(type, elements))
    if kinds != (NodePattern,) and kinds != _ONE_HOP:  # `(n)` and `(a)-[r]->(b)` are well formed
        _check_elements(elements, span)
    return Part("elements", elements, span)


SHORTEST_CALL = rule(
    "shortest_call", "function=SHORTESTPATH|ALLSHORTESTPATHS LPAR path_elements RPAR"
)


@SHORTEST_CALL
def shortest_call(c: list[Any]) -> Part:
    name = (
        "allShortestPaths"
        if c[SHORTEST_CALL.function].type == "ALLSHORTESTPATHS"
        else "shortestPath"
    )
    return Part("shortest", (name, c[SHORTEST_CALL.path_elements].value), span_of(c))


PATH_SELECTOR = rule("path_selector", "*words")


@PATH_SELECTOR
def path_selector(c: list[Any]) -> Part:
    words = [x.value.upper() for x in c[PATH_SELECTOR.words] if isinstance(x, Token)]
    return Part("selector", " ".join(words), span_of(c))


PATTERN_PART = rule("pattern_part", "variable? EQ? selector=path_selector? body=path_body")


@PATTERN_PART
def pattern_part(c: list[Any]) -> PathPattern:
    body: Part = c[PATTERN_PART.body]
    shortest = c[PATTERN_PART.selector].value if c[PATTERN_PART.selector] is not None else None
    if body.kind == "shortest":
        shortest, elements = body.value
    else:
        elements = body.value
    variable = c[PATTERN_PART.variable]  # the first child when present, else the selector's
    selector = c[PATTERN_PART.selector]
    first = variable if variable is not None else body if selector is None else selector
    return PathPattern((first.span[0], body.span[1]), variable, elements, shortest)


NODE_PATTERN = rule("node_pattern", "LPAR variable? labels=node_labels? properties? where? RPAR")


@NODE_PATTERN
def node_pattern(c: list[Any]) -> NodePattern:
    return NodePattern(
        (c[NODE_PATTERN.lpar].start_pos, c[NODE_PATTERN.rpar].end_pos),
        c[NODE_PATTERN.variable],
        c[NODE_PATTERN.labels],
        c[NODE_PATTERN.properties],
        c[NODE_PATTERN.where],
    )


QUANTIFIED_PATH = rule("quantified_path", "LPAR inner=path_elements where? RPAR quantifier?")


@QUANTIFIED_PATH
def quantified_path(c: list[Any]) -> QuantifiedPath:
    inner: Part = c[QUANTIFIED_PATH.inner]
    path = PathPattern(inner.span, None, inner.value)
    return QuantifiedPath(span_of(c), path, c[QUANTIFIED_PATH.quantifier], c[QUANTIFIED_PATH.where])


REL_DETAIL = rule(
    "rel_detail",
    "variable? types=node_labels? length=var_length? properties? where?",
)


@REL_DETAIL
def rel_detail(c: list[Any]) -> tuple[Any, ...]:
    """What rel_bracket reads: (variable, types, length, properties, where)."""
    return (
        c[REL_DETAIL.variable],
        c[REL_DETAIL.types],
        c[REL_DETAIL.length],
        c[REL_DETAIL.properties],
        c[REL_DETAIL.where],
    )


REL_BRACKET = rule(
    "rel_bracket",
    "opener=DASH_BRACKET|LARROW_BRACKET detail=rel_detail RSQB closer=MINUS|ARROW_RIGHT"
    " quantifier?",
)


@REL_BRACKET
def rel_bracket(c: list[Any]) -> RelPattern:
    opener, closer = c[REL_BRACKET.opener], c[REL_BRACKET.closer]
    start = opener.start_pos
    left_len = 2 if opener.type == "LARROW_BRACKET" else 1
    right_len = 2 if closer.type == "ARROW_RIGHT" else 1
    direction = "both" if left_len == right_len else "out" if right_len == 2 else "in"
    variable, types, length, properties, where = c[REL_BRACKET.detail]
    quantifier = c[REL_BRACKET.quantifier]
    end = closer.end_pos if quantifier is None else quantifier.span[1]
    return RelPattern(
        (start, end),
        variable,
        types,
        direction,
        (start, start + left_len),
        (closer.start_pos, closer.start_pos + right_len),
        length,
        properties,
        where,
        quantifier,
    )


REL_BARE = rule("rel_bare", "arrow=ARROW_BOTH|ARROW_OUT|ARROW_IN|ARROW_UNDIRECTED quantifier?")


@REL_BARE
def rel_bare(c: list[Any]) -> RelPattern:
    arrow: Token = c[REL_BARE.arrow]
    left_len, right_len, direction = _BARE_ARROWS[arrow.type]
    start = arrow.start_pos
    left = (start, start + left_len)
    right = (start + left_len, start + left_len + right_len)
    return RelPattern(
        span_of(c), None, None, direction, left, right, quantifier=c[REL_BARE.quantifier]
    )


VAR_LENGTH = rule("var_length", "STAR lo=INTEGER? dots=DOTDOT? hi=INTEGER?")


@VAR_LENGTH
def var_length(c: list[Any]) -> VarLength:
    lo = int(c[VAR_LENGTH.lo].value) if c[VAR_LENGTH.lo] is not None else None
    if c[VAR_LENGTH.dots] is None:  # `*` or `*n`
        return VarLength(span_of(c), lo, lo)
    hi = int(c[VAR_LENGTH.hi].value) if c[VAR_LENGTH.hi] is not None else None
    return VarLength(span_of(c), lo, hi)


QUANT_PLUS = rule("quant_plus", "PLUS")


@QUANT_PLUS
def quant_plus(c: list[Any]) -> VarLength:
    return VarLength(span_of(c), 1, None)


QUANT_STAR = rule("quant_star", "STAR")


@QUANT_STAR
def quant_star(c: list[Any]) -> VarLength:
    return VarLength(span_of(c), 0, None)


QUANT_EXACT = rule("quant_exact", "LBRACE n=INTEGER RBRACE")


@QUANT_EXACT
def quant_exact(c: list[Any]) -> VarLength:
    n = int(c[QUANT_EXACT.n].value)
    return VarLength(span_of(c), n, n)


QUANT_RANGE = rule("quant_range", "LBRACE lo=INTEGER? COMMA hi=INTEGER? RBRACE")


@QUANT_RANGE
def quant_range(c: list[Any]) -> VarLength:
    lo = int(c[QUANT_RANGE.lo].value) if c[QUANT_RANGE.lo] is not None else None
    hi = int(c[QUANT_RANGE.hi].value) if c[QUANT_RANGE.hi] is not None else None
    return VarLength(span_of(c), lo, hi)


# ---------------------------------------------------------------- patterns in expressions


PP_NODE_EMPTY = rule("pp_node_empty", "LPAR RPAR")


@PP_NODE_EMPTY
def pp_node_empty(c: list[Any]) -> NodePattern:
    return NodePattern(span_of(c), None, None, None)


PP_NODE = rule("pp_node", "LPAR labels=node_labels properties? where? RPAR")


@PP_NODE
def pp_node(c: list[Any]) -> NodePattern:
    return NodePattern(span_of(c), None, c[PP_NODE.labels], c[PP_NODE.properties], c[PP_NODE.where])


PP_NODE_WHERE = rule("pp_node_where", "LPAR expr where RPAR")


@PP_NODE_WHERE
def pp_node_where(c: list[Any]) -> NodePattern:
    node = as_node_pattern(c[PP_NODE_WHERE.expr])
    return NodePattern(
        span_of(c), node.variable, node.labels, node.properties, c[PP_NODE_WHERE.where]
    )


PP_NODE_LABELED = rule(
    "pp_node_labeled", "LPAR subject=postfix_expr labels=check_labels properties where? RPAR"
)


@PP_NODE_LABELED
def pp_node_labeled(c: list[Any]) -> NodePattern:
    variable = ex(c[PP_NODE_LABELED.subject])
    if not isinstance(variable, Variable):
        raise BuildError("expected a variable in a node pattern", variable.span)
    return NodePattern(
        span_of(c),
        variable,
        c[PP_NODE_LABELED.labels],
        c[PP_NODE_LABELED.properties],
        c[PP_NODE_LABELED.where],
    )


PP_REST = rule("pp_rest", "*items")


@PP_REST
def pp_rest(c: list[Any]) -> list[Any]:
    return list(c[PP_REST.items])


PATTERN_PREDICATE = rule("pattern_predicate", "first=pp_first_node rest=pp_rest")


@PATTERN_PREDICATE
def pattern_predicate(c: list[Any]) -> PatternPredicate:
    first = (
        c[PATTERN_PREDICATE.first]
        if isinstance(c[PATTERN_PREDICATE.first], NodePattern)
        else as_node_pattern(c[PATTERN_PREDICATE.first])
    )
    elements = [first, *c[PATTERN_PREDICATE.rest]]
    span = span_of([first, *c[PATTERN_PREDICATE.rest]])
    return PatternPredicate(span, PathPattern(span, None, elements))
