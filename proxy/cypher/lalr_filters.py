"""lark's child filters, read once into plain functions for the lean LALR driver
(`query_guard.cypher.lalr_driver`).

With `maybe_placeholders` and `_rule` splicing, lark wraps a rule's callback in a child filter
that walks a plan per call: insert None for each absent `[optional]` part, splice the children
of each `_rule` Tree, copy the rest. The plans the Cypher grammar compiles to are few and short;
each common one becomes one list expression here (the same list, built in one step). A plan not
listed keeps lark's filter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lark.parse_tree_builder import ChildFilterLALR, ChildFilterLALR_NoPlaceholders

__all__ = ["lean_callback"]

Callback = Callable[[list[Any]], Any]


def lean_callback(callback: Callback, size: int) -> Callback:
    """A function that calls `callback`'s builder with the list lark's filter would build
    from the `size` children of a reduction (a fresh list the caller does not keep)."""
    if type(callback) is ChildFilterLALR:
        plan = [(i, bool(expand), nones) for i, expand, nones in callback.to_include]
        tail = callback.append_none
    elif type(callback) is ChildFilterLALR_NoPlaceholders:
        plan = [(i, bool(expand), 0) for i, expand in callback.to_include]
        tail = 0
    else:
        return callback
    build: Callback = callback.node_builder
    if [i for i, _, _ in plan] != list(range(size)):
        return callback  # a child left out: not in this grammar (keep_all_tokens)
    expanded = [i for i, expand, _ in plan if expand]
    inserts = [(i, nones) for i, _, nones in plan if nones] + ([(size, tail)] if tail else [])
    if expanded and inserts:
        return callback
    if expanded:
        return _spliced(build, size, expanded) or callback
    if not inserts:
        return build  # lark's filter copies the list; the driver's list is already fresh
    if len(inserts) > 1:
        return callback
    ((at, count),) = inserts
    nones = [None] * count
    if at == 0:
        return lambda c: build(nones + c)
    if at == size:
        return lambda c: build(c + nones)
    return lambda c: build(c[:at] + nones + c[at:])


def _spliced(build: Callback, size: int, expanded: list[int]) -> Callback | None:
    if size == 1:
        return lambda c: build(c[0].children)
    if size == 2 and expanded == [0]:
        return lambda c: build([*c[0].children, c[1]])
    if size == 2 and expanded == [1]:
        return lambda c: build([c[0], *c[1].children])
    if size == 2:
        return lambda c: build([*c[0].children, *c[1].children])
    return None
