"""lark's child filters, read once into plain functions for the lean LALR driver
(`query_guard.cypher.lalr_driver`).

With `maybe_placeholders` and `_rule` splicing, lark wraps a rule's callback in a child filter
that walks a plan per call: insert None for each absent `[optional]` part, splice the children
of each `_rule` Tree, copy the rest. Here each plan becomes one list expression (the same list,
built in one step): a plan that only inserts Nones picks the children and a None with one
`operator.itemgetter` call.

A `_rule` (and lark's `x*` / `x+` helper rules) exists only to be spliced into its parent: lark
builds it a Tree that the parent's filter takes apart. When every rule of such a name builds
lark's default Tree, the driver keeps its children list itself instead (`spliced_lists`), and
its parents splice that list (`lists`: the positions holding one).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import Any

from lark.grammar import Rule
from lark.parse_tree_builder import (
    ChildFilterLALR,
    ChildFilterLALR_NoPlaceholders,
    ExpandSingleChild,
)
from lark.tree import Tree

__all__ = ["PASS_THROUGH", "lean_callback", "spliced_lists"]

Callback = Callable[[list[Any]], Any]
_FILTERS = (ChildFilterLALR, ChildFilterLALR_NoPlaceholders)


def _same(children: list[Any]) -> list[Any]:
    """A spliced rule's value: its (fresh) children list."""
    return children


def _builder(callback: Any) -> Any:
    return callback.node_builder if type(callback) in _FILTERS else callback


def _default_tree(callback: Any, name: str) -> bool:
    build = _builder(callback)
    return (
        type(build) is functools.partial
        and build.func is Tree
        and build.args == (name,)
        and not build.keywords
    )


def spliced_lists(rules: Iterable[tuple[Rule, Any]]) -> frozenset[str]:
    """The `_rule` names whose value can be its children list: every rule of the name builds
    lark's default Tree through a known filter (or none), and every parent that splices it does
    so through a known filter."""
    pairs = list(rules)
    names = {str(r.origin.name) for r, _ in pairs if r.origin.name.startswith("_")}
    for rule, callback in pairs:
        name = str(rule.origin.name)
        if name in names and not _default_tree(callback, name):
            names.discard(name)
    for rule, callback in pairs:
        if type(callback) not in _FILTERS:
            names -= {str(s.name) for s in rule.expansion}
    return frozenset(names)


def lean_callback(
    callback: Callback, size: int, lists: frozenset[int] = frozenset(), as_list: bool = False
) -> Callback:
    """A function that calls `callback`'s builder with the list lark's filter would build
    from the `size` children of a reduction (a fresh list the caller does not keep). The
    children at `lists` are spliced lists, not Trees; with `as_list` the value is that list."""
    if type(callback) is ChildFilterLALR:
        plan = [(i, bool(expand), nones) for i, expand, nones in callback.to_include]
        tail = callback.append_none
    elif type(callback) is ChildFilterLALR_NoPlaceholders:
        plan = [(i, bool(expand), 0) for i, expand in callback.to_include]
        tail = 0
    else:
        return _same if as_list else callback
    build: Callback = _same if as_list else callback.node_builder
    if [i for i, _, _ in plan] != list(range(size)):  # a child left out: not in this grammar
        if lists or as_list:
            raise ValueError("a spliced list under a filter that leaves a child out")
        return callback
    expanded = [i for i, expand, _ in plan if expand]
    inserts = [(i, nones) for i, _, nones in plan if nones] + ([(size, tail)] if tail else [])
    if expanded:
        spliced = not inserts and _spliced(build, size, expanded, lists)
        return spliced or _planned(build, plan, tail, lists)
    if not inserts:
        return build  # lark's filter copies the list; the driver's list is already fresh
    if len(inserts) == 1:
        ((at, count),) = inserts
        nones = [None] * count
        if at == 0:
            return lambda c: build(nones + c)
        if at == size:
            return lambda c: build(c + nones)
    # the children in order, -1 (the None appended to them) for each placeholder
    picks: list[int] = []
    for i, _, count in plan:
        picks += [-1] * count + [i]
    pick = itemgetter(*picks, *[-1] * tail)

    def inserted(c: list[Any]) -> Any:
        c.append(None)
        return build(list(pick(c)))

    return inserted


def _spliced(
    build: Callback, size: int, expanded: list[int], lists: frozenset[int]
) -> Callback | None:
    if build is _same and lists == frozenset(expanded):  # a spliced list of spliced lists
        return _SPLICED_LISTS.get((size, tuple(expanded)))
    if size == 1 and 0 in lists and type(build) is ExpandSingleChild:  # `?rule: _spliced`
        inner = build.node_builder
        return lambda c: c[0][0] if len(c[0]) == 1 else inner(c[0])
    if size == 1:
        return (lambda c: build(c[0])) if 0 in lists else (lambda c: build(c[0].children))
    if size == 2 and expanded == [0] and 0 in lists:
        return lambda c: build([*c[0], c[1]])
    if size == 2 and expanded == [0]:
        return lambda c: build([*c[0].children, c[1]])
    if size == 2 and expanded == [1] and 1 in lists:
        return lambda c: build([c[0], *c[1]])
    if size == 2 and expanded == [1]:
        return lambda c: build([c[0], *c[1].children])
    return None


# a spliced list from spliced lists and values, by (size, positions of the lists): one list
# expression, with no call to `_same` to return it
_SPLICED_LISTS: dict[tuple[int, tuple[int, ...]], Callback] = {
    (1, (0,)): lambda c: c[0],  # PASS_THROUGH
    (2, (0,)): lambda c: [*c[0], c[1]],
    (2, (1,)): lambda c: [c[0], *c[1]],
}

# the callback of a one-child rule whose value is its child's (a spliced list of one spliced
# list): a run of one-value reductions need not call it
PASS_THROUGH = _SPLICED_LISTS[1, (0,)]


def _planned(
    build: Callback, plan: list[tuple[int, bool, int]], tail: int, lists: frozenset[int]
) -> Callback:
    """lark's filter loop, for the plans no expression above covers."""
    steps = [(i, (2 if i in lists else 1) if expand else 0, nones) for i, expand, nones in plan]

    def filtered(c: list[Any]) -> Any:
        out: list[Any] = []
        for i, expand, nones in steps:
            if nones:
                out += [None] * nones
            if expand == 2:
                out += c[i]
            elif expand:
                out += c[i].children
            else:
                out.append(c[i])
        if tail:
            out += [None] * tail
        return build(out)

    return filtered
