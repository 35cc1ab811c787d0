"""Scope resolution: which labels a variable is known to carry where it occurs."""

from __future__ import annotations

import pytest

from query_guard.cypher.ast import NodePattern, Variable
from query_guard.cypher.parser import parse
from query_guard.cypher.scopes import resolve


def labels_at(query: str, needle: str, nth: int = 0) -> frozenset[str]:
    """Labels of the node pattern or variable whose source text is `needle` (nth occurrence)."""
    script = parse(query)
    scopes = resolve(script)
    found = [
        n
        for n in script.walk()
        if isinstance(n, (NodePattern, Variable)) and query[n.span[0] : n.span[1]] == needle
    ]
    assert len(found) > nth, (needle, found)
    return scopes.labels(found[nth])


@pytest.mark.parametrize(
    ("query", "needle", "nth", "expected"),
    [
        # a later pattern of the same variable in the same scope counts
        ("MATCH (a)-[:R]->(b) MATCH (a:Person) RETURN a", "(a)", 0, {"Person"}),
        ("MATCH (a)-[:R]->(b), (a:Person) RETURN a", "(a)", 0, {"Person"}),
        # WHERE label checks, also through AND, not through OR / NOT
        ("MATCH (a)-->(b) WHERE b:Movie AND b.x = 1 RETURN b", "(b)", 0, {"Movie"}),
        ("MATCH (a)-->(b) WHERE b:Movie OR b:Show RETURN b", "(b)", 0, set()),
        ("MATCH (a)-->(b) WHERE NOT b:Movie RETURN b", "(b)", 0, set()),
        # label expressions: conjunctions count, disjunctions and negations do not
        ("MATCH (a:A:B)-->(b) RETURN a", "(a:A:B)", 0, {"A", "B"}),
        ("MATCH (a:A&B)-->(b) RETURN a", "(a:A&B)", 0, {"A", "B"}),
        ("MATCH (a:A|B)-->(b) RETURN a", "(a:A|B)", 0, set()),
        ("MATCH (a:!A)-->(b) RETURN a", "(a:!A)", 0, set()),
        # WITH carries and renames; unprojected variables are dropped
        ("MATCH (a:Person) WITH a AS p MATCH (p)-->(m) RETURN m", "(p)", 0, {"Person"}),
        ("MATCH (a:Person) WITH a MATCH (a)-->(m) RETURN m", "(a)", 0, {"Person"}),
        ("MATCH (a:Person), (b:X) WITH b MATCH (a)-->(b) RETURN a", "(a)", 0, set()),
        ("MATCH (a:Person), (b:X) WITH * MATCH (a)-->(b) RETURN a", "(a)", 0, {"Person"}),
        # a label learnt after the WITH does not flow back
        ("MATCH (a) WITH a MATCH (a:Person) RETURN a", "(a)", 0, set()),
        ("MATCH (a) WITH a MATCH (a:Person) RETURN a", "a", 2, {"Person"}),
        # UNION branches are independent
        ("MATCH (a:Person) RETURN a UNION MATCH (a)-->(b) RETURN a", "(a)", 0, set()),
        # EXISTS / COUNT / COLLECT and pattern comprehensions see the outer scope
        ("MATCH (a:Person) WHERE EXISTS { (a)-->(m:Movie) } RETURN a", "(a)", 0, {"Person"}),
        ("MATCH (a:Person) WHERE EXISTS { MATCH (a)-->(m) } RETURN a", "(a)", 0, {"Person"}),
        ("MATCH (a:Person) RETURN COUNT { (a)-->() } AS c", "(a)", 0, {"Person"}),
        ("MATCH (a:Person) RETURN [(a)-->(m) | m.title] AS t", "(a)", 0, {"Person"}),
        # inside a subquery the inner facts hold too
        ("MATCH (a) WHERE EXISTS { (a:Person)-->(m) WHERE m:Movie } RETURN a", "(m)", 0, {"Movie"}),
        # CALL subqueries import only what they name
        (
            "MATCH (a:P), (b:Q) CALL { WITH a MATCH (a)-->(b) RETURN b AS c } RETURN c",
            "(a)",
            0,
            {"P"},
        ),
        (
            "MATCH (a:P), (b:Q) CALL { WITH a MATCH (a)-->(b) RETURN b AS c } RETURN c",
            "(b)",
            0,
            set(),
        ),
        ("MATCH (a:P), (b:Q) CALL (a) { MATCH (a)-->(b) RETURN b AS c } RETURN c", "(a)", 0, {"P"}),
        ("MATCH (a:P), (b:Q) CALL (a) { MATCH (a)-->(b) RETURN b AS c } RETURN c", "(b)", 0, set()),
        ("MATCH (a:P) CALL { MATCH (a)-->(b) RETURN b } RETURN b", "(a)", 0, set()),
        ("MATCH (a:P) CALL (*) { MATCH (a)-->(b) RETURN b } RETURN b", "(a)", 0, {"P"}),
        # variables returned by a CALL subquery keep their labels outside
        ("MATCH (a:P) CALL (a) { MATCH (a)-->(b:Q) RETURN b } RETURN b", "b", 2, {"Q"}),
        # list comprehension variables are local and shadow outer ones
        ("MATCH (x:Person) RETURN [x IN [1, 2] | x] AS l", "x", 2, set()),
        ("MATCH (x:Person) RETURN [y IN [1, 2] | x] AS l", "x", 1, {"Person"}),
        # anonymous nodes answer with their own labels
        ("MATCH (:Person)-->(m) RETURN m", "(:Person)", 0, {"Person"}),
    ],
)
def test_labels(query: str, needle: str, nth: int, expected: set[str]) -> None:
    assert labels_at(query, needle, nth) == frozenset(expected)


def test_variable_expressions_and_scope_ids() -> None:
    query = "MATCH (a:Person)-->(b) WITH a MATCH (a)-->(c) RETURN a, c"
    script = parse(query)
    scopes = resolve(script)
    variables = [v for v in script.find_all(Variable) if v.name == "a"]
    assert all(scopes.labels(v) == {"Person"} for v in variables)
    ids = [scopes.scope_of(v) for v in variables]
    assert ids[0] == ids[1] and ids[2] == ids[3] and ids[0] != ids[2]


def test_resolve_accepts_a_single_query() -> None:
    script = parse("MATCH (a:Person) RETURN a")
    scopes = resolve(script.statements[0])
    node = next(script.find_all(NodePattern))
    assert scopes.labels(node) == {"Person"}


def test_unknown_node_gives_its_own_labels() -> None:
    scopes = resolve(parse("RETURN 1"))
    other = next(parse("MATCH (a:X) RETURN a").find_all(NodePattern))
    assert scopes.labels(other) == {"X"}
    assert scopes.scope_of(other) is None
