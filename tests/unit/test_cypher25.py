"""Cypher 25 additions (FILTER, LET, standalone ORDER BY / SKIP / OFFSET / LIMIT, WHEN … THEN …
ELSE, the CYPHER 25 prefix): what they parse to, and generated queries that parse → emit →
parse to the same AST (rules: tests/fixtures/cypher_version, read_only, unknown_names)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from query_guard.cypher import ast
from query_guard.cypher.ast_conditional import Conditional
from query_guard.cypher.emit import emit_query, structure
from query_guard.cypher.parser import CypherSyntaxError, parse
from query_guard.cypher.query import CypherQuery
from query_guard.cypher.statement import statement_facts
from tests.budget import examples


def _clauses(text: str) -> list[ast.Clause]:
    statement = parse(text).statements[0]
    assert isinstance(statement, ast.SingleQuery)
    return statement.clauses


def test_filter_and_let_are_star_withs() -> None:
    _, filtered, let, _ = _clauses(
        "MATCH (p:Person) FILTER WHERE p.born > 1960 LET name = p.name, y = p.born RETURN name"
    )
    assert isinstance(filtered, ast.With) and filtered.star and not filtered.items
    assert isinstance(filtered.where, ast.BinaryOp)
    assert isinstance(let, ast.With) and let.star
    assert [i.alias.name for i in let.items if i.alias] == ["name", "y"]


def test_standalone_paging_clauses() -> None:
    _, order, skip, limit, _ = _clauses("MATCH (n) ORDER BY n.x DESC OFFSET 2 LIMIT 3 RETURN n")
    assert isinstance(order, ast.With) and order.order_by[0].descending
    assert isinstance(skip, ast.With) and skip.skip is not None
    assert isinstance(limit, ast.With) and limit.limit is not None


def test_order_by_after_with_stays_the_projections() -> None:
    with_, ret = _clauses("MATCH (n) WITH n ORDER BY n.x LIMIT 3 RETURN n")[1:]
    assert isinstance(with_, ast.With) and with_.order_by and with_.limit is not None
    assert isinstance(ret, ast.Return)


def test_paging_after_a_with_where_is_a_clause_of_its_own() -> None:
    """Neo4j's grammar lets `orderBySkipLimitClause` follow any clause: after a WITH's WHERE an
    ORDER BY can only be one (the WITH's own ORDER BY comes before its WHERE)."""
    _, with_, order, limit, _ = _clauses(
        "UNWIND [3, 1, 2] AS a WITH a WHERE a > 1 ORDER BY a DESC LIMIT 1 RETURN a"
    )
    assert isinstance(with_, ast.With) and with_.where is not None and not with_.order_by
    assert isinstance(order, ast.With) and order.star and order.order_by[0].descending
    assert isinstance(limit, ast.With) and limit.star and limit.limit is not None
    with_, ret = _clauses("WITH 1 AS a ORDER BY a WHERE a > 0 RETURN a")
    assert with_.order_by and with_.where is not None and isinstance(ret, ast.Return)


def test_paging_after_a_with_limit_or_skip_is_a_clause_of_its_own() -> None:
    """After the WITH's own LIMIT (or its SKIP, for an ORDER BY or a SKIP) the projection can take
    no more: Neo4j (5.24+) reads the next ORDER BY / SKIP / LIMIT as a standalone clause."""
    _, with_, order, skip, ret = _clauses(
        "UNWIND [3, 1, 2] AS a WITH a SKIP 1 LIMIT 2 ORDER BY a SKIP 1 RETURN a"
    )
    assert isinstance(with_, ast.With) and with_.skip is not None and with_.limit is not None
    assert isinstance(order, ast.With) and order.star and order.order_by
    assert isinstance(skip, ast.With) and skip.star and skip.skip is not None
    assert isinstance(ret, ast.Return)
    text = "UNWIND [1] AS a WITH a SKIP 1 ORDER BY a LIMIT 1 RETURN a"
    _, with_, order, limit, _ = _clauses(text)
    assert with_.skip is not None and with_.limit is None and not with_.order_by
    assert order.order_by and limit.limit is not None
    _, with_, _ = _clauses("UNWIND [1] AS a WITH a SKIP 1 LIMIT 1 RETURN a")
    assert with_.skip is not None and with_.limit is not None


@pytest.mark.parametrize("text", ["LET x = 1 RETURN x", "FILTER $p RETURN 1 AS one"])
def test_filter_and_let_may_open_a_query(text: str) -> None:
    """Cypher 25's `clause+` has no first-clause rule and FILTER / LET are `WITH * …`, which
    Neo4j accepts with nothing in scope (only `RETURN *` then fails): both open a query."""
    first = _clauses(text)[0]
    assert isinstance(first, ast.With) and first.star


def test_conditional_query() -> None:
    [cond] = _clauses("WHEN $a THEN RETURN 1 AS x WHEN $b THEN {RETURN 2 AS x} ELSE RETURN 3 AS x")
    assert isinstance(cond, Conditional)
    assert len(cond.conditions) == 2 and len(cond.branches) == 3
    assert statement_facts(CypherQuery.parse("WHEN true THEN CREATE (n) RETURN n")) == (False, "rw")


def test_cypher_prefix_keeps_explain() -> None:
    query = CypherQuery.parse("CYPHER 25 EXPLAIN MATCH (n) FILTER n.x = 1 RETURN n")
    assert statement_facts(query) == (True, "r")
    assert isinstance(query.script.statements[0].clauses[0], ast.OtherClause)


@pytest.mark.parametrize(
    "text",
    ["LET = 1 RETURN 1", "MATCH (n) FILTER RETURN n", "WHEN true RETURN 1", "ELSE RETURN 1",
     "CYPHER MATCH (n) RETURN n", "ORDER BY 1 RETURN 1", "WHEN true THEN RETURN 1 ELSE"],
)  # fmt: skip
def test_misplaced_additions_are_syntax_errors(text: str) -> None:
    with pytest.raises(CypherSyntaxError):
        parse(text)


# ---------------------------------------------------------------- generated round trips

_SEPARATORS = [" ", "\n", "  ", "\t", " /* c */ ", "// c\n"]


def _word(draw: st.DrawFn, word: str) -> str:
    return draw(st.sampled_from([word, word.lower(), word.capitalize()]))


@st.composite
def _middle(draw: st.DrawFn) -> list[str]:
    """Clauses that may follow MATCH (n) and precede RETURN."""
    tokens: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["filter", "let", "order", "skip", "limit", "with"]))
        if kind == "filter":
            tokens += [_word(draw, "FILTER")] + (["WHERE"] if draw(st.booleans()) else [])
            tokens += ["n", ".", "x", draw(st.sampled_from(["=", ">", "<>"])), "1"]
        elif kind == "let":
            tokens += [_word(draw, "LET"), "a", "=", "n", ".", "y"]
            tokens += [",", "b", "=", "2"] if draw(st.booleans()) else []
        elif kind == "order":
            tokens += [_word(draw, "ORDER"), "BY", "n", ".", "x"]
            tokens += [draw(st.sampled_from(["ASC", "DESC"]))] if draw(st.booleans()) else []
        elif kind == "skip":
            tokens += [_word(draw, draw(st.sampled_from(["SKIP", "OFFSET"]))), "1"]
        elif kind == "limit":
            tokens += [_word(draw, "LIMIT"), str(draw(st.integers(0, 99)))]
        elif draw(st.booleans()):  # after a WITH's WHERE, standalone clauses may follow
            tokens += ["WITH", "n", _word(draw, "WHERE"), "n", ".", "x", ">", "0"]
        elif draw(st.booleans()):  # and after its own LIMIT (or SKIP) too
            tokens += ["WITH", "n", *draw(st.sampled_from([["SKIP", "1"], []])), "LIMIT", "5"]
        else:  # a WITH without WHERE takes the paging as its own: MATCH again after it
            tokens += ["WITH", "n", "MATCH", "(", "n", ")", "-->", "(", "m", ")"]
    return tokens


@st.composite
def cypher25_queries(draw: st.DrawFn) -> str:
    body = ["MATCH", "(", "n", ":", "A", ")", *draw(_middle()), "RETURN", "n", "AS", "r"]
    shape = draw(st.sampled_from(["plain", "when", "call"]))
    if shape == "when":
        other = ["RETURN", "0", "AS", "r"]
        braced = draw(st.booleans())
        tokens = [_word(draw, "WHEN"), "$p", "THEN", *(["{", *body, "}"] if braced else body)]
        tokens += [_word(draw, "ELSE"), *other] if draw(st.booleans()) else []
    elif shape == "call":
        inner = ["WHEN", "n", ".", "x", ">", "1", "THEN", "{", "RETURN", "1", "AS", "k", "}",
                 "ELSE", "{", "RETURN", "2", "AS", "k", "}"]  # fmt: skip
        tokens = [*body[:-4], "CALL", "(", "n", ")", "{", *inner, "}", "RETURN", "n", ",", "k"]
    else:
        tokens = body
    if draw(st.booleans()):
        tokens = [_word(draw, "CYPHER"), "25", *tokens]
    parts = [tokens[0]]
    for token in tokens[1:]:
        parts += [draw(st.sampled_from(_SEPARATORS)), token]
    return "".join(parts)


@settings(max_examples=examples(150))  # HYPOTHESIS_PROFILE=search: 10,000 (tests/README.md)
@given(cypher25_queries())
def test_cypher25_queries_emit_the_same_ast(text: str) -> None:
    query = CypherQuery.parse(text)
    out = emit_query(query)
    assert structure(parse(out)) == structure(query.script)
    assert emit_query(CypherQuery.parse(out)) == out  # canonical: a fixed point
