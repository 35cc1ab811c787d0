"""Gremlin as the pipeline sees it: parse to a `GremlinQuery`, describe errors as findings.

`query_guard.build.default_languages()` picks this up through `gremlin_language()`; rules receive
a `GremlinQuery` through the `guard_gremlin` hook (argument name `traversal`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from query_guard.gremlin import ast
from query_guard.gremlin.errors import GremlinScriptError, GremlinSyntaxError
from query_guard.gremlin.parser import parse_traversal
from query_guard.gremlin.printer import to_text
from query_guard.guard.language import Language
from query_guard.guard.tree import index
from query_guard.model import Edit, Finding, Severity, apply_edits

T = TypeVar("T")


@dataclass
class GremlinQuery:
    """A parsed traversal with its text (spans index `text`)."""

    text: str
    traversal: ast.Traversal
    # the walks every rule asks for, made once per parse (rules read the tree, never change
    # it: a fix is a span edit)
    _traversals: list[ast.Traversal] | None = field(default=None, repr=False, compare=False)
    _steps: list[ast.Step] | None = field(default=None, repr=False, compare=False)
    # other walks made once per parse, by `cached`
    _cache: dict[str, tuple[object, Any]] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def parse(cls, text: str) -> GremlinQuery:
        """Raises `GremlinSyntaxError` or `GremlinScriptError`."""
        return cls(text, parse_traversal(text))

    def source(self, node: ast.Node) -> str:
        return self.text[node.span[0] : node.span[1]]

    def cached(self, name: str, on: object, build: Callable[[], T]) -> T:
        """`build()` for the walk `name` over this tree with the settings object `on`, made
        once per parse and settings object (rules read the tree, never change it)."""
        cache = self._cache
        if cache is None:
            cache = self._cache = {}
        hit = cache.get(name)
        if hit is not None and hit[0] is on:
            return hit[1]  # type: ignore[no-any-return]
        value = build()
        cache[name] = (on, value)
        return value

    def traversals(self) -> Iterator[ast.Traversal]:
        """The root traversal and every nested one, in pre-order."""
        if self._traversals is None:
            self._index()
        return iter(self._traversals)  # type: ignore[arg-type]

    def steps(self) -> Iterator[ast.Step]:
        """Every step anywhere (source, spawn, steps, nested, terminal), in pre-order."""
        if self._steps is None:
            self._index()
        return iter(self._steps)  # type: ignore[arg-type]

    def _index(self) -> None:
        """Both lists in pre-order (`find_all`'s order): by the walk below, or by the generic
        node index when the tree holds a node class that walk does not know."""
        lists = traversals_and_steps(self.traversal)
        if lists is None:
            nodes, _ = index(self.traversal)
            traversal, step = ast.Traversal, ast.Step
            lists = ([n for n in nodes if isinstance(n, traversal)],
                     [n for n in nodes if isinstance(n, step)])  # fmt: skip
        self._traversals, self._steps = lists


# argument classes that hold no traversal or step (no child nodes at all)
_LEAVES = frozenset({ast.Literal, ast.String, ast.Variable, ast.Enum, ast.DateTimeLit,
                     ast.UUIDLit})  # fmt: skip


def traversals_and_steps(
    root: ast.Traversal,
) -> tuple[list[ast.Traversal], list[ast.Step]] | None:
    """Every traversal and every step under `root` (itself included), each list in the pre-order
    of `TreeNode.walk` (a node, then its fields' children in field order), visiting only what can
    hold them; None when the tree holds a node class this walk does not know."""
    traversals: list[ast.Traversal] = []
    steps: list[ast.Step] = []
    add_traversal, add_step = traversals.append, steps.append
    leaves = _LEAVES

    def args(values: list[ast.Arg]) -> bool:
        for a in values:
            cls = a.__class__
            if cls in leaves:
                continue
            if cls is ast.Traversal:
                if not traversal(a):  # type: ignore[arg-type]
                    return False
            elif cls is ast.Predicate:
                if not args(a.args):  # type: ignore[attr-defined]
                    return False
                for link in a.chain:  # type: ignore[attr-defined]
                    if link.__class__ is not ast.PredicateLink:
                        return False
                    if link.other is not None and not args([link.other]):
                        return False
            elif cls is ast.ListLit or cls is ast.SetLit:
                if not args(a.items):  # type: ignore[attr-defined]
                    return False
            elif cls is ast.MapLit:
                for entry in a.entries:  # type: ignore[attr-defined]
                    if entry.__class__ is not ast.MapEntry or not args([entry.key, entry.value]):
                        return False
            elif cls is ast.Strategy:
                for option in a.config:  # type: ignore[attr-defined]
                    if option.__class__ is not ast.StrategyOption or not args([option.value]):
                        return False
            elif cls is ast.CardinalityValue:
                if not args([a.value]):  # type: ignore[attr-defined]
                    return False
            else:
                return False
        return True

    def step(s: ast.Step | None) -> bool:
        if s is None:
            return True
        if s.__class__ is not ast.Step:
            return False
        add_step(s)
        return not s.args or args(s.args)

    def traversal(t: ast.Traversal) -> bool:
        add_traversal(t)
        for s in t.source:
            if not step(s):
                return False
        if not step(t.spawn):
            return False
        for s in t.steps:
            if not step(s):
                return False
        return step(t.terminal)

    if root.__class__ is not ast.Traversal or not traversal(root):
        return None
    return traversals, steps


def describe_error(exc: Exception, text: str) -> list[Finding]:
    """SYN.PARSE for a syntax error; SEC.SCRIPT / SEC.MULTI_STATEMENT for script content."""
    if isinstance(exc, GremlinScriptError):
        code = "SEC.MULTI_STATEMENT" if exc.kind == "multi_statement" else "SEC.SCRIPT"
        start = min(max(exc.span[0], 0), len(text))
        end = min(max(exc.span[1], start), len(text))
        return [Finding(code, Severity.ERROR, exc.reason, (start, end), rule="parser")]
    assert isinstance(exc, GremlinSyntaxError)
    pos = min(max(exc.offset, 0), len(text))
    hint = ("expected " + ", ".join(exc.expected[:8])) if exc.expected else None
    return [
        Finding(
            "SYN.PARSE",
            Severity.ERROR,
            f"Gremlin syntax error at line {exc.line}, column {exc.column}: {exc.message}",
            (pos, min(pos + 1, len(text))),
            hint=hint,
            rule="parser",
        )
    ]


def emit(query: GremlinQuery, edits: Sequence[Edit] = ()) -> str:
    """The guard's own rendering of the judged traversal (what leaves the proxy, DESIGN §5):
    comments, Groovy spellings and escapes are gone; strings are single-quoted."""
    if edits:
        query = GremlinQuery.parse(apply_edits(query.text, list(edits)))
    return to_text(query.traversal)


def gremlin_language() -> Language:
    return Language(
        "gremlin",
        GremlinQuery.parse,
        (GremlinSyntaxError, GremlinScriptError),
        "guard_gremlin",
        describe_error,
        sample="g.V()",
        argument="traversal",
        emit=emit,
    )
