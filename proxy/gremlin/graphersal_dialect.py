"""Print a guarded Gremlin AST in graphersal's script dialect (the embedded Gremlin engine).

Beside the canonical printer (`query_guard.gremlin.printer`), which prints TinkerPop's Gremlin: the
text that leaves the proxy for graphersal is printed from the judged AST, never the client's
text. Differences from TinkerPop Gremlin that the printer bridges:

* strings are double-quoted (single quotes are not strings there); `\\uXXXX` escapes only for
  control characters and line terminators (proxy/guard/unsafe_chars.py: none is ever sent raw), and
  no quote is ever spelt as one;
* `null` is `()`; maps are `#{"k": v}`; sets are printed as lists of their distinct members
  (`{a, b}` is not a literal);
* numbers carry no type suffix (`1L`, `1.5f`, `1.5M` are plain numbers);
* the terminal step is not printed: `Rendered.terminal` tells the backend how to finish
  (`to_list()` is appended; `next()`, `toSet()`, `hasNext()`, `iterate()` are applied to
  the list in Python, as Gremlin Server would return them).

* `typeOf(GType.X)` for a type graphersal has no values of (`SHORT`, `BYTE`, `BIGINT`,
  `BIGDECIMAL`, `CHAR`, `BINARY`, `SET`, `TREE`, `VPROPERTY`: its numbers are 64-bit, its
  collections lists and maps, its properties flattened) is true of nothing there: it is
  printed as `P.within()`, which graphersal evaluates (its `GType` has no such member).

What graphersal cannot express (strategies, `UUID(...)`, NaN/Infinity, enum map keys) raises
`Unsupported` with a message naming it: the front answers that the embedded engine does not
support it, rather than sending something that means another thing.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gremlin_python.structure.graph import Element, Path, Property

from query_guard.gremlin import ast
from query_guard.gremlin.lexicon import WITH_OPTION_KEYS
from query_guard.gremlin.printer import identifier, predicate_text
from query_guard.gremlin.terminal import Terminal, UnsupportedTerminal, terminal_of
from query_guard.guard.unsafe_chars import UNSAFE

# GType members graphersal has no values of (see the module docstring)
NO_VALUES_OF = frozenset(
    {"SHORT", "BYTE", "BIGINT", "BIGDECIMAL", "CHAR", "BINARY", "SET", "TREE", "VPROPERTY"}
)
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class Unsupported(ValueError):
    """The traversal uses something graphersal's dialect cannot express."""


@dataclass(frozen=True, slots=True)
class Rendered:
    """The script to execute (ends in `.to_list()`) and how to finish its result."""

    script: str
    terminal: Terminal = field(default_factory=Terminal)


def render(traversal: ast.Traversal, inline: Mapping[str, Any] | None = None) -> Rendered:
    """The root traversal as a graphersal script. `inline` gives variables whose values the
    engine cannot take as parameters (lists, maps, elements): they are printed as literals."""
    if traversal.anonymous:
        raise Unsupported("an anonymous traversal (__.…) cannot be executed on its own")
    try:
        terminal = terminal_of(traversal)
    except UnsupportedTerminal as exc:
        raise Unsupported(str(exc)) from exc
    return Rendered(f"{_Printer(inline or {}).traversal(traversal)}.to_list()", terminal)


def quote(value: str) -> str:
    """A double-quoted graphersal string literal for `value`."""
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif UNSAFE.match(ch):
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


class _Printer:
    def __init__(self, inline: Mapping[str, Any]) -> None:
        self.inline = inline

    def traversal(self, t: ast.Traversal) -> str:
        parts = ["__"] if t.anonymous else ["g"]
        parts += [self.step(s, source=True) for s in t.source]
        parts += [self.step(s) for s in t.all_steps]
        return ".".join(parts)

    def step(self, s: ast.Step, source: bool = False) -> str:
        if source and s.name in ("withStrategies", "withoutStrategies"):
            raise Unsupported(f"{s.name}() is not supported by the embedded engine")
        args = [self.arg(a) for a in s.args]
        first = s.args[0] if s.args else None
        if s.name == "with" and isinstance(first, ast.String) and first.value in WITH_OPTION_KEYS:
            raise Unsupported(f"with({first.value!r}) is not supported by the embedded engine")
        return f"{s.name}({', '.join(args)})"

    def arg(self, node: ast.Node) -> str:
        if isinstance(node, ast.String):
            return quote(node.value)
        if isinstance(node, ast.Literal):
            return _literal(node)
        if isinstance(node, ast.Variable):
            if node.name in self.inline:
                return value(self.inline[node.name])
            try:
                return identifier(node.name)
            except ValueError as exc:
                raise Unsupported(str(exc)) from exc
        if isinstance(node, ast.Enum):
            return f"{node.kind}.{node.value}"
        if isinstance(node, ast.Predicate):
            return self.predicate(node)
        if isinstance(node, ast.Traversal):
            return self.traversal(node)
        if isinstance(node, ast.ListLit):
            return "[" + ", ".join(self.arg(i) for i in node.items) + "]"
        if isinstance(node, ast.SetLit):  # a list of its distinct members: {1, 1} is {1}
            return "[" + ", ".join(dict.fromkeys(self.arg(i) for i in node.items)) + "]"
        if isinstance(node, ast.MapLit):
            entries = (f"{_key(e.key)}: {self.arg(e.value)}" for e in node.entries)
            return "#{" + ", ".join(entries) + "}"
        if isinstance(node, ast.DateTimeLit):
            if node.value is None:
                raise Unsupported("datetime() without a value is not supported")
            return f"datetime({quote(node.value.isoformat().replace('+00:00', 'Z'))})"
        kind = type(node).__name__
        raise Unsupported(f"{kind} values are not supported by the embedded engine")

    def predicate(self, p: ast.Predicate) -> str:
        first = p.args[0] if len(p.args) == 1 else None
        if p.name == "typeOf" and isinstance(first, ast.Enum) and first.value in NO_VALUES_OF:
            p = ast.Predicate(p.span, "P", "within", [], p.chain)
        return predicate_text(p, self.arg)


def value(v: Any) -> str:
    """A Python value (a binding the engine cannot take as a parameter) as a literal; an
    element stands for its id, as Gremlin Server accepts `g.V(vertex)`, a property for its
    value and a path for its objects."""
    if isinstance(v, str):
        return quote(v)
    if v is None:
        return "()"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _literal(ast.Literal((0, 0), "double", v))
    if isinstance(v, list | tuple | set | frozenset):
        return "[" + ", ".join(value(i) for i in v) + "]"
    if isinstance(v, dict):
        if not all(isinstance(k, str) for k in v):
            raise Unsupported("map keys other than strings are not supported by the engine")
        return "#{" + ", ".join(f"{quote(k)}: {value(i)}" for k, i in v.items()) + "}"
    if isinstance(v, Element):
        return value(v.id)
    if isinstance(v, Property):
        return value(v.value)
    if isinstance(v, Path):
        return value(list(v.objects))
    if isinstance(v, dt.datetime):
        moment = v if v.tzinfo is not None else v.replace(tzinfo=dt.UTC)
        return f"datetime({quote(moment.isoformat().replace('+00:00', 'Z'))})"
    raise Unsupported(f"a {type(v).__name__} binding is not supported by the embedded engine")


def _literal(node: ast.Literal) -> str:
    value = node.value
    if node.gtype == "null" or value is None:
        return "()"
    if node.gtype == "boolean":
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise Unsupported("NaN and Infinity are not supported by the embedded engine")
        text = repr(value)
        return text if ("." in text or "e" in text) else text + ".0"
    return str(value)


def _key(node: ast.Node) -> str:
    if isinstance(node, ast.String):
        return quote(node.value)
    raise Unsupported("map keys other than strings are not supported by the embedded engine")
