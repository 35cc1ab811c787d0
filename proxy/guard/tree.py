"""Generic operations over our typed syntax trees (the Cypher and Gremlin ASTs share them):
`children`, `walk`, `find_all` once on a base class, like sqlglot's Expression."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields
from typing import TypeVar

T = TypeVar("T", bound="TreeNode")

# field annotations that never hold a node (annotations are strings: `from __future__`)
_LEAF_TYPES = frozenset({"str", "bool", "int", "Span", "str | None", "int | None", "object"})


class TreeNode:
    """Mixin for `@dataclass(slots=True)` node classes: child discovery by field type."""

    __slots__ = ()

    def children(self) -> Iterator[TreeNode]:
        for name in _child_fields(type(self)):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, TreeNode):
                yield value
            elif isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, TreeNode):
                        yield item
                    elif isinstance(item, tuple):  # e.g. map entries (key, span, value)
                        yield from (x for x in item if isinstance(x, TreeNode))

    def walk(self) -> Iterator[TreeNode]:
        """Pre-order traversal of this node and everything below it."""
        stack: list[TreeNode] = [self]
        while stack:
            node = stack.pop()
            yield node
            kids = list(node.children())
            if kids:
                kids.reverse()
                stack.extend(kids)

    def find_all(self, *types: type[T]) -> Iterator[T]:
        for node in self.walk():
            if isinstance(node, types):
                yield node  # type: ignore[misc]


def preorder(root: TreeNode) -> list[TreeNode]:
    """`list(root.walk())`, in one loop (the node index every rule shares is built with it)."""
    out: list[TreeNode] = []
    stack: list[TreeNode] = [root]
    pop, push, add = stack.pop, stack.extend, out.append
    while stack:
        node = pop()
        add(node)
        kids: list[TreeNode] = []
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            if value is None:
                continue
            if isinstance(value, TreeNode):
                kids.append(value)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, TreeNode):
                        kids.append(item)
                    elif isinstance(item, tuple):
                        kids += [x for x in item if isinstance(x, TreeNode)]
        if kids:
            kids.reverse()
            push(kids)
    return out


def _child_fields(cls: type) -> tuple[str, ...]:
    """The fields of `cls` that may hold child nodes, computed once per class (hot path)."""
    cached = cls.__dict__.get("_qg_child_fields")
    if cached is None:
        cached = tuple(
            f.name for f in fields(cls) if f.name != "span" and f.type not in _LEAF_TYPES
        )
        type.__setattr__(cls, "_qg_child_fields", cached)
    return cached
