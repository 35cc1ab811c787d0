"""Print a Gremlin AST as canonical traversal text.

Canonical means: one spelling per meaning, so two trees print the same iff they mean the same
traversal. Enums, predicates and anonymous traversals take their long form (`T.id`, `P.gt(1)`,
`__.out()`), numbers carry their type suffix unless they are int or double, strings use single
quotes (valid Gremlin and never interpolated by Groovy) with every line break or other control
character (proxy/guard/unsafe_chars.py) escaped, so no name (a label, a key: all strings in Gremlin)
carries one raw; variables and strategy names print only as identifiers; set elements are
sorted and unique, `within([a,b])` is printed as `within(a, b)`, `p.negate()` as `P.not(p)`
and `g.with(k, v)` as `g.withStrategies(OptionsStrategy(k: v))`. The output parses back to
the same canonical text. Rules should not re-print whole queries (DESIGN §2); this is
for bytecode translation, logging and tests.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from query_guard.gremlin.ast import (
    CardinalityValue,
    DateTimeLit,
    Enum,
    ListLit,
    Literal,
    MapLit,
    Node,
    Predicate,
    SetLit,
    Step,
    Strategy,
    String,
    Traversal,
    UUIDLit,
    Variable,
)
from query_guard.gremlin.lexicon import WITH_OPTION_KEYS
from query_guard.guard.unsafe_chars import UNSAFE

_SUFFIX = {"long": "L", "short": "s", "byte": "b", "biginteger": "N", "float": "f",
           "bigdecimal": "M"}
_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b",
            "\f": "\\f"}
_IDENTIFIER = re.compile(r"(?!\d)[\w$]+")  # grammars/gremlin.lark NAME


def to_text(node: Node, *, terminal: bool = True) -> str:
    """Canonical Gremlin text of any AST node (`terminal=False` drops a terminal step)."""
    if isinstance(node, Traversal):
        return _traversal(node, terminal)
    if isinstance(node, Step):
        return _step(node)
    return _arg(node)


def quote(value: str) -> str:
    """A single-quoted Gremlin string literal for `value`."""
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif UNSAFE.match(ch):
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def identifier(name: str) -> str:
    """`name` (a variable, a strategy or its option), which Gremlin writes bare: refused
    (ValueError) unless it reads as one identifier, e.g. a bytecode binding named `x).drop(`."""
    if not _IDENTIFIER.fullmatch(name):
        raise ValueError(f"{name!r} is not a Gremlin identifier")
    return name


def _traversal(t: Traversal, terminal: bool = True) -> str:
    parts = ["__"] if t.anonymous else ["g"]
    parts += _source(t.source)
    parts += [_step(s) for s in t.all_steps]
    if terminal and t.terminal is not None:
        parts.append(_step(t.terminal))
    return ".".join(parts)


def _source(steps: list[Step]) -> list[str]:
    """Source steps; `with(k, v)` is printed as what it means in bytecode: an option of the
    first `withStrategies(OptionsStrategy(...))`, created where the first `with` stands."""
    parts: list[str | None] = []
    options: dict[str, str] | None = None
    where, rest = 0, ""
    for s in steps:
        first = s.args[0] if s.args else None
        if s.name == "with" and isinstance(first, String) and len(s.args) <= 2:
            value = _arg(s.args[1]) if len(s.args) == 2 else "true"
            if options is None:
                options, where, rest = {}, len(parts), ""
                parts.append(None)
            options[first.value] = value
        elif (s.name == "withStrategies" and options is None and isinstance(first, Strategy)
              and first.name == "OptionsStrategy"):
            options = {o.key: _arg(o.value) for o in first.config}
            where, rest = len(parts), "".join(", " + _arg(a) for a in s.args[1:])
            parts.append(None)
        else:
            parts.append(_step(s))
    if options is not None:
        opts = ", ".join(f"{k}: {v}" for k, v in options.items())
        strategy = f"OptionsStrategy({opts})" if opts else "OptionsStrategy"
        parts[where] = f"withStrategies({strategy}{rest})"
    return [p for p in parts if p is not None]


def _step(s: Step) -> str:
    args = [_arg(a) for a in s.args]
    first = s.args[0] if s.args else None
    if s.name == "with" and isinstance(first, String) and first.value in WITH_OPTION_KEYS:
        # with('~tinkerpop.pageRank.edges', ..) is with(PageRank.edges, ..): one spelling
        args[0] = "{}.{}".format(*WITH_OPTION_KEYS[first.value])
    return f"{s.name}({', '.join(args)})"


def _arg(node: Node) -> str:
    if isinstance(node, String):
        return quote(node.value)
    if isinstance(node, Literal):
        return literal(node)
    if isinstance(node, Variable):
        return identifier(node.name)
    if isinstance(node, Enum):
        return f"{node.kind}.{node.value}"
    if isinstance(node, Predicate):
        return _predicate(node)
    if isinstance(node, Traversal):
        return _traversal(node)
    if isinstance(node, ListLit):
        return "[" + ", ".join(_arg(i) for i in node.items) + "]"
    if isinstance(node, SetLit):
        return "{" + ", ".join(sorted({_arg(i) for i in node.items})) + "}"
    if isinstance(node, MapLit):
        if not node.entries:
            return "[:]"
        return "[" + ", ".join(f"{_key(e.key)}: {_arg(e.value)}" for e in node.entries) + "]"
    if isinstance(node, Strategy):
        if not node.config:
            return identifier(node.name)
        opts = ", ".join(f"{identifier(o.key)}: {_arg(o.value)}" for o in node.config)
        return f"{identifier(node.name)}({opts})"
    if isinstance(node, DateTimeLit):
        return "datetime()" if node.value is None else f"datetime({quote(_iso(node))})"
    if isinstance(node, UUIDLit):
        return "UUID()" if node.value is None else f"UUID({quote(str(node.value))})"
    if isinstance(node, CardinalityValue):
        return f"Cardinality.{node.cardinality}({_arg(node.value)})"
    raise TypeError(f"cannot print {type(node).__name__}")


def literal(node: Literal) -> str:
    value = node.value
    if node.gtype == "null":
        return "null"
    if node.gtype == "boolean":
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        text = repr(value)
        if "." not in text and "e" not in text:
            text += ".0"
        return text + _SUFFIX.get(node.gtype, "")
    return f"{value}{_SUFFIX.get(node.gtype, '')}"


def _key(node: Node) -> str:
    # Enum keys need parentheses in a map (`[(T.id): 1]`); everything else prints as a value.
    if isinstance(node, Enum):
        return f"({_arg(node)})"
    return _arg(node)


def _iso(node: DateTimeLit) -> str:
    assert node.value is not None
    return node.value.isoformat().replace("+00:00", "Z")


def _predicate(p: Predicate) -> str:
    return predicate_text(p, _arg)


def predicate_text(p: Predicate, arg: Callable[[Node], str]) -> str:
    """`P.name(args)` with its and/or/negate chain; `arg` prints the arguments (the canonical
    printer's, or another dialect's)."""
    args = p.args
    if p.name in ("within", "without") and len(args) == 1 and isinstance(args[0], ListLit):
        args = args[0].items  # within([a, b]) and within(a, b) build the same predicate
    text = f"{p.kind}.{p.name}({', '.join(arg(a) for a in args)})"
    for link in p.chain:
        if link.op == "negate":
            text = f"P.not({text})"
        else:
            assert link.other is not None
            text = f"{text}.{link.op}({predicate_text(link.other, arg)})"
    return text
