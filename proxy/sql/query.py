"""A parsed SQL text as the rules see it: the statements (sqlglot expressions), each with its
character span in the text, and the dialect they were read in.

Parsing failures raise `SqlSyntaxError` with a line, column and offset. The canonical text a
backend would run is `emit()`: sqlglot's generator on the judged tree (comments dropped), so
no comment or quoting trick in the client's text reaches the database. sqlglot writes a quoted
identifier's characters raw (`"a<CR>b"`), and SQL has no portable escape inside one, so a name
holding a line break or another control character (proxy.unsafe_chars) is never emitted:
`emit()` raises UnsafeName (the ambiguous_text rule blocks such a query first).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import TypeVar

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from query_guard.guard.unsafe_chars import UNSAFE

N = TypeVar("N", bound=exp.Expression)


# string literals: their characters are escaped or legitimately raw; everything else that holds
# text (identifiers, function, parameter and variable names) is a name
_NODE = getattr(exp, "Expr", exp.Expression)  # the node base class (sqlglot ≥ 28: Expr)
_STRINGS = (
    exp.Literal, exp.RawString, exp.ByteString, exp.HexString, exp.BitString, exp.National,
    exp.UnicodeString,
)  # fmt: skip


class UnsafeName(ValueError):
    """A name holds a character no SQL reader can be sent unambiguously."""


@cache
def dialect_of(name: str) -> Dialect:
    """sqlglot's dialect object for `name`, built once (a Dialect holds no per-query state;
    `get_or_raise` on a name builds a new one every call)."""
    return Dialect.get_or_raise(name)


def unsafe_names(tree: exp.Expression) -> Iterator[tuple[exp.Expression, str]]:
    """(node, name) for each name in `tree` holding a character of proxy.unsafe_chars.UNSAFE,
    breadth first (`tree.walk()`'s order; one pass over each node's arguments finds both its
    names and its children)."""
    queue: deque[exp.Expression] = deque((tree,))
    pop, push, search, expr, strings = queue.popleft, queue.append, UNSAFE.search, _NODE, _STRINGS
    while queue:
        node = pop()
        skip = isinstance(node, strings)
        for value in node.args.values():
            if isinstance(value, str):
                if not skip and search(value):
                    yield node, value
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, expr):
                        push(item)
            elif isinstance(value, expr):
                push(value)


class SqlSyntaxError(Exception):
    def __init__(self, message: str, offset: int, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column


class SqlTooDeep(SqlSyntaxError):
    """The text nests deeper than the parser can follow (a resource limit, not a typo)."""


@dataclass
class SqlStatement:
    tree: exp.Expression
    span: tuple[int, int]  # start, end (exclusive) in the text, trailing ';' excluded


@dataclass
class SqlQuery:
    text: str
    dialect: str
    statements: list[SqlStatement]
    # per statement tree: id(node) -> span of its shallowest positioned descendant (span_of)
    _positions: dict[int, dict[int, tuple[int, int]]] = field(default_factory=dict, repr=False)
    # per statement tree: its nodes, breadth first (walked once, shared by every rule)
    _nodes: dict[int, list[exp.Expression]] = field(default_factory=dict, repr=False)

    @classmethod
    def parse(cls, text: str, dialect: str = "postgres") -> SqlQuery:
        try:
            reader = dialect_of(dialect)
            tokens = reader.tokenize(text)
            trees = reader.parser().parse(tokens, text)  # tokenized once
        except ParseError as exc:
            info = exc.errors[0] if exc.errors else {}
            line, col = int(info.get("line") or 1), int(info.get("col") or 1)
            offset = _offset(text, line, col)
            detail = str(info.get("description") or exc).split("\n")[0]
            raise SqlSyntaxError(
                f"line {line}, column {col}: {detail}", offset, line, col
            ) from None
        except TokenError as exc:
            raise SqlSyntaxError(str(exc).split("\n")[0], 0) from None
        except RecursionError:  # sqlglot's parser recurses per level of nesting
            raise SqlTooDeep(
                "the query nests too deeply for the SQL parser ([limits] max_nesting)", 0
            ) from None
        spans = _statement_spans(tokens, text)
        # a comment after the last ';' comes back as an empty Semicolon statement
        statements = [t for t in trees if t is not None and not isinstance(t, exp.Semicolon)]
        if len(spans) != len(statements):  # defensive: one span per parsed statement
            spans = [(0, len(text))] * len(statements)
        pairs = zip(statements, spans, strict=True)
        return cls(text, dialect, [SqlStatement(t, s) for t, s in pairs])

    def nodes(self, statement: SqlStatement) -> list[exp.Expression]:
        """Every node of the statement's tree, breadth first (`find_all`'s order). Rules read
        the trees and never change them (a fix is a span edit): one walk serves them all."""
        key = id(statement.tree)
        found = self._nodes.get(key)
        if found is None:
            found = self._nodes[key] = list(statement.tree.walk())
        return found

    def find(self, *types: type[N]) -> Iterator[N]:
        for statement in self.statements:
            for node in self.nodes(statement):
                if isinstance(node, types):
                    yield node

    def span_of(self, node: exp.Expression, statement: SqlStatement) -> tuple[int, int]:
        """The node's own characters when sqlglot kept its position, else its statement's."""
        meta = node.meta
        if "start" in meta and "end" in meta:
            return int(meta["start"]), int(meta["end"]) + 1
        key = id(statement.tree)
        if key not in self._positions:
            self._positions[key] = _first_positions(statement.tree)
        return self._positions[key].get(id(node), statement.span)

    def emit(self, dialect: str | None = None) -> str:
        """The judged statements as canonical SQL (what a backend runs), in `dialect` (default:
        the one they were read in; sqlglot transpiles)."""
        target = dialect or self.dialect
        trees = [s.tree for s in self.statements]
        for tree in trees:
            for _, name in unsafe_names(tree):
                raise UnsafeName(f"the SQL name {name!r} holds a line break or control character")
        if target == "postgres":
            trees = [_dollar_quoted(t) for t in trees]
        try:
            return ";\n".join(t.sql(dialect=target, comments=False) for t in trees)
        except RecursionError:  # the guard refuses such trees (LIM.NESTING) before this
            raise UnsafeName("the statement nests too deeply to be printed") from None


def _dollar_quoted(tree: exp.Expression) -> exp.Expression:
    """AGE reads only a dollar-quoted query in `cypher(graph, $$ … $$)`: keep it so (sqlglot
    would write an ordinary string literal)."""
    bodies = [
        a for f in tree.find_all(exp.Anonymous) if f.name.lower() == "cypher"
        for a in f.expressions[1:2] if isinstance(a, exp.RawString)
    ]  # fmt: skip
    if not bodies:
        return tree
    tree = tree.copy()
    for node in list(tree.find_all(exp.RawString)):
        call = node.parent
        if isinstance(call, exp.Anonymous) and call.name.lower() == "cypher":
            body, tag = node.this, "$$"
            while tag in body:
                tag = f"$q{len(tag)}$"
            node.replace(exp.Var(this=f"{tag}{body}{tag}"))
    return tree


def _first_positions(tree: exp.Expression) -> dict[int, tuple[int, int]]:
    """For every node: the span of the first node holding a position in a breadth-first walk
    of its subtree (the shallowest, leftmost), computed for the whole tree in one pass (a walk
    per node would cost a chain's length squared)."""
    order = list(tree.walk(bfs=False))  # pre-order: children after their parent
    best: dict[int, tuple[int, int, int]] = {}  # id -> (depth below, start, end)
    for node in reversed(order):
        meta = node.meta
        if "start" in meta:
            best[id(node)] = (0, int(meta["start"]), int(meta["end"]) + 1)
            continue
        found = [best[id(c)] for c in node.iter_expressions() if id(c) in best]
        if found:
            depth, start, end = min(found, key=lambda f: f[0])  # the first of the shallowest
            best[id(node)] = (depth + 1, start, end)
    return {key: (start, end) for key, (_, start, end) in best.items()}


def _statement_spans(tokens: list[sqlglot.tokens.Token], text: str) -> list[tuple[int, int]]:
    if ";" not in text:  # one statement: the tokenizer makes a SEMICOLON only of a ';'
        return [(tokens[0].start, tokens[-1].end + 1)] if tokens else []
    spans: list[tuple[int, int]] = []
    start: int | None = None
    end = 0
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            if start is not None:
                spans.append((start, end))
            start = None
            continue
        if start is None:
            start = token.start
        end = token.end + 1
    if start is not None:
        spans.append((start, end))
    return spans


def _offset(text: str, line: int, col: int) -> int:
    lines = text.split("\n")
    before = sum(len(x) + 1 for x in lines[: max(line - 1, 0)])
    return min(before + max(col - 1, 0), len(text))
