"""Apache AGE: Cypher inside SQL (`SELECT * FROM cypher('g', $$ … $$) AS (v agtype)`). The body
is judged by every Cypher rule with spans and fixes in the SQL text; the wrapper by the SQL
rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard
from query_guard.schema.catalog import SchemaCatalog
from query_guard.sql.query import SqlQuery

SCHEMAS = Path(__file__).resolve().parents[1] / "fixtures" / "schemas"


@pytest.fixture(scope="module")
def guard() -> Guard:
    schema = SchemaCatalog.load(SCHEMAS / "movies.json")
    return build_guard(parse_config({}), schema, entry_points=False)


def _age(body: str, tail: str = "", quote: str = "$$") -> str:
    return f"SELECT * FROM cypher('movies', {quote}{body}{quote}) AS (v agtype){tail}"


def test_a_write_in_the_body_blocks_with_its_span_in_the_sql(guard: Guard) -> None:
    text = _age(" MATCH (n:Person) DETACH DELETE n ", quote="$q$")
    verdict = guard.check(text, "sql")
    assert verdict.blocked
    write = next(f for f in verdict.findings if f.code == "SEC.WRITE")
    assert text[write.span[0] : write.span[1]].startswith("DETACH DELETE")


def test_body_fixes_land_in_the_sql_text(guard: Guard) -> None:
    body = " MATCH (m:Movie)-[:ACTED_IN]->(p:Person) RETURN p.name "
    verdict = guard.check(_age(body, " LIMIT 5"), "sql")
    assert verdict.action == "rewrite"
    assert "DIR.REVERSED" in verdict.codes
    assert "(m:Movie)<-[:ACTED_IN]-(p:Person) RETURN p.name LIMIT 1000 $$" in verdict.query
    assert verdict.query.endswith(") AS (v agtype) LIMIT 5")
    assert guard.check(verdict.query, "sql").action == "allow"  # a fixed point
    emitted = SqlQuery.parse(verdict.query, "postgres").emit()  # what PostgreSQL would get
    assert "$$ MATCH (m:Movie)<-[:ACTED_IN]-(p:Person) RETURN p.name LIMIT 1000 $$" in emitted


def test_cypher_syntax_errors_point_into_the_body(guard: Guard) -> None:
    text = _age(" MATCH (n RETURN n ")
    verdict = guard.check(text, "sql")
    assert verdict.blocked and "SYN.PARSE" in verdict.codes
    error = next(f for f in verdict.findings if f.code == "SYN.PARSE")
    assert text[error.span[0] :].startswith("RETURN")


def test_the_wrapper_is_judged_by_the_sql_rules(guard: Guard) -> None:
    verdict = guard.check(_age(" MATCH (n:Person) RETURN n.name LIMIT 3 ", "; DROP TABLE t"), "sql")
    assert verdict.blocked and "SEC.MULTI_STATEMENT" in verdict.codes
    verdict = guard.check(_age(" MATCH (n:Person) RETURN n.name LIMIT 3 ", " LIMIT 10"), "sql")
    assert verdict.action == "allow"


def test_other_dollar_quoted_strings_are_not_cypher(guard: Guard) -> None:
    text = "SELECT length($$ MATCH (n RETURN n $$) AS x"
    verdict = guard.check(text, "sql")
    assert not verdict.blocked and verdict.codes == ["LIM.INJECTED"]
    assert verdict.query == text + " LIMIT 1000"


@pytest.mark.parametrize(
    "text",
    [
        "SELECT * FROM cypher('movies', 'CREATE (:Person {name: ''x''})') AS (v agtype)",
        "SELECT * FROM cypher('movies', E'MATCH (n) DETACH DELETE n') AS (v agtype)",
        "SELECT * FROM cypher(graph_name => 'movies', query_string => $$ MATCH (n) DETACH DELETE n"
        " $$) AS (v agtype)",
        "SELECT * FROM cypher('movies', 'MATCH (n) ' || 'DETACH DELETE n') AS (v agtype)",
        "SELECT * FROM cypher('movies', $1) AS (v agtype)",
        "SELECT * FROM cypher('movies') AS (v agtype)",
        "SELECT * FROM ag_catalog.cypher('movies', 'CREATE (:X)') AS (v agtype)",
    ],
    ids=["plain", "e-string", "named", "concatenation", "parameter", "no-query", "qualified"],
)
def test_a_query_argument_the_guard_cannot_judge_is_refused(guard: Guard, text: str) -> None:
    verdict = guard.check(text, "sql")
    assert verdict.blocked
    refusals = [f for f in verdict.findings if f.severity == "error"]
    assert any(f.code == "SEC.FUNCTION" and "dollar-quoted" in f.message for f in refusals), (
        verdict.findings
    )


def test_a_dollar_quoted_read_is_still_judged_and_allowed(guard: Guard) -> None:
    verdict = guard.check(_age(" MATCH (n:Person) RETURN n.name LIMIT 3 "), "sql")
    assert not verdict.blocked and "SEC.FUNCTION" not in verdict.codes
