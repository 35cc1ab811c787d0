"""The expression family of the lark-callbacks -> typed AST builder (assembled in builders.py):
operator precedence (`_Pratt`), names, literals, operators and calls; lists, maps, CASE and
subqueries are in transform_collections.py, label expressions in transform_labels.py, shared
pieces in build_parts.py.

The parser runs with `keep_all_tokens=True`, so each callback receives every token of its rule
(punctuation included), read by the names of its declared shape (build_children.py), and
computes the node's span from its first and last child; `[optional]` parts arrive as None.
"""

from __future__ import annotations

from typing import Any

from lark import Token

from query_guard.cypher.ast import (
    BinaryOp,
    FunctionCall,
    LabelCheck,
    Literal,
    Node,
    OtherExpr,
    Parameter,
    PropertyLookup,
    Subscript,
    UnaryOp,
    Variable,
)
from query_guard.cypher.build_children import Rules
from query_guard.cypher.build_parts import (
    BuildError,
    Paren,
    Part,
    dotted_name,
    ex,
    exprs,
    in_binding,
    parse_int,
    span_of,
    tok_span,
    unescape_name,
    unescape_string,
)
from query_guard.cypher.transform_predicates import apply_suffix


def _op_word(tok: Token) -> str:
    """One operator token's text: a keyword upper-cased, `!=` as `<>`."""
    text = tok.value
    return text.upper() if text[0].isalpha() else "<>" if text == "!=" else text


def _op_text(toks: list[Token]) -> str:
    if len(toks) == 1:  # one token (all but STARTS WITH / ENDS WITH)
        return _op_word(toks[0])
    text = " ".join(t.value.upper() if t.value[0].isalpha() else t.value for t in toks)
    return "<>" if text == "!=" else text


# binding power of infix operators by token type (higher binds tighter); NOT is prefix at 4,
# IS [NOT] NULL postfix at 6, unary + and - prefix at 10
_INFIX = {
    "OR": 1,
    "XOR": 2,
    "AND": 3,
    **dict.fromkeys(["EQ", "NEQ", "NEQ_BANG", "LT", "GT", "LE", "GE", "REGEX_MATCH"], 5),
    **dict.fromkeys(["STARTS", "ENDS", "CONTAINS", "IN"], 6),
    "PLUS": 7,
    "CONCAT": 7,
    "MINUS": 7,
    "STAR": 8,
    "SLASH": 8,
    "PERCENT": 8,
    "CARET": 9,
}
_NOT_POWER = 4
_NULL_POWER = 6
_SIGN_POWER = 10


class _Pratt:
    """Precedence climbing over the flat operand/operator list of the `expr` rule."""

    __slots__ = ("items", "pos")

    def __init__(self, items: list[Any]) -> None:
        self.items = items
        self.pos = 0

    def parse(self, min_power: int) -> tuple[Any, int, int]:
        """(expression, start, end); start/end include parentheses around operands."""
        items = self.items
        item = items[self.pos]
        self.pos += 1
        if isinstance(item, Token):  # prefix NOT / - / +
            power = _NOT_POWER if item.type == "NOT" else _SIGN_POWER
            operand, _, end = self.parse(power)
            start = item.start_pos
            left = UnaryOp((start, end), _op_text([item]), operand)
        else:  # an operand: a node or a Paren
            start, end = item.span
            left = item.expr if type(item) is Paren else item
        while self.pos < len(items):
            tok = items[self.pos]
            if type(tok) is Part:  # a postfix predicate: IS [NOT] NULL, IS :: T, IS Label, …
                if min_power > _NULL_POWER:
                    break
                self.pos += 1
                left, end = apply_suffix(tok, left, start), tok.span[1]
                continue
            power = _INFIX[tok.type]
            if power < min_power:
                break
            last = tok
            if tok.type in ("STARTS", "ENDS"):
                self.pos += 1
                last = items[self.pos]
            self.pos += 1
            right, _, end = self.parse(power + 1)
            op = _op_word(tok) if last is tok else _op_text([tok, last])
            left = BinaryOp((start, end), op, left, right, (tok.start_pos, last.end_pos))
        return left, start, end


RULES = Rules()
rule = RULES.rule

# ---------------------------------------------------------------- names and atoms


SYMBOLIC_NAME = rule("symbolic_name", "name=NAME|ESCAPED_NAME")


@SYMBOLIC_NAME
def symbolic_name(c: list[Any]) -> Part:
    tok = c[SYMBOLIC_NAME.name]
    name = tok.value
    return Part(
        "name", unescape_name(name) if name[0] == "`" else name, (tok.start_pos, tok.end_pos)
    )


VARIABLE = rule("variable", "name=NAME|ESCAPED_NAME")


@VARIABLE
def variable(c: list[Any]) -> Variable:
    tok = c[VARIABLE.name]
    name = tok.value
    return Variable((tok.start_pos, tok.end_pos), unescape_name(name) if name[0] == "`" else name)


KEYWORD_VARIABLE = rule("keyword_variable", "word=COUNT|EXISTS|COLLECT")


@KEYWORD_VARIABLE
def keyword_variable(c: list[Any]) -> Variable:
    return Variable(tok_span(c[KEYWORD_VARIABLE.word]), c[KEYWORD_VARIABLE.word].value)


PARAMETER = rule("parameter", "PARAM")


@PARAMETER
def parameter(c: list[Any]) -> Parameter:
    return Parameter(tok_span(c[PARAMETER.param]), unescape_name(c[PARAMETER.param].value[1:]))


STRING = rule("string", "STRING")


@STRING
def string(c: list[Any]) -> Literal:
    tok = c[STRING.string]
    return Literal((tok.start_pos, tok.end_pos), "string", unescape_string(tok.value))


INTEGER = rule("integer", "INTEGER")


@INTEGER
def integer(c: list[Any]) -> Literal:
    return Literal(tok_span(c[INTEGER.integer]), "integer", parse_int(c[INTEGER.integer].value))


FLOAT = rule("float", "FLOAT")


@FLOAT
def float_literal(c: list[Any]) -> Literal:
    return Literal(tok_span(c[FLOAT.float]), "float", float(c[FLOAT.float].value))


TRUE = rule("true", "TRUE")


@TRUE
def true(c: list[Any]) -> Literal:
    return Literal(tok_span(c[TRUE.true]), "boolean", True)


FALSE = rule("false", "FALSE")


@FALSE
def false(c: list[Any]) -> Literal:
    return Literal(tok_span(c[FALSE.false]), "boolean", False)


NULL = rule("null", "NULL")


@NULL
def null(c: list[Any]) -> Literal:
    return Literal(tok_span(c[NULL.null]), "null", None)


PAREN_EXPR = rule("paren_expr", "LPAR expr RPAR")


@PAREN_EXPR
def paren_expr(c: list[Any]) -> Paren:
    return Paren(ex(c[PAREN_EXPR.expr]), span_of(c))


# ---------------------------------------------------------------- operators


EXPR = rule("expr", "*items")


@EXPR
def expr(c: list[Any]) -> Any:
    if len(c) == 1:
        (only,) = c
        if type(only) is not Part:  # one operand without postfix predicates (most expressions)
            return only
    if len(c) == 3:
        left, tok, right = c
        if type(tok) is Token and _plain_operand(left) and _plain_operand(right):
            return _binary(left, tok, right)  # `a OP b` (the most common), as _Pratt builds it
    items: list[Any] = []
    for item in c[EXPR.items]:  # an operand's postfix predicates follow it, flat
        if type(item) is Part and item.kind == "operand":
            items += item.value
        else:
            items.append(item)
    return _Pratt(items).parse(0)[0]


def _plain_operand(item: Any) -> bool:
    """An operand without prefix operators or postfix predicates: a node or a Paren."""
    return type(item) is not Token and type(item) is not Part


def _binary(left: Any, tok: Token, right: Any) -> BinaryOp:
    """`left tok right` with one infix token: the BinaryOp `_Pratt` builds for it."""
    return BinaryOp(
        (left.span[0], right.span[1]),
        _op_word(tok),
        left.expr if type(left) is Paren else left,
        right.expr if type(right) is Paren else right,
        (tok.start_pos, tok.end_pos),
    )


OPERAND = rule("operand", "subject=label_expr_check *suffixes")


@OPERAND
def operand(c: list[Any]) -> Part:
    """An operand with its postfix predicates (`x IS NULL`): expr arranges them by precedence."""
    return Part("operand", c, span_of(c))


LABEL_CHECK = rule("label_check", "subject=postfix_expr labels=check_labels")


@LABEL_CHECK
def label_check(c: list[Any]) -> LabelCheck:
    return LabelCheck(span_of(c), ex(c[LABEL_CHECK.subject]), c[LABEL_CHECK.labels])


PROPERTY_LOOKUP = rule("property_lookup", "subject=postfix_expr DOT key=symbolic_name")


@PROPERTY_LOOKUP
def property_lookup(c: list[Any]) -> PropertyLookup:
    key: Part = c[PROPERTY_LOOKUP.key]
    subject = c[PROPERTY_LOOKUP.subject]  # a node or a Paren: both have a span
    span = (subject.span[0], key.span[1])
    return PropertyLookup(
        span, subject.expr if type(subject) is Paren else subject, key.value, key.span
    )


SUBSCRIPT = rule("subscript", "subject=postfix_expr LSQB index=expr RSQB")


@SUBSCRIPT
def subscript(c: list[Any]) -> Subscript:
    return Subscript(span_of(c), ex(c[SUBSCRIPT.subject]), ex(c[SUBSCRIPT.index]))


SLICE = rule("slice", "subject=postfix_expr LSQB lo=expr? DOTDOT hi=expr? RSQB")


@SLICE
def slice_(c: list[Any]) -> Subscript:
    lo = ex(c[SLICE.lo]) if c[SLICE.lo] is not None else None
    hi = ex(c[SLICE.hi]) if c[SLICE.hi] is not None else None
    return Subscript(span_of(c), ex(c[SLICE.subject]), lo, hi, True)


# ---------------------------------------------------------------- calls


def _callee(callee: Any) -> str:
    name = dotted_name(ex(callee)) if type(callee) is not Paren else None
    if name is None:
        raise BuildError("expected a function name before '('", callee.span)
    return name


CALL = rule("call", "callee=postfix_expr LPAR distinct=DISTINCT? *args RPAR")


@CALL
def call(c: list[Any]) -> FunctionCall:
    name = _callee(c[CALL.callee])
    return FunctionCall(
        span_of(c), name, exprs(c[CALL.args]), distinct=c[CALL.distinct] is not None
    )


CALL_STAR = rule("call_star", "callee=postfix_expr LPAR STAR RPAR")


@CALL_STAR
def call_star(c: list[Any]) -> FunctionCall:
    return FunctionCall(span_of(c), _callee(c[CALL_STAR.callee]), [], star=True)


CALL_FILTER = rule(
    "call_filter",
    "callee=postfix_expr LPAR head=expr WHERE predicate=expr BAR? projection=expr? RPAR",
)


@CALL_FILTER
def call_filter(c: list[Any]) -> OtherExpr:
    # all/any/none/single(x IN l WHERE p), filter(x IN l WHERE p), extract(x IN l WHERE p | e)
    name = _callee(c[CALL_FILTER.callee]).lower()
    var, source = in_binding(c[CALL_FILTER.head], f"{name}(…)")
    parts: list[Node] = [var, source, ex(c[CALL_FILTER.predicate])]
    if c[CALL_FILTER.projection] is not None:
        parts.append(ex(c[CALL_FILTER.projection]))
    return OtherExpr(span_of(c), name, parts)


CALL_EXTRACT = rule("call_extract", "callee=postfix_expr LPAR head=expr BAR projection=expr RPAR")


@CALL_EXTRACT
def call_extract(c: list[Any]) -> OtherExpr:
    name = _callee(c[CALL_EXTRACT.callee]).lower()
    var, source = in_binding(c[CALL_EXTRACT.head], f"{name}(…)")
    return OtherExpr(span_of(c), name, [var, source, ex(c[CALL_EXTRACT.projection])])


CALL_REDUCE = rule(
    "call_reduce",
    "callee=postfix_expr LPAR init=expr COMMA head=expr BAR projection=expr RPAR",
)


@CALL_REDUCE
def call_reduce(c: list[Any]) -> OtherExpr:
    name = _callee(c[CALL_REDUCE.callee]).lower()
    init = ex(c[CALL_REDUCE.init])
    if not (isinstance(init, BinaryOp) and init.op == "=" and isinstance(init.left, Variable)):
        raise BuildError("expected `accumulator = initial value` in reduce(…)", init.span)
    var, source = in_binding(c[CALL_REDUCE.head], "reduce(…)")
    return OtherExpr(
        span_of(c), name, [init.left, init.right, var, source, ex(c[CALL_REDUCE.projection])]
    )
