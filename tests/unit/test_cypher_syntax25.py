"""Neo4j 5 / Cypher 25 syntax added on branch syntax25: the type names of the manual's "values
and types" page (and Cypher 25's VECTOR types), numbers with underscores, OPTIONAL CALL of a
procedure, the error modes of CALL { … } IN TRANSACTIONS in the AST, and Cypher 25 sequential
queries (`… NEXT …`). Each parses to its node, and its canonical emission parses to the same
AST (the rules' side: tests/fixtures/read_only, limits, cypher_version, unknown_names)."""

from __future__ import annotations

import pytest

from query_guard.cypher import ast
from query_guard.cypher.ast_call import OptionalCallProcedure, TunedCall
from query_guard.cypher.ast_conditional import NextChain
from query_guard.cypher.emit import emit_query, structure
from query_guard.cypher.parser import CypherSyntaxError, parse
from query_guard.cypher.query import CypherQuery
from query_guard.cypher.statement import statement_facts


def _round_trip(text: str) -> CypherQuery:
    query = CypherQuery.parse(text)
    out = emit_query(query)
    assert structure(parse(out)) == structure(query.script)
    return query


def _predicate(text: str) -> str:
    ret = parse(f"RETURN x {text} AS t").statements[0].clauses[0]
    assert isinstance(ret, ast.Return)
    expr = ret.items[0].expr
    assert isinstance(expr, ast.UnaryOp), expr
    return expr.op


@pytest.mark.parametrize(
    ("written", "op"),
    [
        ("IS :: TIME WITH TIME ZONE", "IS :: TIME WITH TIME ZONE"),
        ("IS :: TIME WITH TIMEZONE", "IS :: TIME WITH TIMEZONE"),
        ("IS :: TIMESTAMP WITH TIME ZONE NOT NULL", "IS :: TIMESTAMP WITH TIME ZONE NOT NULL"),
        ("IS NOT :: timestamp with   timezone", "IS NOT :: TIMESTAMP WITH TIMEZONE"),
        ("IS :: INTEGER!", "IS :: INTEGER!"),
        ("IS :: INTEGER LIST", "IS :: INTEGER LIST"),
        ("IS :: INTEGER NOT NULL LIST NOT NULL", "IS :: INTEGER NOT NULL LIST NOT NULL"),
        ("IS :: STRING! ARRAY!", "IS :: STRING! ARRAY!"),
        ("IS :: ANY VALUE<INTEGER | FLOAT>", "IS :: ANY VALUE<INTEGER | FLOAT>"),
        (":: LIST<ZONED DATETIME!>!", "IS :: LIST<ZONED DATETIME!>!"),
        ("IS :: VECTOR<INTEGER8>(3)", "IS :: VECTOR<INTEGER8>(3)"),
        ("IS :: VECTOR(1_024) NOT NULL", "IS :: VECTOR(1024) NOT NULL"),
    ],
)
def test_type_names_of_the_manual(written: str, op: str) -> None:
    assert _predicate(written) == op
    _round_trip(f"RETURN x {written} AS t")


def test_with_in_a_type_name_only_before_time_zone() -> None:
    """`WITH` after a type reads as a type word only before TIME ZONE / TIMEZONE; otherwise it
    starts the next clause."""
    with_, next_with, _ = parse("WITH 1 :: INTEGER AS a WITH a RETURN a").statements[0].clauses
    assert isinstance(with_, ast.With) and isinstance(next_with, ast.With)


@pytest.mark.parametrize(
    ("written", "value"),
    [("1_000_000", 1_000_000), ("0x_FC3A9", 0xFC3A9), ("0xFF_FF", 0xFFFF), ("0o_1372", 0o1372)],
)
def test_integers_with_underscores(written: str, value: int) -> None:
    ret = parse(f"RETURN {written} AS n").statements[0].clauses[0]
    assert isinstance(ret, ast.Return)
    literal = ret.items[0].expr
    assert isinstance(literal, ast.Literal) and literal.value == value
    assert emit_query(_round_trip(f"RETURN {written} AS n")) == f"RETURN {value} AS n"


def test_floats_with_underscores() -> None:
    ret = parse("RETURN 1_000.000_5 AS f, 6.022E2_3 AS g").statements[0].clauses[0]
    assert isinstance(ret, ast.Return)
    assert [i.expr.value for i in ret.items] == [1000.0005, 6.022e23]  # type: ignore[attr-defined]


@pytest.mark.parametrize("text", ["RETURN 0_17", "RETURN 1__0", "RETURN 1_", "RETURN 0x_"])
def test_misplaced_underscores_are_not_numbers(text: str) -> None:
    with pytest.raises(CypherSyntaxError):
        parse(text)


def test_optional_call_procedure() -> None:
    query = _round_trip("OPTIONAL CALL db.labels() YIELD label RETURN label")
    call = query.script.statements[0].clauses[0]  # type: ignore[union-attr]
    assert isinstance(call, OptionalCallProcedure) and call.name == "db.labels"
    plain = parse("CALL db.labels() YIELD label RETURN label").statements[0].clauses[0]
    assert type(plain) is ast.CallProcedure


def test_optional_call_subquery_is_a_tuned_call() -> None:
    clauses = parse("MATCH (p) OPTIONAL CALL (p) { MATCH (p)--(q) RETURN q } RETURN q")
    call = clauses.statements[0].clauses[1]  # type: ignore[union-attr]
    assert isinstance(call, TunedCall) and call.optional and not call.in_transactions
    plain = parse("MATCH (p) CALL (p) { RETURN 1 AS one } RETURN one").statements[0]
    assert type(plain.clauses[1]) is ast.CallSubquery  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("suffix", "on_error", "then", "report"),
    [
        ("ON ERROR CONTINUE", "CONTINUE", "", None),
        ("ON ERROR BREAK REPORT STATUS AS s", "BREAK", "", "s"),
        ("OF 5 ROWS ON ERROR FAIL", "FAIL", "", None),
        ("ON ERROR RETRY FOR 2 SECONDS THEN BREAK", "RETRY", "BREAK", None),
        ("ON ERROR RETRY", "RETRY", "", None),
        ("REPORT STATUS AS st", "", "", "st"),
    ],
)
def test_in_transactions_error_modes(
    suffix: str, on_error: str, then: str, report: str | None
) -> None:
    text = f"MATCH (n) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS {suffix}"
    call = _round_trip(text).script.statements[0].clauses[1]  # type: ignore[union-attr]
    assert isinstance(call, TunedCall) and call.in_transactions
    assert (call.on_error, call.then, call.report) == (on_error, then, report)


def test_next_is_one_chain_of_parts() -> None:
    text = "MATCH (p:Person) RETURN p NEXT MATCH (p)-->(m) RETURN m NEXT CREATE (x) RETURN x"
    query = _round_trip(text)
    (chain,) = query.script.statements[0].clauses  # type: ignore[union-attr]
    assert isinstance(chain, NextChain) and len(chain.parts) == 3
    assert statement_facts(query) == (False, "rw")
    assert statement_facts(CypherQuery.parse("RETURN 1 AS a NEXT RETURN a")) == (False, "r")


def test_next_inside_call_explain_and_prefix() -> None:
    call = parse("CALL { RETURN 1 AS a NEXT RETURN a } RETURN a").statements[0].clauses[0]  # type: ignore[union-attr]
    assert isinstance(call, ast.CallSubquery) and isinstance(call.body.clauses[0], NextChain)  # type: ignore[union-attr]
    for text in ("EXPLAIN RETURN 1 AS a NEXT RETURN a", "CYPHER 25 RETURN 1 AS a NEXT RETURN a"):
        first, chain = parse(text).statements[0].clauses  # type: ignore[union-attr]
        assert isinstance(first, ast.OtherClause) and isinstance(chain, NextChain)
    assert statement_facts(CypherQuery.parse("EXPLAIN RETURN 1 AS a NEXT RETURN a"))[0]


def test_next_inside_a_braced_when_branch() -> None:
    (when,) = (
        parse("WHEN $a THEN { RETURN 1 AS x NEXT RETURN x } ELSE { RETURN 2 AS x }")
        .statements[0]
        .clauses
    )  # type: ignore[union-attr]
    assert isinstance(when.branches[0].clauses[0], NextChain)  # type: ignore[attr-defined]


def test_next_stays_a_name_elsewhere() -> None:
    ret = parse("WITH {next: 1} AS next RETURN next.next AS next").statements[0].clauses[1]
    assert isinstance(ret, ast.Return) and ret.items[0].alias.name == "next"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "write"),
    [
        ("MATCH (n) WHERE n.x :: INTEGER! SET n.y = 1", ast.SetClause),
        ("MATCH (n) WHERE n.t :: TIME WITH TIME ZONE WITH n CREATE (m)", ast.Create),
        ("MATCH (n) WHERE n.v :: VECTOR(3) REMOVE n.v", ast.Remove),
        ("MATCH (n) WHERE n.x :: ANY VALUE<INTEGER> FOREACH (i IN [1] | CREATE (m))", ast.Foreach),
        ("MATCH (n) WHERE n.x :: INTEGER NOT NULL LIST! MERGE (m)", ast.Merge),
        ("MATCH (n) WHERE n.x = 1_000 DETACH DELETE n", ast.Delete),
    ],
)
def test_a_write_after_a_new_form_stays_a_clause(text: str, write: type[ast.Clause]) -> None:
    """Red team: the words of a type name or a number never swallow the clause after them."""
    clauses = parse(text).statements[0].clauses  # type: ignore[union-attr]
    assert isinstance(clauses[-1], write)
