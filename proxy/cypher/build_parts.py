"""The pieces the Cypher AST builder's families share (`transform*.py`): the build error,
intermediate values that are not AST nodes, span arithmetic over lark tokens,
name/string/integer literal decoding, and the helpers that turn an expression parsed in a
pattern's place back into a pattern.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lark import Token

from query_guard.cypher.ast import (
    BinaryOp,
    Expr,
    LabelCheck,
    MapLiteral,
    MapProjection,
    NodePattern,
    PathPattern,
    PatternPredicate,
    PropertyLookup,
    Span,
    Variable,
)


class BuildError(Exception):
    """A construct the grammar accepts but Cypher does not (reported as a syntax error)."""

    def __init__(self, message: str, span: Span) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


@dataclass(slots=True)
class Part:
    """An intermediate value (a name, a clause fragment) that is not itself an AST node."""

    kind: str
    value: Any
    span: Span


@dataclass(slots=True)
class Paren:
    """`( expr )`: kept apart so spans include the parentheses and `(a)-->(b)` can convert."""

    expr: Expr
    span: Span


@dataclass(eq=False, slots=True)
class BracedMapProjection(MapProjection):
    """A MapProjection that remembers where its `{` is (for `(n {k: v})` in expressions)."""

    lbrace: int = 0
    literal_key_spans: list[Span] | None = None


def start_of(x: Any) -> int:
    if isinstance(x, Token):
        return x.start_pos  # type: ignore[return-value]
    if isinstance(x, list):
        return start_of(x[0])
    return x.span[0]


def end_of(x: Any) -> int:
    if isinstance(x, Token):
        return x.end_pos  # type: ignore[return-value]
    if isinstance(x, list):
        return end_of(x[-1])
    return x.span[1]


def span_of(children: Sequence[Any]) -> Span:
    """(start of the first present child, end of the last present child).

    On the parser's hot path (every callback): tokens and nodes are read inline, the rest
    (absent children, lists) through start_of / end_of."""
    first, last = children[0], children[-1]
    if type(first) is Token:
        start = first.start_pos
    else:
        if first is None or (type(first) is list and not first):
            first = _present(children)
        start = start_of(first)
    if type(last) is Token:
        return start, last.end_pos  # type: ignore[return-value]
    if last is None or (type(last) is list and not last):
        last = _present(reversed(children))
    return start, end_of(last)  # type: ignore[return-value]


def _present(children: Iterable[Any]) -> Any:
    """The first child that is neither None nor an empty list (`c != []`, without calling a
    dataclass's __eq__: a child is a token, a node, a Part, a list or None)."""
    for c in children:
        if c is not None and (type(c) is not list or c):
            return c
    raise StopIteration


def tok_span(tok: Token) -> Span:
    return tok.start_pos, tok.end_pos  # type: ignore[return-value]


def ex(x: Any) -> Any:
    """Unwrap a parenthesised expression."""
    return x.expr if type(x) is Paren else x


def exprs(children: list[Any]) -> list[Expr]:
    return [ex(c) for c in children if isinstance(c, (Expr, Paren))]


def has(children: list[Any], type_: str) -> bool:
    return any(isinstance(c, Token) and c.type == type_ for c in children)


def unescape_name(text: str) -> str:
    if text.startswith("`"):
        return text[1:-1].replace("``", "`")
    return text


_ESCAPES = {
    "t": "\t",
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "f": "\f",
    "'": "'",
    '"': '"',
    "\\": "\\",
}
_ESCAPE_RE = re.compile(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.DOTALL)


def _unescape_one(m: re.Match[str]) -> str:
    code = m.group(1)
    if len(code) > 1:
        try:
            return chr(int(code[1:], 16))
        except ValueError:  # beyond the Unicode range
            return m.group(0)
    return _ESCAPES.get(code, m.group(0))


def unescape_string(text: str) -> str:
    body = text[1:-1]
    return _ESCAPE_RE.sub(_unescape_one, body) if "\\" in body else body


def parse_int(text: str) -> int:
    if text.isdigit() and (text[0] != "0" or len(text) == 1):  # plain decimal (most integers)
        return int(text)
    text = text.replace("_", "")  # `1_000`, `0x_FF` (a decimal with one never starts with 0)
    low = text.lower()
    if low.startswith("0x"):
        return int(low[2:], 16)
    if low.startswith("0o"):
        return int(low[2:], 8)
    if len(text) > 1 and text[0] == "0" and text.isdigit() and set(text) <= set("01234567"):
        return int(text, 8)  # legacy octal `017`
    return int(text)


def dotted_name(expr: Expr) -> str | None:
    """`apoc.text.join` from the property chain it was parsed as; None if not a plain chain."""
    keys: list[str] = []
    while isinstance(expr, PropertyLookup):  # a loop: `a.b.c…` is as deep as it is long
        keys.append(expr.key)
        expr = expr.subject
    if not isinstance(expr, Variable):
        return None
    return ".".join([expr.name, *reversed(keys)])


def in_binding(expr: Any, what: str) -> tuple[Variable, Expr]:
    """`x IN list` -> (x, list); anything else is not a valid comprehension/quantifier head."""
    expr = ex(expr)
    if isinstance(expr, BinaryOp) and expr.op == "IN" and isinstance(expr.left, Variable):
        return expr.left, expr.right
    raise BuildError(f"expected `variable IN list` in {what}", expr.span)


def as_node_pattern(x: Any) -> NodePattern:
    """The first node of a pattern inside an expression, parsed as `( expr )`."""
    inner = ex(x)
    span = x.span
    if isinstance(inner, Variable):
        return NodePattern(span, inner, None, None)
    if isinstance(inner, LabelCheck) and isinstance(inner.subject, Variable):
        return NodePattern(span, inner.subject, inner.labels, None)
    if isinstance(inner, MapLiteral):
        return NodePattern(span, None, None, inner)
    if isinstance(inner, BracedMapProjection) and all(i[0] == "literal" for i in inner.items):
        key_spans = inner.literal_key_spans or []
        entries = [(i[1], ks, i[2]) for i, ks in zip(inner.items, key_spans, strict=True)]
        props = MapLiteral((inner.lbrace, inner.span[1]), entries)
        return NodePattern(span, inner.subject, None, props)
    raise BuildError("expected a node pattern before the relationship", inner.span)


def pattern_of(expr: Any) -> tuple[Variable | None, PathPattern] | None:
    """`(a)-->(b)` or `p = (a)-->(b)` used as the head of a pattern comprehension."""
    expr = ex(expr)
    if isinstance(expr, PatternPredicate):
        return None, expr.pattern
    if (
        isinstance(expr, BinaryOp)
        and expr.op == "="
        and isinstance(expr.left, Variable)
        and isinstance(ex(expr.right), PatternPredicate)
    ):
        pattern = ex(expr.right).pattern
        return expr.left, PathPattern(expr.span, expr.left, pattern.elements, pattern.shortest)
    return None
