"""A parsed Cypher query as the rules see it: text, typed AST, and facts computed once and
shared by every rule (the node index, scope resolution)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TypeVar

from lark import Token

from query_guard.cypher import ast
from query_guard.cypher.parser import parse_tokens
from query_guard.cypher.scope_table import subclasses
from query_guard.cypher.scopes import Scopes, resolve
from query_guard.guard.tree import index

N = TypeVar("N", bound=ast.Node)
_MISSING = object()  # `memo`: a key not computed yet (None may be a computed fact)
_NONE: tuple[ast.Node, ...] = ()  # what `find` answers for classes absent from a query


@dataclass
class CypherQuery:
    text: str
    script: ast.Script
    # the tokens the judged parse consumed (no comments or whitespace): what emit() re-prints
    tokens: list[Token] = field(default_factory=list, repr=False)
    _scopes: Scopes | None = field(default=None, repr=False)
    _nodes: list[ast.Node] | None = field(default=None, repr=False)
    _by_type: dict[type, list[ast.Node]] = field(default_factory=dict, repr=False)
    _found: dict[tuple[type, ...], Sequence[ast.Node]] = field(default_factory=dict, repr=False)
    _memo: dict[str, object] = field(default_factory=dict, repr=False)
    _token_types: frozenset[str] | None = field(default=None, repr=False)
    _known: bool | None = field(default=None, repr=False)  # every node class in _NODE_CLASSES

    @classmethod
    def parse(cls, text: str) -> CypherQuery:
        """Raises `query_guard.cypher.parser.CypherSyntaxError` on unparsable text."""
        script, tokens = parse_tokens(text)
        return cls(text, script, tokens)

    @property
    def scopes(self) -> Scopes:
        if self._scopes is None:
            self._scopes = resolve(self.script)
        return self._scopes

    @property
    def token_types(self) -> frozenset[str]:
        """The types of the tokens the parse consumed (computed once, shared by all rules): a
        rule whose constructs all need a token of some type (a keyword, an arrow) can skip a
        query that has none."""
        if self._token_types is None:
            self._token_types = frozenset([t.type for t in self.tokens])
        return self._token_types

    def has_token(self, *types: str) -> bool:
        """Might the query hold a token of one of `types`? False only when its parse's tokens
        are known and none is of these types (a query built without tokens: True)."""
        return not self.tokens or not self.token_types.isdisjoint(types)

    @property
    def nodes(self) -> list[ast.Node]:
        """Every AST node, pre-order (walked once per query, shared by all rules)."""
        if self._nodes is None:
            self._nodes, self._by_type = index(self.script)  # type: ignore[assignment]
        return self._nodes

    def find(self, *types: type[N]) -> Iterator[N]:
        """Nodes of the given types (subclasses included) anywhere in the query: the classes in
        the order they first occur, each class's nodes in pre-order."""
        found = self._found.get(types)
        if found is None:  # the same lookup for every rule that asks: computed once
            if self._nodes is None:  # the index, built on first use
                self._nodes, self._by_type = index(self.script)  # type: ignore[assignment]
            by_type = self._by_type
            if self._known is None:  # every class present is in every table (once a query)
                self._known = _NODE_CLASSES.issuperset(by_type)
            if not self._known:  # a class defined after this module: ask each
                found = [n for cls, ns in by_type.items() if issubclass(cls, types) for n in ns]
            elif len(types) == 1 and types[0] in _LEAVES:  # no subclass here: its own list
                found = by_type.get(types[0], _NONE)
            else:
                hits = by_type.keys() & _matching(types)  # a set operation, not a loop here
                if len(hits) == 1:  # one class present: its own list
                    found = by_type[next(iter(hits))]
                elif hits:  # several: in the order they first occur
                    order = list(by_type).index
                    merged: list[ast.Node] = []
                    for cls in sorted(hits, key=order):
                        merged += by_type[cls]
                    found = merged
                else:
                    found = _NONE
            self._found[types] = found
        return iter(found)  # type: ignore[arg-type]

    def memo(self, key: str, compute: object) -> object:
        """A per-query cache for facts several rules derive (e.g. the hops to check)."""
        known = self._memo.get(key, _MISSING)
        if known is _MISSING:
            known = self._memo[key] = compute() if callable(compute) else compute
        return known

    def source(self, node: ast.Node) -> str:
        return self.text[node.span[0] : node.span[1]]

    def paths(self) -> Iterator[ast.PathPattern]:
        """Every path pattern anywhere: clauses, WHERE, subqueries, comprehensions, branches."""
        return self.find(ast.PathPattern)

    def written(self) -> frozenset[int]:
        """ids of the nodes inside CREATE / MERGE clauses (data to be written, not matched)."""

        known = self._memo.get("written")
        if known is None:  # once a query, without a closure per call (several rules ask)
            writes = self.find(ast.Create, ast.Merge)
            known = self._memo["written"] = frozenset(id(n) for c in writes for n in c.walk())
        return known  # type: ignore[return-value]

    def node_labels(self, node: ast.NodePattern) -> frozenset[str]:
        """Positive labels known for this node pattern's variable in its scope."""
        return self.scopes.labels(node)


def _node_classes() -> frozenset[type]:
    """Every node class defined by now."""
    return frozenset(subclasses(ast.Node))


# the node classes defined when this module was imported: every `_matching` table has them (a
# query with another class, defined later, is answered without the tables)
_NODE_CLASSES = _node_classes()
# those of them without a subclass then: in a query of only `_NODE_CLASSES`, a node that is
# an instance of one has exactly that class
_LEAVES = frozenset(c for c in _NODE_CLASSES if not c.__subclasses__())


@cache
def _matching(types: tuple[type, ...]) -> frozenset[type]:
    """The node classes defined by now that are subclasses of `types`, asked once per `types`.
    Never changed once made."""
    return frozenset(c for c in _node_classes() if issubclass(c, types))
