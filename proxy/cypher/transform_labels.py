"""The label-expression family of the lark-callbacks -> typed AST builder (assembled in
builders.py): `:A:B`, `:A|B`, `:A&B`, `:!A`, `:%`, `:$(expr)`, and label checks in expressions.
"""

from __future__ import annotations

from typing import Any

from query_guard.cypher.ast import (
    LabelAnd,
    LabelExpr,
    LabelName,
    LabelNot,
    LabelOr,
    LabelWildcard,
)
from query_guard.cypher.ast_dynamic import LabelDynamic
from query_guard.cypher.build_children import Rules
from query_guard.cypher.build_parts import BuildError, ex, span_of, tok_span, unescape_name

RULES = Rules()
rule = RULES.rule


LABEL_NAME = rule("label_name", "name=NAME|ESCAPED_NAME")


@LABEL_NAME
def label_name(c: list[Any]) -> LabelName:
    tok = c[LABEL_NAME.name]
    span = (tok.start_pos, tok.end_pos)
    name = tok.value
    return LabelName(span, unescape_name(name) if name[0] == "`" else name, span)


LABEL_WILDCARD = rule("label_wildcard", "PERCENT")


@LABEL_WILDCARD
def label_wildcard(c: list[Any]) -> LabelWildcard:
    return LabelWildcard(tok_span(c[LABEL_WILDCARD.percent]))


LABEL_NEGATION = rule("label_negation", "BANG operand=label_not")


@LABEL_NEGATION
def label_negation(c: list[Any]) -> LabelNot:
    return LabelNot(span_of(c), c[LABEL_NEGATION.operand])


LABEL_DYNAMIC = rule("label_dynamic", "opener=DYNAMIC_OPEN|PARAM *lpar expr RPAR")


@LABEL_DYNAMIC
def label_dynamic(c: list[Any]) -> LabelDynamic:
    """`$(expr)` / `$all(expr)` / `$any(expr)`: a label or type named when the query runs."""
    opener = c[LABEL_DYNAMIC.opener]
    mode = "all" if opener.type == "DYNAMIC_OPEN" else opener.value[1:].lower()
    if mode not in ("all", "any"):
        raise BuildError(
            f"expected `$(…)`, `$all(…)` or `$any(…)` for a dynamic label, not `{opener}(`",
            tok_span(opener),
        )
    return LabelDynamic(span_of(c), mode, ex(c[LABEL_DYNAMIC.expr]))


LABEL_GROUP = rule("label_group", "LPAR label_or RPAR")


@LABEL_GROUP
def label_group(c: list[Any]) -> LabelExpr:
    return c[LABEL_GROUP.label_or]


LABEL_AND = rule("label_and", "*items")


@LABEL_AND
def label_and(c: list[Any]) -> LabelExpr:
    items = [x for x in c[LABEL_AND.items] if isinstance(x, LabelExpr)]
    return items[0] if len(items) == 1 else LabelAnd(span_of(c), items)


def _label_or(c: list[Any]) -> LabelExpr:
    items = [x for x in c if isinstance(x, LabelExpr)]
    return items[0] if len(items) == 1 else LabelOr(span_of(c), items)


rule("label_or", "*items")(_label_or)
rule("check_or", "*items")(_label_or)


def _node_labels(c: list[Any]) -> LabelExpr:
    """`:A:B` -> LabelAnd; a single `:A…` keeps its expression with the colon in its span."""
    if len(c) == 2:  # `:A…` / `IS A…` (most labels): one expression after the word
        word, only = c
        only.span = (word.start_pos, only.span[1])  # a LabelName's own object: only this holds it
        return only  # type: ignore[no-any-return]
    items = [x for x in c if isinstance(x, LabelExpr)]
    if len(items) > 1:
        return LabelAnd(span_of(c), items)
    (only,) = items
    if isinstance(only, LabelName):
        return LabelName(span_of(c), only.name, only.name_span)
    only.span = span_of(c)
    return only


rule("node_labels", "COLON|IS *items")(_node_labels)
rule("check_labels", "COLON *items")(_node_labels)
