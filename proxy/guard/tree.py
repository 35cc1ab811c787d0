"""Generic operations over our typed syntax trees (the Cypher and Gremlin ASTs share them):
`children`, `walk`, `find_all` once on a base class, like sqlglot's Expression."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import fields
from typing import TypeVar

T = TypeVar("T", bound="TreeNode")

# field annotations that never hold a node (annotations are strings: `from __future__`)
_LEAF_TYPES = frozenset(
    {"str", "bool", "int", "Span", "str | None", "int | None", "object", "list[str]", "list[bool]"}
)


class TreeNode:
    """Mixin for `@dataclass(slots=True)` node classes: child discovery by field type."""

    __slots__ = ()

    def children(self) -> Iterator[TreeNode]:
        kids: list[TreeNode] = []
        _push_children(self, _child_fields(type(self)), kids.append)
        return iter(kids)

    def walk(self) -> Iterator[TreeNode]:
        """Pre-order traversal of this node and everything below it."""
        stack: list[TreeNode] = [self]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            yield node
            _push_children(node, _reversed_child_fields(type(node)), push, reverse=True)

    def find_all(self, *types: type[T]) -> Iterator[T]:
        if not _child_fields(type(self)):  # a leaf (a label name): itself or nothing
            if isinstance(self, types):
                yield self  # type: ignore[misc]
            return
        for node in self.walk():
            if isinstance(node, types):
                yield node  # type: ignore[misc]


def _push_children(
    node: TreeNode,
    names: tuple[str, ...],
    push: Callable[[TreeNode], object],
    reverse: bool = False,
) -> None:
    """`push` every child node held in the fields `names` of `node`, in field order (or, with
    `reverse`, each field's items last first: `names` is then given reversed too)."""
    for name in names:
        value = getattr(node, name)
        if value is None:
            continue
        if isinstance(value, TreeNode):
            push(value)
        elif isinstance(value, (list, tuple)):
            for item in reversed(value) if reverse else value:
                if isinstance(item, TreeNode):
                    push(item)
                elif isinstance(item, tuple):  # e.g. map entries (key, span, value)
                    for x in reversed(item) if reverse else item:
                        if isinstance(x, TreeNode):
                            push(x)


def index(root: TreeNode) -> tuple[list[TreeNode], dict[type, list[TreeNode]]]:
    """Every node under `root` in pre-order (`list(root.walk())`), and the same nodes by class
    (each class's nodes in pre-order, the classes in the order they first occur), in one loop:
    the node index every rule shares. Children are pushed last first, so the first is next."""
    out: list[TreeNode] = []
    by_type: dict[type, list[TreeNode]] = {}
    stack: list[TreeNode] = [root]
    pop, push, add = stack.pop, stack.append, out.append
    reversed_fields: dict[type, tuple[str, ...]] = {}
    while stack:
        node = pop()
        add(node)
        cls = type(node)
        bucket = by_type.get(cls)
        if bucket is None:
            by_type[cls] = [node]
            names = reversed_fields[cls] = _reversed_child_fields(cls)
        else:
            bucket.append(node)
            names = reversed_fields[cls]
        for name in names:
            value = getattr(node, name)
            if value is None:
                continue
            if isinstance(value, TreeNode):
                push(value)
            elif isinstance(value, (list, tuple)):
                for item in reversed(value):
                    if isinstance(item, TreeNode):
                        push(item)
                    elif isinstance(item, tuple):  # e.g. map entries (key, span, value)
                        for x in reversed(item):
                            if isinstance(x, TreeNode):
                                push(x)
    return out, by_type


def _child_fields(cls: type) -> tuple[str, ...]:
    """The fields of `cls` that may hold child nodes, computed once per class (hot path)."""
    cached = cls.__dict__.get("_qg_child_fields")
    if cached is None:
        cached = tuple(
            f.name for f in fields(cls) if f.name != "span" and f.type not in _LEAF_TYPES
        )
        type.__setattr__(cls, "_qg_child_fields", cached)
    return cached


def _reversed_child_fields(cls: type) -> tuple[str, ...]:
    """`_child_fields(cls)`, last first (what a pre-order walk pushes), computed once per class."""
    cached = cls.__dict__.get("_qg_child_fields_reversed")
    if cached is None:
        cached = _child_fields(cls)[::-1]
        type.__setattr__(cls, "_qg_child_fields_reversed", cached)
    return cached
