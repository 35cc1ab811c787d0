"""A traversal's terminal step (`toList()`, `next()`, …), applied the way Gremlin Server
returns results: the backend runs the traversal to a list, `finish` shapes that list."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from query_guard.gremlin import ast

TERMINALS = frozenset({"toList", "toSet", "next", "tryNext", "hasNext", "iterate", "toBulkSet"})


class UnsupportedTerminal(ValueError):
    """A terminal step the proxy does not run (`explain()`, `next(n)` without a literal)."""


@dataclass(frozen=True, slots=True)
class Terminal:
    name: str = "toList"  # one of TERMINALS
    count: int | None = None  # next(n)


def terminal_of(traversal: ast.Traversal) -> Terminal:
    step = traversal.terminal
    if step is None:
        return Terminal()
    if step.name not in TERMINALS:
        raise UnsupportedTerminal(f"terminal step {step.name}() is not supported")
    if step.name == "next" and step.args:
        first = step.args[0]
        if not (isinstance(first, ast.Literal) and isinstance(first.value, int)):
            raise UnsupportedTerminal("next(n) needs an integer literal")
        return Terminal("next", int(first.value))
    return Terminal(step.name)


def finish(values: list[Any], terminal: Terminal) -> list[Any]:
    """The full result shaped by the terminal step."""
    name = terminal.name
    if name == "next":
        return values[: terminal.count or 1]
    if name == "tryNext":
        return values[:1]
    if name == "hasNext":
        return [bool(values)]
    if name == "iterate":
        return []
    if name in ("toSet", "toBulkSet"):
        unique: list[Any] = []
        for v in values:
            if v not in unique:
                unique.append(v)
        return unique
    return values
