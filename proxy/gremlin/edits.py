"""Span edits and tree navigation for Gremlin rules (DESIGN §2: rules return edits, never a
re-printed query).

Edits are computed from node spans of the parsed text, so they only make sense for trees built
by `parse_traversal` (trees from bytecode have (0, 0) spans). New text is printed canonically.
"""

from __future__ import annotations

from collections.abc import Iterator

from query_guard.gremlin.ast import (
    DateTimeLit,
    Enum,
    Literal,
    Node,
    Predicate,
    Step,
    String,
    Traversal,
    UUIDLit,
    Variable,
)
from query_guard.gremlin.printer import to_text
from query_guard.model import Edit


def traversals(root: Traversal) -> Iterator[Traversal]:
    """The traversal and every traversal nested in it (anonymous ones, strategy options), in
    pre-order."""
    yield from root.find_all(Traversal)


def rename_step(step: Step, new_name: str) -> Edit:
    """`out('x')` -> `in('x')`: replace only the step name."""
    return Edit(step.name_span[0], step.name_span[1], new_name)


def replace_node(node: Node, replacement: Node | str) -> Edit:
    """Replace a node's source text (`replacement` printed canonically when it is a node)."""
    text = replacement if isinstance(replacement, str) else to_text(replacement)
    return Edit(node.span[0], node.span[1], text)


def insert_after(step: Step, steps: str) -> Edit:
    """Insert `.limit(10)`-style text (leading dot included) right after `step`."""
    return Edit(step.span[1], step.span[1], steps)


def append_step(traversal: Traversal, steps: str) -> Edit:
    """Insert steps at the end of `traversal`, before its terminal step if it has one."""
    last = traversal.all_steps[-1] if traversal.all_steps else None
    if last is None:
        raise ValueError("the traversal has no steps to append to")
    return insert_after(last, steps)


def insert_before(step: Step, steps: str) -> Edit:
    """Insert `out('x').`-style text (trailing dot included) right before `step`."""
    return Edit(step.span[0], step.span[0], steps)


# ---------------------------------------------------------------- reading steps


def string_args(step: Step) -> list[str] | None:
    """The values of a step whose arguments are all string literals (`out('a', 'b')`), else
    None (no arguments, a parameter, a predicate, ...)."""
    if not step.args or not all(isinstance(a, String) for a in step.args):
        return None
    return [a.value for a in step.args if isinstance(a, String)]


def int_literal(arg: Node) -> int | None:
    """The value of an integer literal argument (`10`, `10L`), else None."""
    if isinstance(arg, Literal) and isinstance(arg.value, int) and not isinstance(arg.value, bool):
        return arg.value
    return None


def is_local(step: Step) -> bool:
    """A step in local scope (`count(local)`, `limit(Scope.local, 2)`)."""
    first = step.args[0] if step.args else None
    return isinstance(first, Enum) and first.kind == "Scope" and first.value == "local"


def nested_traversals(step: Step) -> Iterator[Traversal]:
    """The traversals among a step's arguments (inside lists, maps and strategy options too),
    without the ones nested inside those traversals."""
    for arg in step.args:
        cls = arg.__class__
        if cls in _NO_CHILDREN:
            continue
        if cls is Traversal:
            yield arg  # type: ignore[misc]
            continue
        if cls is Predicate and _literal_predicate(arg):  # type: ignore[arg-type]
            continue  # `P.gte(0.8)`
        stack: list[Node] = [arg]
        while stack:
            node = stack.pop()
            if isinstance(node, Traversal):
                yield node
            else:
                stack.extend(reversed(list(node.children())))


# argument classes without child nodes (`nested_traversals` skips them without a walk)
_NO_CHILDREN = frozenset({Literal, String, Variable, Enum, DateTimeLit, UUIDLit})


def _literal_predicate(p: Predicate) -> bool:
    """A predicate of childless arguments only, without and/or/negate links."""
    return not p.chain and all(a.__class__ in _NO_CHILDREN for a in p.args)
