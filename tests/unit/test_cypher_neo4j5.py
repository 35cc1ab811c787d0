"""Neo4j 5 syntax the peers' libraries send (issue 21): dynamic labels and types `$(…)`,
parameterised index/constraint names, schema and SHOW commands under EXPLAIN / PROFILE,
`CALL (x) {…}`, FINISH, planner hints (`USING INDEX …`), Cypher 25 match modes.
Each parses, re-emits exactly, and is judged by the same rules: a dynamic name is one the
schema rules cannot check (SCH.DYNAMIC_NAME, info, never blocking a read); writes stay blocked
in read-only mode."""

from __future__ import annotations

import pytest

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.cypher import ast
from query_guard.cypher.ast_dynamic import LabelDynamic
from query_guard.cypher.ast_match import PlannerHint, TunedMatch
from query_guard.cypher.ast_schema import SchemaDefinition
from query_guard.cypher.emit import emit_query, structure
from query_guard.cypher.parser import CypherSyntaxError, parse
from query_guard.cypher.query import CypherQuery
from query_guard.schema.catalog import SchemaCatalog

SCHEMA = SchemaCatalog.from_triples("(Person, ACTED_IN, Movie), (Person, DIRECTED, Movie)")
READ_ONLY = build_guard(parse_config({}), SCHEMA)
WRITABLE = build_guard(parse_config({"guard": {"read_only": False}}), SCHEMA)

DYNAMIC_READS = [
    "MATCH (n:$($label)) RETURN n.name AS name LIMIT 5",
    "MATCH (n:$all($labels)) RETURN n LIMIT 5",
    "MATCH (n:$any($labels)) RETURN n LIMIT 5",
    "MATCH (n:Person&$($label)) RETURN n LIMIT 5",
    "MATCH (p:Person)-[:$($type)]->(m:Movie) RETURN m LIMIT 5",
    "MATCH ()-[r:$any($types)]->() RETURN count(r) AS c",
    "MATCH (n) WHERE n:$($label) RETURN n LIMIT 5",
]
DYNAMIC_WRITES = [
    "UNWIND $rows AS row MERGE (n:__Entity__ {id: row.id}) SET n:$(row.labels)",  # graphrag
    "CREATE (:$($label) {name: $name})",
    "MATCH (a {id: $a}), (b {id: $b}) CREATE (a)-[:$($type)]->(b)",
    "UNWIND $rows AS row MATCH (a {id: row.s}), (b {id: row.t}) MERGE (a)-[r:$(row.type)]->(b)",
    "MATCH (n:Person) REMOVE n:$($label)",
    "MATCH (n:Person) SET n[$key] = $value",
]
SCHEMA_STATEMENTS = [
    "CREATE INDEX $name IF NOT EXISTS FOR (n:Person) ON (n.name)",
    "CREATE VECTOR INDEX $name IF NOT EXISTS FOR (n:Chunk) ON n.embedding",
    "CREATE CONSTRAINT $name IF NOT EXISTS FOR (n:Person) REQUIRE n.id IS UNIQUE",
    "DROP INDEX $name IF EXISTS",
    "DROP CONSTRAINT $name",
]
EXPLAINED_SCHEMA = [
    "EXPLAIN CREATE INDEX i FOR (n:Person) ON (n.name)",
    "EXPLAIN CREATE INDEX $name IF NOT EXISTS FOR ()-[r:ACTED_IN]-() ON (r.role)",
    "EXPLAIN CREATE VECTOR INDEX v IF NOT EXISTS FOR (n:Chunk) ON n.embedding "
    "OPTIONS {indexConfig: {`vector.dimensions`: 3}}",
    "EXPLAIN CREATE FULLTEXT INDEX f FOR (n:Person|Movie) ON EACH [n.name, n.title]",
    "EXPLAIN CREATE CONSTRAINT c FOR (n:Person) REQUIRE n.id IS UNIQUE",
    "EXPLAIN DROP INDEX i IF EXISTS",
    "EXPLAIN DROP CONSTRAINT $name",
]
EXPLAINED_SHOW = [
    "EXPLAIN SHOW INDEXES",
    "EXPLAIN SHOW CONSTRAINTS YIELD name, type WHERE type = 'UNIQUENESS' RETURN name",
    "PROFILE SHOW PROCEDURES YIELD name",
]
OTHER = [
    "MATCH (p:Person) CALL (p){MATCH (p)-[:ACTED_IN]->(m) RETURN m} RETURN m LIMIT 5",
    "MATCH (p:Person) SET p.seen = true FINISH",
    "MATCH (p:Person) USING INDEX p:Person(name) WHERE p.name = $n RETURN p",
    "MATCH (p:Person) USING TEXT INDEX SEEK p:Person(name) WHERE p.name CONTAINS 'a' RETURN p",
    "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) USING SCAN p:Person USING JOIN ON p, m RETURN m",
    "MATCH REPEATABLE ELEMENTS p = (a:Person)-[:ACTED_IN]-{1, 3}(b) RETURN p",
    "MATCH DIFFERENT RELATIONSHIPS (a:Person)-[:ACTED_IN]->(b) RETURN a",
    "MATCH different = (a:Person)-->(b) RETURN different",
    "UNWIND $ids AS i CALL (i){MERGE (u:User {id: i})} IN TRANSACTIONS ON ERROR RETRY 1 SECOND "
    "THEN FAIL",
    "UNWIND $ids AS i CALL (i){MERGE (u:User {id: i})} IN 2 CONCURRENT TRANSACTIONS OF 10 ROWS "
    "ON ERROR RETRY FOR $s SECONDS THEN CONTINUE REPORT STATUS AS st RETURN st",
    "UNWIND $ids AS i CALL (i){MERGE (u:User {id: i})} IN TRANSACTIONS ON ERROR RETRY",
]
ALL = (
    DYNAMIC_READS + DYNAMIC_WRITES + SCHEMA_STATEMENTS + EXPLAINED_SCHEMA + EXPLAINED_SHOW + OTHER
)


@pytest.mark.parametrize("text", ALL)
def test_neo4j5_syntax_parses_and_re_emits_exactly(text: str) -> None:
    """(The texts are written the way the canonical emitter spaces them.)"""
    out = emit_query(CypherQuery.parse(text))
    assert out == text
    assert structure(parse(out)) == structure(parse(text))


def test_dynamic_labels_read_as_what_they_are() -> None:
    query = CypherQuery.parse("MATCH (n:$any($labels))-[:$(row.type)]->(m:$all(['A', 'B'])) "
                              "RETURN n")  # fmt: skip
    dynamic = list(query.find(LabelDynamic))
    assert [d.mode for d in dynamic] == ["any", "all", "all"]
    assert [query.text[slice(*d.expr.span)] for d in dynamic] == [
        "$labels", "row.type", "['A', 'B']"
    ]  # fmt: skip


def test_hints_and_match_modes_read_as_what_they_are() -> None:
    query = CypherQuery.parse(
        "MATCH REPEATABLE ELEMENT (a:Person)-->(b) USING RANGE INDEX a:Person(name, born) "
        "USING JOIN ON a, b WHERE a.name = 'x' RETURN b"
    )
    [match] = query.find(TunedMatch)
    assert match.mode == "REPEATABLE ELEMENTS" and match.where is not None
    index, join = match.hints
    assert (index.kind, index.label) == ("RANGE INDEX", "Person")
    assert index.properties == ["name", "born"]
    assert [v.name for v in join.variables] == ["a", "b"] and join.kind == "JOIN"
    assert not list(CypherQuery.parse("MATCH (n) RETURN n").find(TunedMatch))
    assert list(CypherQuery.parse("MATCH (n:A) USING SCAN n:A RETURN n").find(PlannerHint))


def test_only_any_and_all_name_a_dynamic_label() -> None:
    with pytest.raises(CypherSyntaxError):
        CypherQuery.parse("MATCH (n:$some($labels)) RETURN n")


def test_a_parameter_names_an_index_or_constraint() -> None:
    (node,) = CypherQuery.parse("DROP INDEX $name IF EXISTS").find(SchemaDefinition)
    assert node.name is None and node.name_parameter is not None
    assert node.name_parameter.name == "name" and node.if_exists


@pytest.mark.parametrize("text", DYNAMIC_READS)
def test_a_dynamic_name_in_a_read_is_info_and_runs(text: str) -> None:
    for guard in (READ_ONLY, WRITABLE):
        verdict = guard.check(text)
        assert not verdict.blocked, verdict.findings
        assert "SCH.DYNAMIC_NAME" in verdict.codes
        assert verdict.query_type == "r"
        assert not {"SCH.UNKNOWN_LABEL", "SCH.UNKNOWN_REL_TYPE", "SCH.NO_PATH"} & set(
            verdict.codes
        )
        assert verdict.to_run == text


@pytest.mark.parametrize("text", DYNAMIC_WRITES + SCHEMA_STATEMENTS)
def test_writes_with_the_new_syntax_stay_blocked_in_read_only_mode(text: str) -> None:
    refused = READ_ONLY.check(text)
    assert refused.blocked and "SEC.WRITE" in refused.codes
    allowed = WRITABLE.check(text)
    assert not allowed.blocked and allowed.to_run == text
    assert allowed.query_type in ("w", "s")


def test_the_expression_inside_a_dynamic_label_is_judged() -> None:
    verdict = WRITABLE.check("MATCH (n:Person) SET n:$(dbms.killQuery('x'))")
    assert verdict.blocked and "SEC.PROCEDURE" in verdict.codes


@pytest.mark.parametrize("text", EXPLAINED_SCHEMA)
def test_explain_of_a_schema_command_is_answered_in_read_only_mode(text: str) -> None:
    verdict = READ_ONLY.check(text)
    assert not verdict.blocked and verdict.explain and verdict.query_type == "s"


@pytest.mark.parametrize("text", EXPLAINED_SHOW)
def test_explain_and_profile_of_a_show_command_are_reads(text: str) -> None:
    verdict = READ_ONLY.check(text)
    assert not verdict.blocked and verdict.query_type == "r"
    assert verdict.explain == text.startswith("EXPLAIN")
    refused = READ_ONLY.check("PROFILE SHOW USERS")
    assert refused.blocked and "SEC.WRITE" in refused.codes


def test_the_expressions_of_in_transactions_are_judged() -> None:
    """`IN n CONCURRENT TRANSACTIONS OF r ROWS`: both expressions are in the AST, so a function
    that runs code there is refused like anywhere else."""
    text = (
        "UNWIND $rows AS row CALL (row) { CREATE (:Person {id: row.id}) } "
        "IN TRANSACTIONS OF apoc.cypher.runFirstColumnSingle('RETURN 1', {}) ROWS"
    )
    verdict = WRITABLE.check(text)
    assert verdict.blocked and "SEC.PROCEDURE" in verdict.codes
    call_text = "apoc.cypher.runFirstColumnSingle('RETURN 1', {})"
    query = CypherQuery.parse(text.replace(call_text, "$n"))
    [call] = query.find(ast.CallSubquery)
    assert call.in_transactions and [type(x).__name__ for x in call.batch] == ["Parameter"]
    retry = CypherQuery.parse(text.replace(call_text, "$n") + " ON ERROR RETRY FOR $s SECONDS")
    [call] = retry.find(ast.CallSubquery)
    assert [x.name for x in call.batch if isinstance(x, ast.Parameter)] == ["n", "s"]
