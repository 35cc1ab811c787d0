"""The label tracking the Gremlin direction rule and the Gremlin repair share
(`query_guard.gremlin.labels`): which labels each hop starts from."""

from __future__ import annotations

import pytest

from query_guard.gremlin.ast import Step
from query_guard.gremlin.labels import Labels, LabelWalk
from query_guard.gremlin.language import GremlinQuery
from query_guard.gremlin.similarity import GremlinSchema

CATALOG = GremlinSchema(
    (
        ("case", "hasReason", "reason"),
        ("case", "exhibits", "symptom"),
        ("reason", "similarReason", "reason"),
        ("person", "knows", "person"),
        ("person", "created", "software"),
    )
).catalog()


def hops(text: str) -> list[tuple[str, str, Labels]]:
    """(step, edge, labels the hop starts from) for every hop, in walk order."""
    seen: list[tuple[str, str, Labels]] = []

    def on_hop(step: Step, rest: list[Step], e: str, labels: Labels) -> str:
        seen.append((step.name, e, labels))
        return step.name

    assert CATALOG is not None
    LabelWalk(CATALOG, on_hop).run(GremlinQuery.parse(text).traversal)
    return seen


CASE, REASON, SYMPTOM = frozenset({"case"}), frozenset({"reason"}), frozenset({"symptom"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("g.V().hasLabel('case').out('hasReason').in('hasReason')",
         [("out", "hasReason", CASE), ("in", "hasReason", REASON)]),
        # select('c') brings back the labels remembered by as('c')
        ("g.V().hasLabel('case').as('c').out('hasReason').select('c').out('exhibits')",
         [("out", "hasReason", CASE), ("out", "exhibits", CASE)]),
        # select of two keys is a map: the labels are lost
        ("g.V().hasLabel('case').as('c').out('hasReason').as('r').select('c', 'r')"
         ".out('exhibits')",
         [("out", "hasReason", CASE), ("out", "exhibits", None)]),
        # where(...) keeps them, and its body starts from them
        ("g.V().hasLabel('case').where(__.out('exhibits')).out('hasReason')",
         [("out", "exhibits", CASE), ("out", "hasReason", CASE)]),
        # a body starting with as('s') starts from the labels of 's'
        ("g.V().hasLabel('symptom').as('s').in('exhibits').where(__.as('s').in('exhibits'))",
         [("in", "exhibits", SYMPTOM), ("in", "exhibits", SYMPTOM)]),
        # repeat: the body from every label it reaches; after it, any of them
        ("g.V().hasLabel('case').repeat(__.out('hasReason')).times(2).in('hasReason')",
         [("out", "hasReason", CASE | REASON), ("in", "hasReason", CASE | REASON)]),
        ("g.V().hasLabel('reason').repeat(__.both('similarReason')).emit().in('hasReason')",
         [("both", "similarReason", REASON), ("in", "hasReason", REASON)]),
        # a map step forgets them
        ("g.V().hasLabel('case').values('title').out('hasReason')",
         [("out", "hasReason", None)]),
        # local(...) bodies start from the step's labels
        ("g.V().hasLabel('case').local(__.out('hasReason').limit(2))",
         [("out", "hasReason", CASE)]),
    ],
)  # fmt: skip
def test_labels_at_each_hop(text: str, expected: list[tuple[str, str, Labels]]) -> None:
    assert hops(text) == expected
