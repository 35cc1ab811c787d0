"""What scope resolution (`query_guard.cypher.scopes.resolve`) knows about a query: one `Scope` per
stretch of the query (its bound variables and their certain labels) and `Scopes`, the answers
rules ask for (`labels(node)`, `scope_of(node)`), `conjuncts`, the parts of a WHERE that facts
come from, and `subclasses`, to sort node classes."""

from __future__ import annotations

from collections.abc import Iterable

from query_guard.cypher.ast import (
    BinaryOp,
    Expr,
    LabelAnd,
    LabelExpr,
    LabelName,
    Node,
    NodePattern,
    Variable,
)


def certain_labels(expr: LabelExpr | None) -> frozenset[str]:
    """Labels a node matching `expr` certainly has: names, and members of conjunctions."""
    if isinstance(expr, LabelName):
        return frozenset((expr.name,))
    if isinstance(expr, LabelAnd):
        out: frozenset[str] = frozenset()
        for item in expr.items:
            out |= certain_labels(item)
        return out
    return frozenset()


class Scope:
    """Variables bound in one stretch of a query, with what is known about their labels."""

    __slots__ = ("bound", "facts", "id", "parent")

    def __init__(self, scope_id: int, parent: Scope | None) -> None:
        self.id = scope_id
        self.parent = parent  # an enclosing scope whose variables stay visible
        self.bound: set[str] = set()
        self.facts: dict[str, set[str]] = {}

    def visible(self, name: str) -> bool:
        if name in self.bound:
            return True
        return self.parent is not None and self.parent.visible(name)

    def labels(self, name: str) -> frozenset[str]:
        own = frozenset(self.facts.get(name, ()))
        if name in self.bound or self.parent is None:
            return own
        return own | self.parent.labels(name)

    def bind(self, name: str) -> None:
        if not self.visible(name):
            self.bound.add(name)

    def add(self, name: str, labels: Iterable[str]) -> None:
        self.facts.setdefault(name, set()).update(labels)


class Scopes:
    """Answers label and scope questions about the nodes of one resolved AST."""

    def __init__(self, occurrences: dict[Node, tuple[Scope, str | None]]) -> None:
        self._occurrences = occurrences
        self._labels: dict[int, frozenset[str]] = {}  # id(node) -> labels(node): rules ask often

    def labels(self, node: NodePattern | Variable) -> frozenset[str]:
        """Plain labels certainly carried by the variable of `node` (or by an anonymous node)."""
        known = self._labels.get(id(node))
        if known is not None:
            return known
        own = certain_labels(node.labels) if isinstance(node, NodePattern) else frozenset()
        found = self._occurrences.get(node)
        if found is None or found[1] is None:
            labels = own
        else:
            scope, name = found
            labels = own | scope.labels(name)
        self._labels[id(node)] = labels
        return labels

    def scope_of(self, node: NodePattern | Variable) -> int | None:
        """An opaque id, equal for nodes in the same scope; None for nodes never seen."""
        found = self._occurrences.get(node)
        return None if found is None else found[0].id


def conjuncts(expr: Expr) -> list[Expr]:
    """The AND-conjoined parts of a WHERE, left to right."""
    out: list[Expr] = []
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, BinaryOp) and e.op == "AND":
            stack.append(e.right)
            stack.append(e.left)
        else:
            out.append(e)
    return out


def subclasses(cls: type) -> list[type]:
    """`cls` and every class derived from it so far."""
    out = [cls]
    for sub in cls.__subclasses__():
        out += subclasses(sub)
    return out
