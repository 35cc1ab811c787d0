"""What kind of value a traversal's results are, read from its AST, so an engine that returns
plain lists and string-keyed maps (graphersal) answers with the types Gremlin Server sends.

graphersal returns a `path()` as a list, a `difference()`/`intersect()` set as a list, and an
`elementMap()` with the keys `"id"`, `"label"`, `"IN"`, `"OUT"` where TinkerPop has the tokens
`T.id`, `T.label`, `Direction.IN`, `Direction.OUT` (also once its entries are ordered with
`order(local)`, unfolded, or merged with another map). The last step that shapes the
traverser (steps that only filter or modulate are looked through) says which of these the
results are:

>>> from proxy.gremlin.parser import parse_traversal
>>> shape_of(parse_traversal("g.V().out().path().by('name').limit(2)"))
'path'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gremlin_python.process.traversal import Direction, T
from gremlin_python.structure.graph import Path

from query_guard.gremlin import ast

PATH, SET, ELEMENT_MAP, ID = "path", "set", "elementMap", "id"

# Steps after which the traverser holds the same object (filters, modulators, side effects).
_KEEP = frozenset(
    {"has", "hasLabel", "hasId", "hasKey", "hasValue", "hasNot", "is", "where", "filter", "not",
     "and", "or", "dedup", "limit", "range", "tail", "skip", "simplePath", "cyclicPath", "order",
     "by", "as", "sideEffect", "aggregate", "store", "barrier", "timeLimit", "coin", "sample",
     "from", "to", "with", "identity", "emit", "times", "until"}
)  # fmt: skip
# Steps whose result is a set in TinkerPop (graphersal answers a list).
_SETS = frozenset({"difference", "disjunct", "intersect", "merge"})
_LOCAL = frozenset({"dedup", "limit", "range", "tail", "skip", "order", "sample"})


def shape_of(traversal: ast.Traversal) -> str | None:
    """`path`, `set`, `elementMap`, `id` or None (nothing to convert)."""
    spawn = traversal.spawn
    if (
        spawn is not None and spawn.name == "inject" and spawn.args
        and all(isinstance(a, ast.SetLit) for a in spawn.args)
        and all(s.name in _KEEP for s in traversal.steps)
    ):  # fmt: skip
        return SET  # `g.inject({1, 3})`: the sets themselves (graphersal has lists)
    return _shape(traversal.steps)


def _shape(steps: list[ast.Step]) -> str | None:
    for i in range(len(steps) - 1, -1, -1):
        step = steps[i]
        if step.name in _LOCAL and _is_local(step):
            if step.name == "order" and _shape(steps[:i]) == ELEMENT_MAP:
                return ELEMENT_MAP  # an element map with its entries ordered
            return SET if step.name == "dedup" else None
        if step.name in _KEEP:
            continue
        if step.name == "path":
            return PATH
        inner = step.args[0] if len(step.args) == 1 else None
        if step.name in ("map", "local") and isinstance(inner, ast.Traversal):
            return _shape(inner.steps)  # what the body yields (`map(__.fold().dedup(local))`)
        if step.name in ("unfold", "merge") and _shape(steps[:i]) == ELEMENT_MAP:
            return ELEMENT_MAP  # its entries (one-key maps), or two element maps merged
        if step.name in _SETS:
            return SET
        if step.name in ("elementMap", "valueMap"):  # valueMap(true) / with(tokens)
            return ELEMENT_MAP
        if step.name == "id":
            return ID
        return None
    return None


def id_keys(traversal: ast.Traversal) -> frozenset[str]:
    """The keys of a final `project(…)`/`select(…)` whose `by()` is `T.id` or `id()`: their
    values are element ids (`project("id", "name").by(T.id).by("name")`)."""
    steps = traversal.steps
    for i in range(len(steps) - 1, -1, -1):
        step = steps[i]
        if step.name in _KEEP:
            continue
        if step.name not in ("project", "select"):
            return frozenset()
        keys = [a.value for a in step.args if isinstance(a, ast.String)]
        mods = [s for s in steps[i + 1 :] if s.name == "by"]
        if len(keys) < (1 if step.name == "project" else 2) or not mods:
            return frozenset()
        return frozenset(k for n, k in enumerate(keys) if _is_id(mods[n % len(mods)]))
    return frozenset()


def _is_id(by: ast.Step) -> bool:
    if len(by.args) != 1:
        return False
    arg = by.args[0]
    if isinstance(arg, ast.Enum):
        return arg.kind == "T" and arg.value == "id"
    return (isinstance(arg, ast.Traversal) and len(arg.all_steps) == 1
            and arg.all_steps[0].name == "id" and not arg.all_steps[0].args)  # fmt: skip


def _is_local(step: ast.Step) -> bool:
    first = step.args[0] if step.args else None
    return isinstance(first, ast.Enum) and first.kind == "Scope" and first.value == "local"


def reshape(value: Any, shape: str | None, ident: Callable[[Any], Any] = lambda v: v) -> Any:
    """One result (already in gremlinpython's types) as the kind of value `shape` names;
    `ident` gives an element id its client-side type."""
    if shape == PATH and isinstance(value, list):
        return Path([set() for _ in value], value)
    if shape == SET and isinstance(value, list):
        try:
            return set(value)
        except TypeError:  # unhashable members (maps, lists) stay a list
            return value
    if shape == ELEMENT_MAP and isinstance(value, dict):
        return element_map(value, ident)
    if shape == ID:
        return ident(value)
    return value


def with_ids(value: Any, keys: frozenset[str], ident: Callable[[Any], Any]) -> Any:
    """A projected map with the element ids under `keys` given their client-side type."""
    if not keys or not isinstance(value, dict):
        return value
    return {k: ident(v) if k in keys else v for k, v in value.items()}


_TOKENS: dict[str, Any] = {
    "id": T.id, "label": T.label, "IN": Direction.IN, "OUT": Direction.OUT,
}  # fmt: skip


def element_map(
    value: dict[str, Any], ident: Callable[[Any], Any] = lambda v: v
) -> dict[Any, Any]:
    """graphersal's `elementMap()` with TinkerPop's token keys (`T.id`, `Direction.OUT`, …)."""
    out: dict[Any, Any] = {}
    for key, item in value.items():
        token = _TOKENS.get(key) if isinstance(key, str) else None
        if isinstance(token, Direction) and isinstance(item, dict):
            item = element_map(item, ident)
        elif isinstance(item, list):  # a valueMap's property named "id" or "label"
            token = None
        elif token is T.id:
            item = ident(item)
        out[token if token is not None else key] = item
    return out
