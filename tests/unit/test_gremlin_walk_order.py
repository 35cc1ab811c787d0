"""The Gremlin-specific walks give what the generic tree walk gives, in the same order:
`traversals_and_steps` (behind `GremlinQuery.steps()` / `traversals()`) and
`nested_traversals`' shortcuts past childless arguments, over TinkerPop's feature traversals
and hand-made trees (a bytecode tree included)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from query_guard.gremlin import ast
from query_guard.gremlin.edits import nested_traversals
from query_guard.gremlin.errors import GremlinError
from query_guard.gremlin.language import traversals_and_steps
from query_guard.gremlin.parser import parse_traversal
from query_guard.guard.tree import TreeNode
from tests.corpora import read_jsonl

EXTRA = [
    "g.V().has('age', P.gt(1).and(P.lt(5)).or(P.within([1, 2])))",
    "g.V().where(__.out('a').has('x', P.without(__.values('b')))).local(__.in())",
    "g.withStrategies(SubgraphStrategy(vertices: __.has('a'), edges: __.hasLabel('e')))"
    ".V().union(__.out(), [__.in()], ['k': __.both()], [(T.id): 1])",
    "g.inject({1, 2}).mergeV([(T.label): 'a', 'p': Cardinality.single(__.constant(1))])",
    "g.V(datetime('2023-08-08T00:00:00Z'), UUID('ab000000-0000-0000-0000-000000000000')).toList()",
]


def _trees() -> list[ast.Traversal]:
    texts = [r["text"] for r in read_jsonl("gremlin", "tinkerpop_traversals.jsonl")] + EXTRA
    trees = []
    for text in texts:
        try:
            trees.append(parse_traversal(text))
        except GremlinError:
            continue
    return trees


@pytest.fixture(scope="module")
def trees() -> list[ast.Traversal]:
    return _trees()


def _ids(nodes: list[TreeNode] | list[ast.Traversal] | list[ast.Step]) -> list[int]:
    return [id(n) for n in nodes]


def test_traversals_and_steps_is_the_generic_preorder(trees: list[ast.Traversal]) -> None:
    assert len(trees) > 1500
    for tree in trees:
        lists = traversals_and_steps(tree)
        assert lists is not None
        nodes = list(tree.walk())
        assert _ids(lists[0]) == _ids([n for n in nodes if isinstance(n, ast.Traversal)])
        assert _ids(lists[1]) == _ids([n for n in nodes if isinstance(n, ast.Step)])


def _generic_nested(step: ast.Step) -> Iterator[ast.Traversal]:
    stack: list[TreeNode] = list(reversed(step.args))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Traversal):
            yield node
        else:
            stack.extend(reversed(list(node.children())))


def test_nested_traversals_is_the_generic_walk(trees: list[ast.Traversal]) -> None:
    for tree in trees:
        for step in tree.find_all(ast.Step):
            assert _ids(list(nested_traversals(step))) == _ids(list(_generic_nested(step)))


@dataclass(eq=False, slots=True)
class _Custom(ast.Arg):
    """A node class the Gremlin walk does not know (a plugin's own argument)."""

    inner: ast.Traversal


def test_an_unknown_node_class_leaves_the_walk_to_the_generic_index() -> None:
    inner = parse_traversal("__.out()", allow_anonymous=True)
    tree = parse_traversal("g.V().where(__.in())")
    tree.steps[0].args.append(_Custom(ast.NO_SPAN, inner))
    assert traversals_and_steps(tree) is None
    step = tree.steps[0]
    assert _ids(list(nested_traversals(step))) == _ids(list(_generic_nested(step)))
    assert len(list(nested_traversals(step))) == 2


def test_similarity_steps_are_found_once_per_parse_and_settings() -> None:
    from query_guard.gremlin.language import GremlinQuery
    from query_guard.gremlin.similarity import SimilaritySettings
    from query_guard.gremlin.walks import similarity_steps

    q = GremlinQuery.parse(
        "g.V(1).out('hasReason').bothE('similarReason').otherV()"
        ".local(__.outE('similarReason').inV()).values('x')"
    )
    sim = SimilaritySettings(edges=(("similarReason", "hasReason"),))
    first = list(similarity_steps(q, sim))
    assert [s.step.name for s in first] == ["bothE", "outE"]
    assert [id(s) for s in similarity_steps(q, sim)] == [id(s) for s in first]
    other = SimilaritySettings(edges=(("similarReason", "hasReason"),))
    again = list(similarity_steps(q, other))  # another settings object: found again
    assert [id(s) for s in again] != [id(s) for s in first]
    assert again == first
    none = SimilaritySettings(edges=(("similarSymptoms", "exhibits"),))
    assert list(similarity_steps(q, none)) == []
    fresh = GremlinQuery.parse(q.text)  # another parse: its own walk
    assert [id(s) for s in similarity_steps(fresh, sim)] != [id(s) for s in first]
