"""Pattern half of the lark-callbacks -> typed AST builder (see transform.py): node and
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
from query_guard.cypher.build_parts import (
    BuildError,
    Part,
    as_node_pattern,
    ex,
    span_of,
)

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


class PatternBuilder:
    """Callbacks for the pattern rules of grammars/cypher.lark."""

    # ---------------------------------------------------------------- patterns

    def pattern(self, c: list[Any]) -> Part:
        return Part("patterns", [x for x in c if isinstance(x, PathPattern)], span_of(c))

    def path_elements(self, c: list[Any]) -> Part:
        span = span_of(c)
        _check_elements(c, span)
        return Part("elements", list(c), span)

    def shortest_call(self, c: list[Any]) -> Part:
        name = "allShortestPaths" if c[0].type == "ALLSHORTESTPATHS" else "shortestPath"
        return Part("shortest", (name, c[2].value), span_of(c))

    def path_selector(self, c: list[Any]) -> Part:
        words = [x.value.upper() for x in c if isinstance(x, Token)]
        return Part("selector", " ".join(words), span_of(c))

    def pattern_part(self, c: list[Any]) -> PathPattern:
        body: Part = c[3]
        shortest = c[2].value if c[2] is not None else None
        if body.kind == "shortest":
            shortest, elements = body.value
        else:
            elements = body.value
        return PathPattern(span_of(c), c[0], elements, shortest)

    def node_pattern(self, c: list[Any]) -> NodePattern:
        return NodePattern(span_of(c), c[1], c[2], c[3], c[4])

    def quantified_path(self, c: list[Any]) -> QuantifiedPath:
        inner: Part = c[1]
        return QuantifiedPath(span_of(c), PathPattern(inner.span, None, inner.value), c[4], c[2])

    def rel_detail(self, c: list[Any]) -> Part:
        return Part("detail", tuple(c), (0, 0))

    def rel_bracket(self, c: list[Any]) -> RelPattern:
        opener, detail, _, closer, quantifier = c
        start = opener.start_pos
        left_len = 2 if opener.type == "LARROW_BRACKET" else 1
        right_len = 2 if closer.type == "ARROW_RIGHT" else 1
        direction = {(1, 2): "out", (2, 1): "in"}.get((left_len, right_len), "both")
        variable, types, length, properties, where = detail.value
        return RelPattern(
            span_of(c),
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

    def rel_bare(self, c: list[Any]) -> RelPattern:
        arrow: Token = c[0]
        left_len, right_len, direction = _BARE_ARROWS[arrow.type]
        start = arrow.start_pos
        left = (start, start + left_len)
        right = (start + left_len, start + left_len + right_len)
        return RelPattern(span_of(c), None, None, direction, left, right, quantifier=c[1])

    def var_length(self, c: list[Any]) -> VarLength:
        lo = int(c[1].value) if c[1] is not None else None
        if c[2] is None:  # `*` or `*n`
            return VarLength(span_of(c), lo, lo)
        hi = int(c[3].value) if c[3] is not None else None
        return VarLength(span_of(c), lo, hi)

    def quant_plus(self, c: list[Any]) -> VarLength:
        return VarLength(span_of(c), 1, None)

    def quant_star(self, c: list[Any]) -> VarLength:
        return VarLength(span_of(c), 0, None)

    def quant_exact(self, c: list[Any]) -> VarLength:
        n = int(c[1].value)
        return VarLength(span_of(c), n, n)

    def quant_range(self, c: list[Any]) -> VarLength:
        lo = int(c[1].value) if c[1] is not None else None
        hi = int(c[3].value) if c[3] is not None else None
        return VarLength(span_of(c), lo, hi)

    # ---------------------------------------------------------------- patterns in expressions

    def pp_node(self, c: list[Any]) -> NodePattern:
        if len(c) == 2:  # ()
            return NodePattern(span_of(c), None, None, None)
        return NodePattern(span_of(c), None, c[1], c[2], c[3])

    def pp_node_where(self, c: list[Any]) -> NodePattern:
        node = as_node_pattern(c[1])
        return NodePattern(span_of(c), node.variable, node.labels, node.properties, c[2])

    def pp_node_labeled(self, c: list[Any]) -> NodePattern:
        variable = ex(c[1])
        if not isinstance(variable, Variable):
            raise BuildError("expected a variable in a node pattern", variable.span)
        return NodePattern(span_of(c), variable, c[2], c[3], c[4])

    def pp_rest(self, c: list[Any]) -> list[Any]:
        return list(c)

    def pattern_predicate(self, c: list[Any]) -> PatternPredicate:
        first = c[0] if isinstance(c[0], NodePattern) else as_node_pattern(c[0])
        elements = [first, *c[1]]
        span = span_of([first, *c[1]])
        return PatternPredicate(span, PathPattern(span, None, elements))
