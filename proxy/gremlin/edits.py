"""Span edits and tree navigation for Gremlin rules (DESIGN §2: rules return edits, never a
re-printed query).

Edits are computed from node spans of the parsed text, so they only make sense for trees built
by `parse_traversal` (trees from bytecode have (0, 0) spans). New text is printed canonically.
"""

from __future__ import annotations

from collections.abc import Iterator

from proxy.gremlin.ast import Enum, Literal, Node, Step, String, Traversal
from proxy.gremlin.printer import to_text
from proxy.model import Edit


def traversals(root: Traversal) -> Iterator[Traversal]:
    """The traversal and every traversal nested in it (anonymous ones, strategy options), in
    pre-order."""
    yield from root.find_all(Traversal)


def parents(root: Node) -> dict[Node, Node]:
    """Child -> parent for every node under `root` (nodes hash by identity)."""
    out: dict[Node, Node] = {}
    for node in root.walk():
        for child in node.children():
            out[child] = node
    return out


def enclosing_step(node: Node, parent_of: dict[Node, Node]) -> Step | None:
    """The nearest step whose arguments contain `node`."""
    current = parent_of.get(node)
    while current is not None and not isinstance(current, Step):
        current = parent_of.get(current)
    return current


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


def remove_step(step: Step, traversal: Traversal) -> Edit:
    """Delete `step` together with the dot that joins it to the previous one."""
    chain = traversal.source + traversal.all_steps
    index = next(i for i, s in enumerate(chain) if s is step)
    if index == 0:
        if len(chain) == 1:
            raise ValueError("cannot remove the only step of a traversal")
        return Edit(step.span[0], chain[1].span[0], "")
    return Edit(chain[index - 1].span[1], step.span[1], "")


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
    stack: list[Node] = list(reversed(step.args))
    while stack:
        node = stack.pop()
        if isinstance(node, Traversal):
            yield node
        else:
            stack.extend(reversed(list(node.children())))
