"""Which vertex labels a Gremlin walk may be on, step by step, from the schema's directed edge
declarations — shared by the direction rule (`query_guard.rules.gremlin_directions`) and the
execution-triggered repair (`query_guard.repair.gremlin`).

The walk follows each chain and keeps the labels the current vertex may have:

* `hasLabel('x', …)` or `has('x', key, value)` sets them (`g.V().hasLabel('case')`);
* filters, `as()`, `dedup()`, `limit()` … keep them (`where(...)` included);
* `out(e)` / `in(e)` / `both(e)` and `outE(e)…inV()` move them along the declared edges;
* `as('a')` remembers them and `select('a')` (one key) brings them back;
* `repeat(body)` runs its body from the labels it starts on and from every label the body
  reaches (to a fixpoint); after it, the walk may be on any of them (`emit()`, `times(0)`);
* anything else (maps, aggregations, unlabelled moves) forgets them.

Anonymous traversals under `where`, `filter`, `not`, `and`, `or`, `local`, `map`, `flatMap`,
`sideEffect`, `coalesce`, `union`, `optional` and `choose` start from the labels of the step
they hang on; one that starts with `as('a')` (`where(__.as('a').out('e'))`) starts from the
labels remembered as 'a'; others start unknown.

Every hop naming one edge label the schema knows (`out/in/both/outE/inE(e)`) is reported to
the caller's `on_hop(step, rest, edge, labels)` (labels None: unknown), which answers the step
name to walk on (its own, or the reversed one when it flips the hop), or None when the walk
cannot continue from there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from query_guard.gremlin.ast import Step, String, Traversal
from query_guard.gremlin.edits import nested_traversals, string_args
from query_guard.schema.catalog import SchemaCatalog

Labels = frozenset[str] | None
OnHop = Callable[[Step, list[Step], str, Labels], str | None]

KEEP = frozenset(
    {"has", "hasId", "hasNot", "hasKey", "hasValue", "where", "filter", "not", "and", "or", "is",
     "as", "dedup", "limit", "range", "tail", "sample", "coin", "order", "by", "simplePath",
     "cyclicPath", "identity", "barrier", "sideEffect", "aggregate", "store", "timeLimit",
     "emit", "until", "times", "with"}
)  # fmt: skip
INHERIT = frozenset(
    {"where", "filter", "not", "and", "or", "local", "map", "flatMap", "sideEffect", "coalesce",
     "union", "optional", "choose"}
)  # fmt: skip
FLIP = {"out": "in", "in": "out", "outE": "inE", "inE": "outE"}
LEAVE_EDGE = frozenset({"inV", "outV", "otherV", "bothV"})
_FIXPOINT = 4  # repeat bodies walked at most this often to find every label they reach


@dataclass(frozen=True, slots=True)
class OnEdge:
    """Between `outE(e)` and the vertex step: which end the walk came from."""

    label: str
    came_from: Labels  # labels at the near end
    forward: bool  # True: outE (near end = start of the edge)
    flipped: bool = False  # the leaving inV/outV is being renamed along with the edge step


def single_label(step: Step, catalog: SchemaCatalog) -> str | None:
    names = string_args(step)
    if not names or len(names) != 1 or not catalog.has_type(names[0]):
        return None
    return names[0]


def ends(
    e: str, labels: frozenset[str], cat: SchemaCatalog, forward: bool, backward: bool
) -> Labels:
    """The labels one hop over `e` reaches from `labels` (None: none declared)."""
    found: set[str] = set()
    for d in cat.declarations(e):
        if forward and d.start in labels:
            found.add(d.end)
        if backward and d.end in labels:
            found.add(d.start)
    return frozenset(found) or None


def _quiet(step: Step, rest: list[Step], e: str, labels: Labels) -> str | None:
    return step.name


class LabelWalk:
    """`LabelWalk(catalog, on_hop).run(traversal)`; see the module docstring."""

    def __init__(self, catalog: SchemaCatalog, on_hop: OnHop) -> None:
        self.catalog = catalog
        self.on_hop = on_hop

    def run(self, traversal: Traversal) -> None:
        self.chain(traversal.all_steps, None, {})
        for step in traversal.source:
            for t in nested_traversals(step):
                self.chain(t.all_steps, None, {})

    def chain(self, steps: list[Step], labels: Labels, marks: dict[str, Labels]) -> Labels:
        """Walk one chain from `labels`; the labels at its end. `as()` marks go into `marks`."""
        edge: OnEdge | None = None
        for i, step in enumerate(steps):
            if step.name == "repeat":
                labels, edge = self._repeat(step, labels, marks), None
                continue
            for t in nested_traversals(step):
                start = labels if step.name in INHERIT else None
                self.chain(t.all_steps, self._start(t, start, marks), dict(marks))
            if edge is not None and step.name in LEAVE_EDGE:
                labels, edge = self._leave(step, edge), None
                continue
            if edge is not None and step.name in KEEP:
                continue
            edge = None
            labels = self._step(step, steps[i + 1 :], labels, marks)
            if step.name in ("outE", "inE"):
                edge, labels = self._edge(step, steps[i + 1 :], labels), None
        return labels

    def _start(self, t: Traversal, labels: Labels, marks: dict[str, Labels]) -> Labels:
        first = t.all_steps[0] if t.all_steps else None
        if first is not None and first.name == "as":
            names = string_args(first)
            if names and len(names) == 1 and names[0] in marks:
                return marks[names[0]]
        return labels

    def _step(
        self, step: Step, rest: list[Step], labels: Labels, marks: dict[str, Labels]
    ) -> Labels:
        name = step.name
        if name == "hasLabel":
            names = string_args(step)
            return frozenset(names) if names else None
        if name == "has" and len(step.args) == 3 and isinstance(step.args[0], String):
            return frozenset({step.args[0].value})
        if name == "as":
            for mark in string_args(step) or []:
                marks[mark] = labels
            return labels
        if name == "select":
            keys = string_args(step)
            return marks.get(keys[0]) if keys and len(keys) == 1 else None
        if name in ("out", "in", "both"):
            return self._vertex(step, rest, labels)
        if name in ("outE", "inE"):
            return labels  # the caller moves onto the edge
        return labels if name in KEEP else None

    def _vertex(self, step: Step, rest: list[Step], labels: Labels) -> Labels:
        e = single_label(step, self.catalog)
        if e is None:
            return None
        name = self.on_hop(step, rest, e, labels)
        if name is None or labels is None:
            return None
        forward, backward = name in ("out", "both"), name in ("in", "both")
        return ends(e, labels, self.catalog, forward=forward, backward=backward)

    def _edge(self, step: Step, rest: list[Step], labels: Labels) -> OnEdge | None:
        e = single_label(step, self.catalog)
        if e is None:
            return None
        name = self.on_hop(step, rest, e, labels)
        if name is None or labels is None:
            return None
        return OnEdge(e, labels, forward=name == "outE", flipped=name != step.name)

    def _leave(self, step: Step, edge: OnEdge) -> Labels:
        if edge.came_from is None or step.name == "bothV":
            return None
        # otherV reaches the far end; inV is the far end of an outE walk, outV of an inE walk
        is_in = (step.name == "inV") != edge.flipped  # a flipped inV is an outV now
        far = step.name == "otherV" or is_in == edge.forward
        if not far:
            return edge.came_from
        return ends(
            edge.label, edge.came_from, self.catalog, forward=edge.forward,
            backward=not edge.forward,
        )  # fmt: skip

    def _repeat(self, step: Step, labels: Labels, marks: dict[str, Labels]) -> Labels:
        bodies = list(nested_traversals(step))
        if labels is None:
            for body in bodies:
                self.chain(body.all_steps, None, dict(marks))
            return None
        seen = set(labels)
        quiet = LabelWalk(self.catalog, _quiet)
        for _ in range(_FIXPOINT):  # every label the body may start from
            grown = set(seen)
            for body in bodies:
                grown |= quiet.chain(body.all_steps, frozenset(seen), dict(marks)) or set()
            if grown == seen:
                break
            seen = grown
        after: set[str] | None = set(seen)
        for body in bodies:  # the reported walk, once, from every label it may start on
            reached = self.chain(body.all_steps, frozenset(seen), dict(marks))
            after = after | reached if reached is not None and after is not None else None
        return frozenset(after) if after else None
