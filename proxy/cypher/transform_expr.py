"""The expression family of the lark-callbacks -> typed AST builder (assembled in builders.py):
operator precedence (`_Pratt`) and the expression rules' callbacks; label expressions are in
transform_labels.py, shared pieces in build_parts.py.

The parser runs with `keep_all_tokens=True`, so each callback receives every token of its rule
(punctuation included), read by the names of its declared shape (build_children.py), and
computes the node's span from its first and last child; `[optional]` parts arrive as None.
"""

from __future__ import annotations

from typing import Any

from lark import Token

from query_guard.cypher.ast import (
    BinaryOp,
    CaseExpr,
    FunctionCall,
    LabelCheck,
    ListComprehension,
    ListLiteral,
    Literal,
    MapLiteral,
    MapProjection,
    Node,
    OtherExpr,
    Parameter,
    PatternComprehension,
    PropertyLookup,
    SubqueryExpr,
    Subscript,
    UnaryOp,
    Variable,
)
from query_guard.cypher.build_children import Children, Rules
from query_guard.cypher.build_parts import (
    BracedMapProjection,
    BuildError,
    Paren,
    Part,
    dotted_name,
    end_of,
    ex,
    exprs,
    in_binding,
    parse_int,
    pattern_of,
    start_of,
    tok_span,
    unescape_name,
    unescape_string,
)


def _op_text(toks: list[Token]) -> str:
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
        else:
            left, start, end = ex(item), start_of(item), end_of(item)
        while self.pos < len(items):
            tok = items[self.pos]
            if tok.type == "IS":
                if min_power > _NULL_POWER:
                    break
                negated = items[self.pos + 1].type == "NOT"
                end = items[self.pos + (2 if negated else 1)].end_pos
                self.pos += 3 if negated else 2
                left = UnaryOp((start, end), "IS NOT NULL" if negated else "IS NULL", left)
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
            op = _op_text([tok, last] if last is not tok else [tok])
            left = BinaryOp((start, end), op, left, right, (tok.start_pos, last.end_pos))
        return left, start, end


RULES = Rules()
rule = RULES.rule

# ---------------------------------------------------------------- names and atoms


@rule("symbolic_name", "name=NAME|ESCAPED_NAME")
def symbolic_name(c: Children) -> Part:
    tok = c.name
    return Part("name", unescape_name(tok.value), tok_span(tok))


@rule("variable", "name=NAME|ESCAPED_NAME")
def variable(c: Children) -> Variable:
    tok = c.name
    return Variable((tok.start_pos, tok.end_pos), unescape_name(tok.value))


@rule("keyword_variable", "word=COUNT|EXISTS|COLLECT")
def keyword_variable(c: Children) -> Variable:
    return Variable(tok_span(c.word), c.word.value)


@rule("parameter", "PARAM")
def parameter(c: Children) -> Parameter:
    return Parameter(tok_span(c.param), unescape_name(c.param.value[1:]))


@rule("string", "STRING")
def string(c: Children) -> Literal:
    return Literal(tok_span(c.string), "string", unescape_string(c.string.value))


@rule("integer", "INTEGER")
def integer(c: Children) -> Literal:
    return Literal(tok_span(c.integer), "integer", parse_int(c.integer.value))


@rule("float", "FLOAT")
def float_literal(c: Children) -> Literal:
    return Literal(tok_span(c.float), "float", float(c.float.value))


@rule("true", "TRUE")
def true(c: Children) -> Literal:
    return Literal(tok_span(c.true), "boolean", True)


@rule("false", "FALSE")
def false(c: Children) -> Literal:
    return Literal(tok_span(c.false), "boolean", False)


@rule("null", "NULL")
def null(c: Children) -> Literal:
    return Literal(tok_span(c.null), "null", None)


@rule("paren_expr", "LPAR expr RPAR")
def paren_expr(c: Children) -> Paren:
    return Paren(ex(c.expr), c.span)


# ---------------------------------------------------------------- operators


@rule("expr", "*items")
def expr(c: Children) -> Any:
    items = c.items
    if len(items) == 1:
        (only,) = items
        return only
    return _Pratt(items).parse(0)[0]


@rule("label_check", "subject=postfix_expr labels=check_labels")
def label_check(c: Children) -> LabelCheck:
    return LabelCheck(c.span, ex(c.subject), c.labels)


@rule("property_lookup", "subject=postfix_expr DOT key=symbolic_name")
def property_lookup(c: Children) -> PropertyLookup:
    key: Part = c.key
    return PropertyLookup(c.span, ex(c.subject), key.value, key.span)


@rule("subscript", "subject=postfix_expr LSQB index=expr RSQB")
def subscript(c: Children) -> Subscript:
    return Subscript(c.span, ex(c.subject), ex(c.index))


@rule("slice", "subject=postfix_expr LSQB lo=expr? DOTDOT hi=expr? RSQB")
def slice_(c: Children) -> Subscript:
    lo = ex(c.lo) if c.lo is not None else None
    hi = ex(c.hi) if c.hi is not None else None
    return Subscript(c.span, ex(c.subject), lo, hi, True)


# ---------------------------------------------------------------- calls


def _callee(callee: Any) -> str:
    name = dotted_name(ex(callee)) if type(callee) is not Paren else None
    if name is None:
        raise BuildError("expected a function name before '('", callee.span)
    return name


@rule("call", "callee=postfix_expr LPAR distinct=DISTINCT? *args RPAR")
def call(c: Children) -> FunctionCall:
    name = _callee(c.callee)
    return FunctionCall(c.span, name, exprs(c.args), distinct=c.distinct is not None)


@rule("call_star", "callee=postfix_expr LPAR STAR RPAR")
def call_star(c: Children) -> FunctionCall:
    return FunctionCall(c.span, _callee(c.callee), [], star=True)


@rule(
    "call_filter",
    "callee=postfix_expr LPAR head=expr WHERE predicate=expr BAR? projection=expr? RPAR",
)
def call_filter(c: Children) -> OtherExpr:
    # all/any/none/single(x IN l WHERE p), filter(x IN l WHERE p), extract(x IN l WHERE p | e)
    name = _callee(c.callee).lower()
    var, source = in_binding(c.head, f"{name}(…)")
    parts: list[Node] = [var, source, ex(c.predicate)]
    if c.projection is not None:
        parts.append(ex(c.projection))
    return OtherExpr(c.span, name, parts)


@rule("call_extract", "callee=postfix_expr LPAR head=expr BAR projection=expr RPAR")
def call_extract(c: Children) -> OtherExpr:
    name = _callee(c.callee).lower()
    var, source = in_binding(c.head, f"{name}(…)")
    return OtherExpr(c.span, name, [var, source, ex(c.projection)])


@rule(
    "call_reduce",
    "callee=postfix_expr LPAR init=expr COMMA head=expr BAR projection=expr RPAR",
)
def call_reduce(c: Children) -> OtherExpr:
    name = _callee(c.callee).lower()
    init = ex(c.init)
    if not (isinstance(init, BinaryOp) and init.op == "=" and isinstance(init.left, Variable)):
        raise BuildError("expected `accumulator = initial value` in reduce(…)", init.span)
    var, source = in_binding(c.head, "reduce(…)")
    return OtherExpr(c.span, name, [init.left, init.right, var, source, ex(c.projection)])


# ---------------------------------------------------------------- lists and maps


@rule("list_empty", "LSQB RSQB")
def list_empty(c: Children) -> ListLiteral:
    return ListLiteral(c.span, [])


@rule("list_items", "LSQB *items RSQB")
def list_items(c: Children) -> ListLiteral | ListComprehension:
    items = exprs(c.items)
    if len(items) == 1:
        (head,) = items
        if isinstance(head, BinaryOp) and head.op == "IN" and isinstance(head.left, Variable):
            return ListComprehension(c.span, head.left, head.right, None, None)
    return ListLiteral(c.span, items)


def _comprehension(
    c: Children, head: Any, where: Any, projection: Any
) -> ListComprehension | PatternComprehension:
    where = ex(where) if where is not None else None
    projection = ex(projection) if projection is not None else None
    pattern = pattern_of(head)
    if pattern is not None:
        if projection is None:
            raise BuildError("a pattern comprehension needs `| expression`", c.span)
        return PatternComprehension(c.span, pattern[0], pattern[1], where, projection)
    var, source = in_binding(head, "a list comprehension")
    return ListComprehension(c.span, var, source, where, projection)


@rule("list_filter", "LSQB head=expr WHERE predicate=expr BAR? projection=expr? RSQB")
def list_filter(c: Children) -> ListComprehension | PatternComprehension:
    return _comprehension(c, c.head, c.predicate, c.projection)


@rule("list_extract", "LSQB head=expr BAR projection=expr RSQB")
def list_extract(c: Children) -> ListComprehension | PatternComprehension:
    return _comprehension(c, c.head, None, c.projection)


@rule("map_entry", "key=symbolic_name COLON value=expr")
def map_entry(c: Children) -> Part:
    key: Part = c.key
    return Part("entry", (key.value, key.span, ex(c.value)), c.span)


@rule("map_literal", "LBRACE *entries RBRACE")
def map_literal(c: Children) -> MapLiteral:
    return MapLiteral(c.span, [p.value for p in c.entries if type(p) is Part])


@rule("proj_property", "DOT key=symbolic_name")
def proj_property(c: Children) -> Part:
    return Part("item", ("property", c.key.value), c.span)


@rule("proj_all", "DOT STAR")
def proj_all(c: Children) -> Part:
    return Part("item", ("all", "*"), c.span)


@rule("proj_variable", "variable")
def proj_variable(c: Children) -> Part:
    return Part("item", ("variable", c.variable.name), c.span)


@rule("proj_literal", "key=symbolic_name COLON value=expr")
def proj_literal(c: Children) -> Part:
    return Part("item", ("literal", c.key.value, ex(c.value)), c.key.span)


@rule("map_projection", "variable LBRACE *items RBRACE")
def map_projection(c: Children) -> MapProjection:
    parts = [p for p in c.items if type(p) is Part]
    key_spans = [p.span for p in parts if p.value[0] == "literal"]
    items = [p.value for p in parts]
    return BracedMapProjection(c.span, c.variable, items, c.lbrace.start_pos, key_spans)


# ---------------------------------------------------------------- CASE, subqueries


@rule("case_alt", "WHEN condition=expr THEN result=expr")
def case_alt(c: Children) -> Part:
    return Part("when", (ex(c.condition), ex(c.result)), c.span)


@rule("case_expr", "CASE subject=expr? *alternatives ELSE? default=expr? END")
def case_expr(c: Children) -> CaseExpr:
    subject = ex(c.subject) if c.subject is not None else None
    alternatives = [p.value for p in c.alternatives if type(p) is Part]
    default = ex(c.default) if c.default is not None else None
    return CaseExpr(c.span, subject, alternatives, default)


@rule("subquery_full", "kind=EXISTS|COUNT|COLLECT LBRACE query RBRACE")
def subquery_full(c: Children) -> SubqueryExpr:
    return SubqueryExpr(c.span, c.kind.value.upper(), c.query, [], None)


@rule("subquery_pattern", "kind=EXISTS|COUNT|COLLECT LBRACE pattern where? RBRACE")
def subquery_pattern(c: Children) -> SubqueryExpr:
    where = ex(c.where) if c.where is not None else None
    return SubqueryExpr(c.span, c.kind.value.upper(), None, c.pattern.value, where)
