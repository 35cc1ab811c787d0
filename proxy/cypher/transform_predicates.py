"""The postfix predicates of the lark-callbacks -> typed AST builder (assembled in builders.py):
`IS [NOT] NULL`, the type predicates of Neo4j 5 (`x IS :: INTEGER`, `x IS NOT TYPED STRING`,
`x :: LIST<STRING NOT NULL>`, unions `STRING | INTEGER`), `IS [NOT] [NFC|NFD|NFKC|NFKD]
NORMALIZED`, the GQL label check `n IS Person`, and a simple CASE's extended alternatives
(`CASE x WHEN 1, 2 THEN … WHEN > 3 THEN … WHEN IS NULL THEN …`).

Each `is_suffix` is a Part the expression builder (`transform_expr._Pratt`) applies to the
operand before it, at the precedence of `IS NULL`: a UnaryOp whose op is the predicate's
canonical text (`IS NULL`, `IS NOT :: INTEGER | FLOAT`, `IS NFC NORMALIZED`; `TYPED` and a
bare `::` read as `IS ::`), or a LabelCheck for `IS Person`. A simple CASE's extended `WHEN`
is a CaseWhen (ast_case.py).
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token

from query_guard.cypher.ast import Expr, LabelCheck, LabelExpr, UnaryOp
from query_guard.cypher.ast_case import CaseWhen
from query_guard.cypher.build_children import Rules
from query_guard.cypher.build_parts import BuildError, Part, end_of, ex, parse_int, span_of

RULES = Rules()
rule = RULES.rule

_SPACE = re.compile(r"\s+")


def _words(tokens: list[Any]) -> str:
    return " ".join(t.value.upper() for t in tokens if isinstance(t, Token))


VALUE_TYPE_TERM = rule("value_type_term", "*parts")
_ATTACHED = frozenset(["GT", "BANG", "LPAR", "INTEGER", "RPAR"])  # written without a space


@VALUE_TYPE_TERM
def value_type_term(c: list[Any]) -> Part:
    """`LOCAL DATETIME`, `INTEGER NOT NULL`, `LIST<…>`, `ANY VALUE<…>`, `TIME WITH TIME ZONE`,
    `INTEGER!`, `VECTOR<INTEGER8>(3)` as canonical text."""
    text: list[str] = []
    for part in c[VALUE_TYPE_TERM.parts]:
        if part is None:
            continue
        if isinstance(part, Part):
            text[-1] += part.value
        elif part.type == "TYPE_OPEN":
            text.append(_SPACE.sub(" ", part.value).upper().replace(" <", "<"))
        elif part.type in _ATTACHED:
            text[-1] += str(parse_int(part.value)) if part.type == "INTEGER" else part.value
        else:
            text.append(part.value.upper())
    return Part("type", " ".join(text), span_of(c))


VALUE_TYPE = rule("value_type", "*terms")


@VALUE_TYPE
def value_type(c: list[Any]) -> Part:
    terms = [t.value for t in c[VALUE_TYPE.terms] if isinstance(t, Part)]
    return Part("type", " | ".join(terms), span_of(c))


IS_SUFFIX = rule("is_suffix", "*parts")


@IS_SUFFIX
def is_suffix(c: list[Any]) -> Part:
    """A Part "suffix" holding a function of the operand -> the predicate node."""
    parts = c[IS_SUFFIX.parts]
    span = span_of(c)
    payload = parts[-1]
    negated = any(isinstance(p, Token) and p.type == "NOT" for p in parts[:2])
    if isinstance(payload, LabelExpr):
        return Part("suffix", ("label", payload), span)
    if isinstance(payload, Part):  # a type predicate
        op = f"IS {'NOT ' if negated else ''}:: {payload.value}"
    else:  # IS [NOT] NULL, IS [NOT] [form] NORMALIZED
        op = _words(parts)
    return Part("suffix", (op, None), span)


def apply_suffix(suffix: Part, operand: Expr, start: int) -> Expr:
    """The predicate `suffix` (an is_suffix Part) applied to `operand`, which starts at `start`."""
    op, labels = suffix.value
    span = (start, suffix.span[1])
    if op == "label":
        return LabelCheck(span, operand, labels)
    return UnaryOp(span, op, operand)


CASE_PARTIAL = rule("case_partial", "*parts")


@CASE_PARTIAL
def case_partial(c: list[Any]) -> CaseWhen:
    """`WHEN > 3`: CaseWhen(">", [3]); `WHEN IS NULL`: CaseWhen("IS NULL", [])."""
    parts = c[CASE_PARTIAL.parts]
    span = span_of(c)
    if isinstance(parts[0], Part):  # an is_suffix
        op, labels = parts[0].value
        if op == "label":
            return CaseWhen(span, "IS", [labels])
        return CaseWhen(span, op, [])
    op = " ".join("<>" if t.type == "NEQ_BANG" else t.value.upper() for t in parts[:-1])
    return CaseWhen(span, op, [ex(parts[-1])])


CASE_ALT = rule("case_alt", "WHEN *conditions THEN result=expr")


@CASE_ALT
def case_alt(c: list[Any]) -> Part:
    conditions = [ex(x) for x in c[CASE_ALT.conditions] if not isinstance(x, Token)]
    if len(conditions) == 1:
        condition = conditions[0]
    else:
        span = (conditions[0].span[0], end_of(conditions[-1]))
        condition = CaseWhen(span, "ANY OF", list(conditions))
    return Part("when", (condition, ex(c[CASE_ALT.result])), span_of(c))


def check_case(subject: Expr | None, alternatives: list[tuple[Expr, Expr]]) -> None:
    """A generic CASE (no subject) has no extended alternatives."""
    if subject is not None:
        return
    for condition, _ in alternatives:
        if isinstance(condition, CaseWhen):
            what = "several values" if condition.op == "ANY OF" else f"`{condition.op} …`"
            raise BuildError(
                f"{what} compare with a CASE's subject: this CASE has none",
                condition.span,
            )
