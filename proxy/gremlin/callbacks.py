"""lark's child filters of the Gremlin grammar, read once into plain functions.

Every `x*` in `grammars/gremlin.lark` has a separator (`_DOT`, `_COMMA`) that lark leaves out,
so for those rules lark calls a generic child filter (a loop over a plan) that builds a Tree for
each helper rule (`__chain_star_0`, ...), which the parent's filter takes apart again. Here,
once per parser, each filter becomes one list expression with the same children in the same
order, and each helper rule's value is its children list itself (its parents splice that list),
when every rule that holds the helper splices it through a filter read here. The callbacks dict
is lark's own, shared by lark's parser and the lean driver: both run these functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lark.grammar import Rule
from lark.parse_tree_builder import ChildFilterLALR, ChildFilterLALR_NoPlaceholders

__all__ = ["read_filters"]

Callback = Callable[[list[Any]], Any]


def _plan(callback: Any) -> list[tuple[int, bool]] | None:
    """(child index, spliced) in order, for a filter that inserts no placeholder."""
    if type(callback) is ChildFilterLALR_NoPlaceholders:
        return [(i, bool(expand)) for i, expand in callback.to_include]
    if type(callback) is ChildFilterLALR and not callback.append_none:
        if any(nones for _, _, nones in callback.to_include):
            return None
        return [(i, bool(expand)) for i, expand, _ in callback.to_include]
    return None


def read_filters(callbacks: dict[Any, Any]) -> None:
    """Replace, in place, the filters this module reads (see the module docstring)."""
    rules = [(r, c) for r, c in callbacks.items() if isinstance(r, Rule)]
    plans = {r: _plan(c) for r, c in rules}
    helpers = {str(r.origin.name) for r, _ in rules if str(r.origin.name).startswith("__")}
    changed = True
    while changed:  # drop a helper any rule holds in a way not read here, until none is left
        changed = False
        for rule, _ in rules:
            plan = plans[rule]
            name = str(rule.origin.name)
            if name in helpers and (plan is None or _helper(plan) is None):
                helpers.discard(name)
                changed = True
            held = {str(s.name) for s in rule.expansion} & helpers
            if held and (plan is None or not _reads(rule, plan, helpers)):
                helpers -= held
                changed = True
    for rule, callback in rules:
        plan = plans[rule]
        if plan is None or not _reads(rule, plan, helpers):
            continue
        if str(rule.origin.name) in helpers:
            callbacks[rule] = _helper(plan)
        else:
            callbacks[rule] = _filtered(callback.node_builder, plan)


def _reads(rule: Rule, plan: list[tuple[int, bool]], helpers: set[str]) -> bool:
    """Every child the plan splices is a helper's list, and every helper it holds is spliced."""
    names = [str(s.name) for s in rule.expansion]
    spliced = {i for i, expand in plan if expand}
    return all((i in spliced) == (n in helpers) for i, n in enumerate(names) if i in spliced
               or n in helpers)  # fmt: skip


def _helper(plan: list[tuple[int, bool]]) -> Callback | None:
    """`__x: SEP item` -> [item]; `__x: __x SEP item` -> the list with item appended."""
    if len(plan) == 1 and not plan[0][1]:
        ((i, _),) = plan
        return lambda c: [c[i]]
    if len(plan) == 2 and plan[0] == (0, True) and not plan[1][1]:
        j = plan[1][0]

        def more(c: list[Any]) -> list[Any]:
            items: list[Any] = c[0]
            items.append(c[j])
            return items

        return more
    return None


def _filtered(build: Callback, plan: list[tuple[int, bool]]) -> Callback:
    """`build` called with the kept children, each spliced list's items in its place."""
    if plan == [(0, False), (2, False)]:
        return lambda c: build([c[0], c[2]])
    if plan == [(0, False), (1, True)]:
        return lambda c: build([c[0], *c[1]])
    if plan == [(0, False), (1, False), (2, True), (3, False)]:
        return lambda c: build([c[0], c[1], *c[2], c[3]])
    if plan == [(0, False), (1, False)]:
        return lambda c: build([c[0], c[1]])

    def general(c: list[Any]) -> Any:
        out: list[Any] = []
        for i, expand in plan:
            if expand:
                out += c[i]
            else:
                out.append(c[i])
        return build(out)

    return general
