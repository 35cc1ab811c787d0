"""Expression half of the lark-callbacks -> typed AST builder (see transform.py): operator
precedence (`_Pratt`) and the expression rules' callbacks; shared pieces in build_parts.py.

The parser runs with `keep_all_tokens=True` and this builder as its inline transformer, so each
callback receives every token of its rule (punctuation included) and computes the node's span
from its first and last child; `[optional]` parts arrive as None placeholders.
"""

from __future__ import annotations

from typing import Any

from lark import Token

from query_guard.cypher.ast import (
    BinaryOp,
    CaseExpr,
    FunctionCall,
    LabelAnd,
    LabelCheck,
    LabelExpr,
    LabelName,
    LabelNot,
    LabelOr,
    LabelWildcard,
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
from query_guard.cypher.ast_dynamic import LabelDynamic
from query_guard.cypher.build_parts import (
    BracedMapProjection,
    BuildError,
    Paren,
    Part,
    dotted_name,
    end_of,
    ex,
    exprs,
    has,
    in_binding,
    parse_int,
    pattern_of,
    span_of,
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


class ExprBuilder:
    """Callbacks for the expression rules of grammars/cypher.lark."""

    # ---------------------------------------------------------------- names and atoms

    def symbolic_name(self, c: list[Any]) -> Part:
        tok = c[0]
        return Part("name", unescape_name(tok.value), tok_span(tok))

    def variable(self, c: list[Any]) -> Variable:
        tok = c[0]
        return Variable((tok.start_pos, tok.end_pos), unescape_name(tok.value))

    def keyword_variable(self, c: list[Any]) -> Variable:
        return Variable(tok_span(c[0]), c[0].value)

    def parameter(self, c: list[Any]) -> Parameter:
        return Parameter(tok_span(c[0]), unescape_name(c[0].value[1:]))

    def string(self, c: list[Any]) -> Literal:
        return Literal(tok_span(c[0]), "string", unescape_string(c[0].value))

    def integer(self, c: list[Any]) -> Literal:
        return Literal(tok_span(c[0]), "integer", parse_int(c[0].value))

    def float(self, c: list[Any]) -> Literal:
        return Literal(tok_span(c[0]), "float", float(c[0].value))

    def true(self, c: list[Any]) -> Literal:
        return Literal(tok_span(c[0]), "boolean", True)

    def false(self, c: list[Any]) -> Literal:
        return Literal(tok_span(c[0]), "boolean", False)

    def null(self, c: list[Any]) -> Literal:
        return Literal(tok_span(c[0]), "null", None)

    def paren_expr(self, c: list[Any]) -> Paren:
        return Paren(ex(c[1]), span_of(c))

    # ---------------------------------------------------------------- operators

    def expr(self, c: list[Any]) -> Any:
        if len(c) == 1:
            return c[0]
        return _Pratt(c).parse(0)[0]

    def label_check(self, c: list[Any]) -> LabelCheck:
        return LabelCheck(span_of(c), ex(c[0]), c[1])

    def property_lookup(self, c: list[Any]) -> PropertyLookup:
        key: Part = c[2]
        return PropertyLookup(span_of(c), ex(c[0]), key.value, key.span)

    def subscript(self, c: list[Any]) -> Subscript:
        return Subscript(span_of(c), ex(c[0]), ex(c[2]))

    def slice(self, c: list[Any]) -> Subscript:
        lo = ex(c[2]) if c[2] is not None else None
        hi = ex(c[4]) if c[4] is not None else None
        return Subscript(span_of(c), ex(c[0]), lo, hi, True)

    # ---------------------------------------------------------------- calls

    def _callee(self, callee: Any) -> str:
        name = dotted_name(ex(callee)) if type(callee) is not Paren else None
        if name is None:
            raise BuildError("expected a function name before '('", callee.span)
        return name

    def call(self, c: list[Any]) -> FunctionCall:
        name = self._callee(c[0])
        return FunctionCall(span_of(c), name, exprs(c[2:]), distinct=has(c, "DISTINCT"))

    def call_star(self, c: list[Any]) -> FunctionCall:
        return FunctionCall(span_of(c), self._callee(c[0]), [], star=True)

    def call_filter(self, c: list[Any]) -> OtherExpr:
        # all/any/none/single(x IN l WHERE p), filter(x IN l WHERE p), extract(x IN l WHERE p | e)
        name = self._callee(c[0]).lower()
        var, source = in_binding(c[2], f"{name}(…)")
        parts: list[Node] = [var, source, ex(c[4])]
        if c[6] is not None:
            parts.append(ex(c[6]))
        return OtherExpr(span_of(c), name, parts)

    def call_extract(self, c: list[Any]) -> OtherExpr:
        name = self._callee(c[0]).lower()
        var, source = in_binding(c[2], f"{name}(…)")
        return OtherExpr(span_of(c), name, [var, source, ex(c[4])])

    def call_reduce(self, c: list[Any]) -> OtherExpr:
        name = self._callee(c[0]).lower()
        init = ex(c[2])
        if not (isinstance(init, BinaryOp) and init.op == "=" and isinstance(init.left, Variable)):
            raise BuildError("expected `accumulator = initial value` in reduce(…)", init.span)
        var, source = in_binding(c[4], "reduce(…)")
        return OtherExpr(span_of(c), name, [init.left, init.right, var, source, ex(c[6])])

    # ---------------------------------------------------------------- lists and maps

    def list_empty(self, c: list[Any]) -> ListLiteral:
        return ListLiteral(span_of(c), [])

    def list_items(self, c: list[Any]) -> ListLiteral | ListComprehension:
        items = exprs(c)
        if len(items) == 1:
            head = items[0]
            if isinstance(head, BinaryOp) and head.op == "IN" and isinstance(head.left, Variable):
                return ListComprehension(span_of(c), head.left, head.right, None, None)
        return ListLiteral(span_of(c), items)

    def _comprehension(
        self, c: list[Any], head: Any, where: Any, projection: Any
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

    def list_filter(self, c: list[Any]) -> ListComprehension | PatternComprehension:
        return self._comprehension(c, c[1], c[3], c[5])

    def list_extract(self, c: list[Any]) -> ListComprehension | PatternComprehension:
        return self._comprehension(c, c[1], None, c[3])

    def map_entry(self, c: list[Any]) -> Part:
        key: Part = c[0]
        return Part("entry", (key.value, key.span, ex(c[2])), span_of(c))

    def map_literal(self, c: list[Any]) -> MapLiteral:
        entries = [p.value for p in c if type(p) is Part]
        return MapLiteral(span_of(c), entries)

    def proj_property(self, c: list[Any]) -> Part:
        return Part("item", ("property", c[1].value), span_of(c))

    def proj_all(self, c: list[Any]) -> Part:
        return Part("item", ("all", "*"), span_of(c))

    def proj_variable(self, c: list[Any]) -> Part:
        return Part("item", ("variable", c[0].name), span_of(c))

    def proj_literal(self, c: list[Any]) -> Part:
        return Part("item", ("literal", c[0].value, ex(c[2])), c[0].span)

    def map_projection(self, c: list[Any]) -> MapProjection:
        parts = [p for p in c if type(p) is Part]
        key_spans = [p.span for p in parts if p.value[0] == "literal"]
        items = [p.value for p in parts]
        return BracedMapProjection(span_of(c), c[0], items, c[1].start_pos, key_spans)

    # ---------------------------------------------------------------- CASE, subqueries

    def case_alt(self, c: list[Any]) -> Part:
        return Part("when", (ex(c[1]), ex(c[3])), span_of(c))

    def case_expr(self, c: list[Any]) -> CaseExpr:
        subject = ex(c[1]) if c[1] is not None else None
        alternatives = [p.value for p in c if type(p) is Part]
        default = ex(c[-2]) if c[-2] is not None else None
        return CaseExpr(span_of(c), subject, alternatives, default)

    def subquery_full(self, c: list[Any]) -> SubqueryExpr:
        return SubqueryExpr(span_of(c), c[0].value.upper(), c[2], [], None)

    def subquery_pattern(self, c: list[Any]) -> SubqueryExpr:
        where = ex(c[3]) if c[3] is not None else None
        return SubqueryExpr(span_of(c), c[0].value.upper(), None, c[2].value, where)

    # ---------------------------------------------------------------- label expressions

    def label_name(self, c: list[Any]) -> LabelName:
        span = tok_span(c[0])
        return LabelName(span, unescape_name(c[0].value), span)

    def label_wildcard(self, c: list[Any]) -> LabelWildcard:
        return LabelWildcard(tok_span(c[0]))

    def label_negation(self, c: list[Any]) -> LabelNot:
        return LabelNot(span_of(c), c[1])

    def label_dynamic(self, c: list[Any]) -> LabelDynamic:
        """`$(expr)` / `$all(expr)` / `$any(expr)`: a label or type named when the query runs."""
        opener = c[0]
        mode = "all" if opener.type == "DYNAMIC_OPEN" else opener.value[1:].lower()
        if mode not in ("all", "any"):
            raise BuildError(
                f"expected `$(…)`, `$all(…)` or `$any(…)` for a dynamic label, not `{opener}(`",
                tok_span(opener),
            )
        return LabelDynamic(span_of(c), mode, ex(c[-2]))

    def label_group(self, c: list[Any]) -> LabelExpr:
        return c[1]

    def label_and(self, c: list[Any]) -> LabelExpr:
        items = [x for x in c if isinstance(x, LabelExpr)]
        return items[0] if len(items) == 1 else LabelAnd(span_of(c), items)

    def label_or(self, c: list[Any]) -> LabelExpr:
        items = [x for x in c if isinstance(x, LabelExpr)]
        return items[0] if len(items) == 1 else LabelOr(span_of(c), items)

    check_or = label_or

    def node_labels(self, c: list[Any]) -> LabelExpr:
        """`:A:B` -> LabelAnd; a single `:A…` keeps its expression with the colon in its span."""
        items = [x for x in c if isinstance(x, LabelExpr)]
        if len(items) > 1:
            return LabelAnd(span_of(c), items)
        only = items[0]
        if isinstance(only, LabelName):
            return LabelName(span_of(c), only.name, only.name_span)
        only.span = span_of(c)
        return only

    check_labels = node_labels
