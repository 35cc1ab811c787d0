"""Typed Gremlin traversal AST: dataclass nodes with a character span on every node.

Spans are (start, end) offsets into the parsed text, end exclusive. Nodes built from bytecode
carry the synthetic span (0, 0). Nodes compare by identity (`eq=False`); use
`query_guard.gremlin.printer.to_text` (canonical text) to compare two trees. Generic tree operations
(`children`, `walk`, `find_all`) live once on the base class, like sqlglot's Expression.
"""

from __future__ import annotations

import datetime as _dt
import uuid as _uuid
from dataclasses import dataclass, field
from decimal import Decimal

from query_guard.guard.tree import TreeNode

Span = tuple[int, int]
NO_SPAN: Span = (0, 0)


@dataclass(eq=False, slots=True)
class Node(TreeNode):
    span: Span


# ---------------------------------------------------------------- arguments


@dataclass(eq=False, slots=True)
class Arg(Node):
    """Anything that can be a step argument."""


@dataclass(eq=False, slots=True)
class Literal(Arg):
    """A number, boolean or null. `gtype` is the Gremlin type: "int", "long", "short", "byte",
    "biginteger", "float", "double", "bigdecimal", "boolean" or "null"."""

    gtype: str
    value: int | float | Decimal | bool | None


@dataclass(eq=False, slots=True)
class String(Arg):
    value: str  # escapes resolved
    naked: bool = False  # a naked map key or strategy option name: `[name: 1]`


@dataclass(eq=False, slots=True)
class Variable(Arg):
    """A bare identifier that is not an enum: a parameter such as `xx1` or `vid1`."""

    name: str


@dataclass(eq=False, slots=True)
class Enum(Arg):
    """`T.id` / `id`, `Order.desc`, `Direction.OUT`, `WithOptions.tokens`, ... `value` is the
    canonical member name (aliases such as `Direction.from` are resolved to `OUT`)."""

    kind: str
    value: str
    long_form: bool = True


@dataclass(eq=False, slots=True)
class PredicateLink(Node):
    """One `.and(p)`, `.or(p)` or `.negate()` applied to a predicate."""

    op: str  # "and" | "or" | "negate"
    other: Predicate | None = None


@dataclass(eq=False, slots=True)
class Predicate(Arg):
    """`P.gt(1)`, `gt(1)`, `TextP.containing('a')`, `within('a','b')`, with its and/or/negate
    chain in source order."""

    kind: str  # "P" | "TextP"
    name: str
    args: list[Arg]
    chain: list[PredicateLink] = field(default_factory=list)
    long_form: bool = True


@dataclass(eq=False, slots=True)
class ListLit(Arg):
    items: list[Arg]


@dataclass(eq=False, slots=True)
class SetLit(Arg):
    items: list[Arg]


@dataclass(eq=False, slots=True)
class MapEntry(Node):
    key: Arg
    value: Arg


@dataclass(eq=False, slots=True)
class MapLit(Arg):
    entries: list[MapEntry]


@dataclass(eq=False, slots=True)
class StrategyOption(Node):
    key: str
    value: Arg


@dataclass(eq=False, slots=True)
class Strategy(Arg):
    """A traversal strategy in `withStrategies` / `withoutStrategies`:
    `ReadOnlyStrategy`, `SubgraphStrategy(vertices: __.hasLabel('person'))`."""

    name: str
    config: list[StrategyOption] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class DateTimeLit(Arg):
    """`datetime('2023-08-08T00:00:00Z')`; `value` is None for `datetime()` (now)."""

    value: _dt.datetime | None


@dataclass(eq=False, slots=True)
class UUIDLit(Arg):
    """`UUID('...')`; `value` is None for `UUID()` (random)."""

    value: _uuid.UUID | None


@dataclass(eq=False, slots=True)
class CardinalityValue(Arg):
    """`Cardinality.single(x)` / `list(x)` / `set(x)` used as a value (e.g. in mergeV maps)."""

    cardinality: str  # "single" | "list" | "set"
    value: Arg


# ---------------------------------------------------------------- traversals


@dataclass(eq=False, slots=True)
class Step(Node):
    name: str
    name_span: Span
    args: list[Arg]


@dataclass(eq=False, slots=True)
class Traversal(Arg):
    """A root traversal `g.withX(..).V(..).out(..)...[.terminal()]` or an anonymous one
    (`__.out()` / `out()`): then `anonymous` is True, `source` is empty and `spawn` is None."""

    source: list[Step]
    spawn: Step | None
    steps: list[Step]
    anonymous: bool = False
    terminal: Step | None = None

    @property
    def all_steps(self) -> list[Step]:
        """The spawn step (if any) followed by the other steps; no source or terminal steps."""
        return ([self.spawn] if self.spawn is not None else []) + self.steps
