"""The label-expression family of the lark-callbacks -> typed AST builder (assembled in
builders.py): `:A:B`, `:A|B`, `:A&B`, `:!A`, `:%`, `:$(expr)`, and label checks in expressions.
"""

from __future__ import annotations

from query_guard.cypher.ast import (
    LabelAnd,
    LabelExpr,
    LabelName,
    LabelNot,
    LabelOr,
    LabelWildcard,
)
from query_guard.cypher.ast_dynamic import LabelDynamic
from query_guard.cypher.build_children import Children, Rules
from query_guard.cypher.build_parts import BuildError, ex, tok_span, unescape_name

RULES = Rules()
rule = RULES.rule


@rule("label_name", "name=NAME|ESCAPED_NAME")
def label_name(c: Children) -> LabelName:
    span = tok_span(c.name)
    return LabelName(span, unescape_name(c.name.value), span)


@rule("label_wildcard", "PERCENT")
def label_wildcard(c: Children) -> LabelWildcard:
    return LabelWildcard(tok_span(c.percent))


@rule("label_negation", "BANG operand=label_not")
def label_negation(c: Children) -> LabelNot:
    return LabelNot(c.span, c.operand)


@rule("label_dynamic", "opener=DYNAMIC_OPEN|PARAM *lpar expr RPAR")
def label_dynamic(c: Children) -> LabelDynamic:
    """`$(expr)` / `$all(expr)` / `$any(expr)`: a label or type named when the query runs."""
    opener = c.opener
    mode = "all" if opener.type == "DYNAMIC_OPEN" else opener.value[1:].lower()
    if mode not in ("all", "any"):
        raise BuildError(
            f"expected `$(…)`, `$all(…)` or `$any(…)` for a dynamic label, not `{opener}(`",
            tok_span(opener),
        )
    return LabelDynamic(c.span, mode, ex(c.expr))


@rule("label_group", "LPAR label_or RPAR")
def label_group(c: Children) -> LabelExpr:
    return c.label_or


@rule("label_and", "*items")
def label_and(c: Children) -> LabelExpr:
    items = [x for x in c.items if isinstance(x, LabelExpr)]
    return items[0] if len(items) == 1 else LabelAnd(c.span, items)


def _label_or(c: Children) -> LabelExpr:
    items = [x for x in c.items if isinstance(x, LabelExpr)]
    return items[0] if len(items) == 1 else LabelOr(c.span, items)


RULES.rule("label_or", "*items")(_label_or)
RULES.rule("check_or", "*items")(_label_or)


def _node_labels(c: Children) -> LabelExpr:
    """`:A:B` -> LabelAnd; a single `:A…` keeps its expression with the colon in its span."""
    items = [x for x in c.items if isinstance(x, LabelExpr)]
    if len(items) > 1:
        return LabelAnd(c.span, items)
    (only,) = items
    if isinstance(only, LabelName):
        return LabelName(c.span, only.name, only.name_span)
    only.span = c.span
    return only


RULES.rule("node_labels", "COLON *items")(_node_labels)
RULES.rule("check_labels", "COLON *items")(_node_labels)
