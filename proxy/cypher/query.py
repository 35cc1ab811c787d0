"""A parsed Cypher query as the rules see it: text, typed AST and (lazily) scope resolution."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from proxy.cypher import ast
from proxy.cypher.parser import parse
from proxy.cypher.scopes import Scopes, resolve


@dataclass
class CypherQuery:
    text: str
    script: ast.Script
    _scopes: Scopes | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, text: str) -> CypherQuery:
        """Raises `proxy.cypher.parser.CypherSyntaxError` on unparsable text."""
        return cls(text, parse(text))

    @property
    def scopes(self) -> Scopes:
        if self._scopes is None:
            self._scopes = resolve(self.script)
        return self._scopes

    def source(self, node: ast.Node) -> str:
        return self.text[node.span[0] : node.span[1]]

    def paths(self) -> Iterator[ast.PathPattern]:
        """Every path pattern anywhere: clauses, WHERE, subqueries, comprehensions, branches."""
        return self.script.find_all(ast.PathPattern)

    def node_labels(self, node: ast.NodePattern) -> frozenset[str]:
        """Positive labels known for this node pattern's variable in its scope."""
        return self.scopes.labels(node)
