"""SHOW / TERMINATE / admin commands parsed and judged, functions by allow-list, procedures
unknown vs forbidden — through the parser, the read-only rule, the Bolt diagnostics, and the
real neo4j driver against the proxy in front of the embedded FalkorDB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import neo4j
import pytest
from neo4j import exceptions as nex

from query_guard.build import default_languages
from query_guard.config.load import ConfigError, parse_config
from query_guard.cypher import ast
from query_guard.cypher.functions import is_allowed_function
from query_guard.cypher.parser import parse
from query_guard.frontends.bolt import diagnostics as diag
from query_guard.guard.pipeline import Guard
from query_guard.guard.registry import build_plugin_manager
from query_guard.model import Verdict
from query_guard.schema.context import GuardContext
from query_guard.sql.functions_page import functions_page
from tests.e2e.test_e2e_falkordb import driver, proxy  # noqa: F401 - module fixtures reused

ROOT = Path(__file__).resolve().parents[2]


def guard(served: frozenset[str] = frozenset(), rules: list[str] | None = None, **g: Any) -> Guard:
    settings = parse_config({"guard": g}).guard
    rules = rules or ["query_guard.rules.read_only", "query_guard.rules.admin_commands"]
    pm = build_plugin_manager(builtins=rules, entry_points=False)
    return Guard(pm, GuardContext(settings=settings, served_procedures=served), default_languages())


def verdict(query: str, **g: Any) -> Verdict:
    return guard(**g).check(query)


def show(query: str) -> list[ast.ShowCommand]:
    (statement,) = parse(query).statements
    assert isinstance(statement, ast.SingleQuery)
    assert all(isinstance(c, ast.ShowCommand) for c in statement.clauses)
    return statement.clauses  # type: ignore[return-value]


# ---------------------------------------------------------------------- the grammar


def test_show_with_yield_order_skip_limit_where_return() -> None:
    (cmd,) = show(
        "SHOW RANGE INDEXES YIELD name, labelsOrTypes AS lt ORDER BY name SKIP 1 LIMIT 5 "
        "WHERE size(lt) > 0 RETURN name, lt"
    )
    assert cmd.kind == "SHOW RANGE INDEXES" and cmd.target == "INDEXES"
    assert [i.expr.name for i in cmd.yield_items] == ["name", "labelsOrTypes"]  # type: ignore
    assert cmd.yield_items[1].alias is not None and cmd.yield_items[1].alias.name == "lt"
    assert [s.expr.name for s in cmd.order_by] == ["name"]  # type: ignore[attr-defined]
    assert isinstance(cmd.skip, ast.Literal) and cmd.skip.value == 1
    assert isinstance(cmd.limit, ast.Literal) and cmd.limit.value == 5
    assert isinstance(cmd.where, ast.BinaryOp) and cmd.where.op == ">"
    assert cmd.returns is not None and len(cmd.returns.items) == 2


def test_show_where_yield_star_and_brief() -> None:
    (where,) = show("SHOW FUNCTIONS WHERE name STARTS WITH 'apoc'")
    assert where.target == "FUNCTIONS" and isinstance(where.where, ast.BinaryOp)
    (star,) = show("SHOW PROCEDURES YIELD *")
    assert star.yield_star and not star.yield_items
    (brief,) = show("SHOW UNIQUE CONSTRAINTS VERBOSE OUTPUT")
    assert brief.kind == "SHOW UNIQUE CONSTRAINTS" and brief.where is None


@pytest.mark.parametrize(
    ("query", "kind", "target"),
    [
        ("SHOW INDEX", "SHOW INDEX", "INDEXES"),
        ("show all indexes", "SHOW ALL INDEXES", "INDEXES"),
        ("SHOW VECTOR INDEXES", "SHOW VECTOR INDEXES", "INDEXES"),
        ("SHOW NODE KEY CONSTRAINTS", "SHOW NODE KEY CONSTRAINTS", "CONSTRAINTS"),
        ("SHOW PROPERTY TYPE CONSTRAINTS", "SHOW PROPERTY TYPE CONSTRAINTS", "CONSTRAINTS"),
        ("SHOW BUILT IN FUNCTIONS", "SHOW BUILT IN FUNCTIONS", "FUNCTIONS"),
        ("SHOW USER DEFINED FUNCTION", "SHOW USER DEFINED FUNCTION", "FUNCTIONS"),
        ("SHOW PROCEDURE", "SHOW PROCEDURE", "PROCEDURES"),
        ("SHOW TRANSACTIONS", "SHOW TRANSACTIONS", "TRANSACTIONS"),
        ("SHOW SETTING 'db.*'", "SHOW SETTING", "SETTINGS"),
        ("SHOW DATABASES", "SHOW DATABASES", "DATABASES"),
        ("SHOW HOME DATABASE", "SHOW HOME DATABASE", "HOME DATABASE"),
        ("SHOW USERS WITH AUTH", "SHOW USERS WITH AUTH", "USERS WITH AUTH"),
        ("SHOW CURRENT USER", "SHOW CURRENT USER", "CURRENT USER"),
        ("SHOW ROLE reader, `writer` PRIVILEGES", "SHOW ROLE PRIVILEGES", "ROLE PRIVILEGES"),
        ("SHOW SERVERS", "SHOW SERVERS", "SERVERS"),
        ("SHOW ALIAS a.b FOR DATABASE", "SHOW ALIAS FOR DATABASE", "ALIAS FOR DATABASE"),
        ("TERMINATE TRANSACTION 'x-1'", "TERMINATE TRANSACTION", "TERMINATE TRANSACTIONS"),
    ],
)
def test_show_kinds_and_targets(query: str, kind: str, target: str) -> None:
    (cmd,) = show(query)
    assert (cmd.kind, cmd.target) == (kind, target)


def test_composed_commands_are_consecutive_clauses() -> None:
    first, second = show(
        "SHOW TRANSACTIONS YIELD transactionId AS t, currentQuery AS q WHERE q CONTAINS 'x' "
        "TERMINATE TRANSACTIONS t YIELD message RETURN message"
    )
    assert first.target == "TRANSACTIONS" and second.target == "TERMINATE TRANSACTIONS"
    assert isinstance(second.names[0], ast.Variable) and second.returns is not None


def test_use_before_show_stays_its_own_clause() -> None:
    (statement,) = parse("USE movies SHOW INDEXES YIELD name").statements
    use, cmd = statement.clauses  # type: ignore[union-attr]
    assert isinstance(use, ast.OtherClause) and use.kind == "USE"
    assert isinstance(cmd, ast.ShowCommand) and cmd.target == "INDEXES"


def test_show_body_nodes_are_in_the_tree() -> None:
    (cmd,) = show("SHOW INDEXES YIELD name WHERE EXISTS { MATCH (n:Person) RETURN n }")
    assert any(isinstance(n, ast.SubqueryExpr) for n in cmd.walk())


def test_keywords_of_show_stay_names_elsewhere() -> None:
    query = "MATCH (user:User {key: 1}) RETURN user.type AS type, user.settings AS settings"
    assert isinstance(parse(query).statements[0], ast.SingleQuery)


def test_other_admin_commands_are_recognised() -> None:
    for text, kind in [
        ("GRANT ROLE admin TO eve", "GRANT ROLE"),
        ("ALTER USER eve SET PASSWORD 'x'", "ALTER USER"),
        ("START DATABASE movies", "START DATABASE"),
        ("CREATE OR REPLACE DATABASE x", "CREATE OR REPLACE DATABASE"),
        ("DRYRUN REALLOCATE DATABASES", "DRYRUN"),
    ]:
        cmd = parse(text).statements[0].clauses[0]  # type: ignore[union-attr]
        assert isinstance(cmd, ast.SchemaCommand) and cmd.kind.startswith(kind), text


# ---------------------------------------------------------------------- judged read-only

ALLOWED_SHOWS = [
    "SHOW INDEXES",
    "SHOW INDEX",
    "SHOW ALL INDEXES",
    "SHOW RANGE INDEXES",
    "SHOW FULLTEXT INDEXES YIELD name",
    "SHOW VECTOR INDEXES WHERE state = 'ONLINE'",
    "SHOW INDEXES BRIEF",
    "SHOW CONSTRAINTS",
    "SHOW UNIQUENESS CONSTRAINTS",
    "SHOW EXISTENCE CONSTRAINTS YIELD name, type RETURN name",
    "SHOW CONSTRAINTS YIELD * WHERE type STARTS WITH 'UNIQUE' RETURN name ORDER BY name",
    "SHOW FUNCTIONS",
    "SHOW BUILT IN FUNCTIONS YIELD name, description WHERE toLower(name) CONTAINS 'date'",
    "SHOW USER DEFINED FUNCTIONS YIELD name RETURN collect(name) AS names",
    "SHOW FUNCTIONS EXECUTABLE BY CURRENT USER",
    "SHOW PROCEDURES",
    "SHOW PROCEDURES EXECUTABLE",
    "SHOW PROCEDURES YIELD name, signature ORDER BY name LIMIT 10 WHERE name STARTS WITH 'db'",
    "SHOW INDEXES YIELD name WHERE size(split(name, '_')) > 1 RETURN apoc.text.join([name], ',')",
    "SHOW INDEXES YIELD name WHERE EXISTS { MATCH (p:Person) WHERE p.name = name }",
]

BLOCKED_SHOWS = [
    ("SHOW TRANSACTIONS", "SEC.WRITE"),
    ("SHOW TRANSACTIONS 'neo4j-transaction-3'", "SEC.WRITE"),
    ("SHOW TRANSACTIONS YIELD transactionId, currentQuery", "SEC.WRITE"),
    ("TERMINATE TRANSACTIONS 'neo4j-transaction-3'", "SEC.WRITE"),
    ("TERMINATE TRANSACTIONS $ids YIELD message", "SEC.WRITE"),
    ("SHOW TRANSACTIONS YIELD transactionId AS t TERMINATE TRANSACTIONS t", "SEC.WRITE"),
    ("SHOW SETTINGS", "SEC.WRITE"),
    ("SHOW SETTINGS 'dbms.security.*' YIELD name, value", "SEC.WRITE"),
    ("SHOW INDEXES YIELD name SHOW SETTINGS", "SEC.WRITE"),
    ("SHOW FUNCTIONS SHOW TRANSACTIONS", "SEC.WRITE"),
    ("SHOW CONSTRAINTS TERMINATE TRANSACTIONS 'x'", "SEC.WRITE"),
    ("SHOW USERS", "SEC.WRITE"),
    ("SHOW CURRENT USER", "SEC.WRITE"),
    ("SHOW ROLES", "SEC.WRITE"),
    ("SHOW POPULATED ROLES WITH USERS", "SEC.WRITE"),
    ("SHOW PRIVILEGES", "SEC.WRITE"),
    ("SHOW ALL PRIVILEGES AS REVOKE COMMANDS", "SEC.WRITE"),
    ("SHOW USER eve PRIVILEGES", "SEC.WRITE"),
    ("SHOW ROLE admin PRIVILEGES YIELD *", "SEC.WRITE"),
    ("SHOW SUPPORTED PRIVILEGES", "SEC.WRITE"),
    ("SHOW DATABASES", "SEC.WRITE"),
    ("SHOW DATABASE movies YIELD name, address", "SEC.WRITE"),
    ("SHOW DEFAULT DATABASE", "SEC.WRITE"),
    ("SHOW SERVERS", "SEC.WRITE"),
    ("SHOW ALIASES FOR DATABASES", "SEC.WRITE"),
    ("SHOW PROCEDURES EXECUTABLE BY eve", "SEC.WRITE"),
    ("SHOW INDEXES WHERE EXISTS { MATCH (n) CREATE (m:Leak) RETURN m }", "SEC.WRITE"),
    ("SHOW INDEXES YIELD name WHERE COUNT { MATCH (n) DETACH DELETE n RETURN 1 } > 0",
     "SEC.WRITE"),
    ("SHOW FUNCTIONS YIELD name WHERE genai.vector.encode(name, 'OpenAI', {}) IS NOT NULL",
     "SEC.PROCEDURE"),
    ("SHOW PROCEDURES YIELD name RETURN apoc.cypher.runFirstColumnSingle('RETURN 1', {})",
     "SEC.PROCEDURE"),
    ("SHOW INDEXES YIELD name RETURN custom.leak(name) AS x", "SEC.PROCEDURE"),
    ("SHOW INDEXES YIELD name WHERE COLLECT { CALL apoc.load.json('http://x') YIELD value "
     "RETURN value } <> []", "SEC.PROCEDURE"),
    ("SHOW INDEXES; SHOW SETTINGS", "SEC.MULTI_STATEMENT"),
    ("CREATE INDEX i FOR (n:Person) ON (n.name)", "SEC.WRITE"),
    ("CREATE CONSTRAINT c IF NOT EXISTS FOR (n:Person) REQUIRE n.id IS UNIQUE", "SEC.WRITE"),
    ("DROP INDEX i", "SEC.WRITE"),
    ("GRANT ROLE admin TO eve", "SEC.ADMIN"),
    ("REVOKE ROLE admin FROM eve", "SEC.ADMIN"),
    ("ALTER CURRENT USER SET PASSWORD FROM 'a' TO 'b'", "SEC.ADMIN"),
    ("CREATE USER eve SET PASSWORD 'pw'", "SEC.ADMIN"),
    ("STOP DATABASE neo4j", "SEC.ADMIN"),
    ("START DATABASE neo4j", "SEC.ADMIN"),
    ("DENY TRAVERSE ON GRAPH * TO reader", "SEC.ADMIN"),
    ("ENABLE SERVER 'x'", "SEC.ADMIN"),
]  # fmt: skip


@pytest.mark.parametrize("query", ALLOWED_SHOWS)
def test_plain_read_shows_are_allowed(query: str) -> None:
    result = verdict(query)
    assert result.action == "allow", result.findings


@pytest.mark.parametrize(("query", "code"), BLOCKED_SHOWS)
def test_admin_and_composed_commands_are_blocked(query: str, code: str) -> None:
    result = verdict(query)
    assert result.action == "block"
    assert code in result.codes, result.findings


def test_admin_message_tells_what_is_allowed() -> None:
    (finding,) = verdict("SHOW SETTINGS").findings
    assert "SHOW SETTINGS is an administration command" in finding.message
    assert "SHOW INDEXES, SHOW CONSTRAINTS, SHOW FUNCTIONS and SHOW PROCEDURES" in finding.message
    composed = verdict("SHOW TRANSACTIONS YIELD transactionId AS t TERMINATE TRANSACTIONS t")
    assert any("composed SHOW / TERMINATE" in f.message for f in composed.findings)


@pytest.mark.parametrize("read_only", [True, False])
def test_admin_commands_are_blocked_whether_or_not_writes_are_allowed(read_only: bool) -> None:
    for query in ["CREATE USER eve SET PASSWORD 'pw'", "DROP DATABASE movies", "DRYRUN"]:
        result = verdict(query, read_only=read_only)
        assert result.action == "block" and result.codes == ["SEC.ADMIN"], result.findings
        assert "never forwards" in result.findings[0].message and not result.forward


def test_admin_commands_are_never_forwarded_even_without_their_rule() -> None:
    """The emitter refuses a coarsely parsed command itself (fail closed), so even a guard
    built without plugins/admin_commands.py forwards nothing."""
    checker = guard(rules=["query_guard.rules.read_only"], read_only=False)
    result = checker.check("GRANT ROLE admin TO eve")
    assert result.action == "block" and not result.forward
    assert "never forwarded" in result.findings[0].message


def test_schema_commands_are_writes_but_not_administration() -> None:
    query = "CREATE INDEX i IF NOT EXISTS FOR (n:Person) ON (n.name)"
    assert verdict(query).codes == ["SEC.WRITE"]
    allowed = verdict(query, read_only=False)
    assert allowed.action == "allow" and allowed.forward == query


def test_admin_shows_pass_when_writes_are_allowed_but_bodies_are_still_judged() -> None:
    assert verdict("SHOW SETTINGS", read_only=False).action == "allow"
    unsafe = verdict("SHOW SETTINGS YIELD name WHERE apoc.util.sleep(10) IS NULL", read_only=False)
    assert unsafe.action == "block" and unsafe.codes == ["SEC.PROCEDURE"]


# ---------------------------------------------------------------------- functions


@pytest.mark.parametrize(
    "call",
    [
        "date.truncate('month', date())", "duration.between(date(), date())",
        "point.distance(point({x: 1, y: 2}), point({x: 2, y: 2}))",
        "vector.similarity.cosine([1.0, 0.0], [0.0, 1.0])", "elementId(n)", "TOUPPER(n.name)",
        "apoc.text.join(['a', 'b'], ',')", "apoc.coll.sum([1, 2])", "apoc.map.merge({}, {a: 1})",
        "apoc.convert.toJson(n)", "apoc.date.format(0, 'ms', 'yyyy')",
        "apoc.any.property(n, 'name')", "apoc.node.degree(n, 'KNOWS>')",
        "apoc.label.exists(n, 'Person')", "percentileCont(n.born, 0.5)", "valueType(n.name)",
        "all(x IN [1] WHERE x > 0)", "reduce(s = 0, x IN [1, 2] | s + x)", "typeOf(n.name)",
        "length(shortestPath((n)-[*]-(:Person {name: 'B'})))",
    ],
)  # fmt: skip
def test_builtin_and_pure_apoc_functions_pass(call: str) -> None:
    result = verdict(f"MATCH (n:Person) RETURN {call} AS v")
    assert result.action == "allow", result.findings


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        ("genai.vector.encode(n.name, 'OpenAI', {token: 'k'})", "calls another service"),
        ("apoc.cypher.runFirstColumnSingle('MATCH (m) DETACH DELETE m', {})", "runs code"),
        ("apoc.create.uuid()", "writes"),
        ("custom.score(n)", "is not on the allow-list"),
        ("apoc.meta.nodes.count(['Person'])", "is not on the allow-list"),
        ("somefilter(x IN [1] WHERE x > 0)", "is not on the allow-list"),
    ],
)
def test_other_functions_are_blocked(call: str, fragment: str) -> None:
    result = verdict(f"MATCH (n:Person) RETURN {call} AS v")
    assert result.action == "block" and result.codes == ["SEC.PROCEDURE"]
    assert fragment in result.findings[0].message


def test_operator_may_allow_functions_by_pattern() -> None:
    query = "MATCH (n:Person) RETURN custom.score(n) AS s, genai.vector.encode(n.name) AS e"
    assert verdict(query).action == "block"
    opened = verdict(query, allowed_functions=["custom.*", "GENAI.vector.encode"])
    assert opened.action == "allow", opened.findings


def test_unknown_functions_pass_when_writes_are_allowed() -> None:
    assert verdict("RETURN custom.score(1) AS s", read_only=False).action == "allow"


def test_allow_list_module() -> None:
    assert is_allowed_function("DATE.TRUNCATE")
    assert is_allowed_function("apoc.text.levenshteinDistance")
    assert not is_allowed_function("genai.vector.encode")
    assert is_allowed_function("x.y", ["x.*"]) and not is_allowed_function("x.y", ["z.*"])


def test_functions_doc_is_generated_from_the_module() -> None:
    assert (ROOT / "docs" / "functions.md").read_text(encoding="utf-8") == functions_page()
    assert "`date.truncate`" in functions_page() and "`apoc.any.property`" in functions_page()


def test_allowed_functions_config_key() -> None:
    assert parse_config({}).guard.allowed_functions == ()
    assert parse_config({"guard": {"allowed_functions": ["a.*"]}}).guard.allowed_functions == (
        "a.*",
    )
    with pytest.raises(ConfigError, match=r"guard\.allowed_functions"):
        parse_config({"guard": {"allowed_functions": [1]}})


# ---------------------------------------------------------------------- procedures


def test_served_procedures_pass() -> None:
    query = "CALL apoc.meta.data({sample: 10}) YIELD label, property RETURN label, property"
    assert verdict(query).codes == ["SEC.UNKNOWN_PROCEDURE"]
    served = guard(served=frozenset({"apoc.meta.data"})).check(query)
    assert served.action == "allow", served.findings


@pytest.mark.parametrize(
    "query",
    [
        "CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DETACH DELETE n', {})",
        "CALL apoc.create.node(['X'], {})",
        "CALL apoc.cypher.run('MATCH (n) RETURN n', {})",
        "CALL apoc.load.csv('file:///etc/passwd')",
        "CALL db.createLabel('X')",
        "CALL dbms.security.createUser('eve', 'pw', false)",
        "CALL dbms.killQuery('q-1')",
        "CALL gds.pageRank.write('g', {writeProperty: 'pr'})",
        "CALL apoc.util.sleep(100000)",
    ],
)
def test_writing_or_code_running_procedures_are_forbidden(query: str) -> None:
    assert verdict(query).codes == ["SEC.PROCEDURE"]


@pytest.mark.parametrize(
    "query",
    ["CALL apoc.help('text')", "CALL dbms.components()", "CALL gds.list()", "CALL my.proc(1)"],
)
def test_other_procedures_are_unknown(query: str) -> None:
    result = verdict(query)
    assert result.codes == ["SEC.UNKNOWN_PROCEDURE"]
    assert "is not available here" in result.findings[0].message


def test_procedure_hint_lists_every_entry() -> None:
    allowed = [f"db.p{i}" for i in range(10)]
    result = guard(served=frozenset({"apoc.meta.schema"}), allowed_procedures=allowed).check(
        "CALL x.y()"
    )
    hint = result.findings[0].hint or ""
    assert all(name in hint for name in [*allowed, "apoc.meta.schema"])


# ---------------------------------------------------------------------- diagnostics


def full_verdict(query: str) -> Verdict:
    rules = ["query_guard.rules.read_only", "query_guard.rules.limits"]
    return guard(rules=rules).check(query)


def test_block_code_and_message_carry_only_the_blocking_findings() -> None:
    unknown = full_verdict("MATCH (n) CALL my.proc(n) YIELD x RETURN x")
    assert "LIM.INJECTED" in unknown.codes  # the limits rule did report it
    failure = diag.block_failure(unknown, (5, 4))
    assert failure["code"] == diag.PROCEDURE_NOT_FOUND
    assert "SEC.UNKNOWN_PROCEDURE" in failure["message"] and "LIM." not in failure["message"]
    mixed = full_verdict("MATCH (n) CALL my.proc(n) YIELD x SET n.x = x RETURN x")
    assert diag.block_code(mixed) == diag.FORBIDDEN


def test_procedure_not_found_gql_fields() -> None:
    failure = diag.block_failure(full_verdict("CALL my.proc()"), (5, 8))
    assert failure["neo4j_code"] == diag.PROCEDURE_NOT_FOUND
    assert failure["gql_status"] == "42N08"
    assert failure["diagnostic_record"]["_classification"] == "CLIENT_ERROR"


# ---------------------------------------------------------------------- the real driver


def _error(drv: neo4j.Driver, query: str) -> nex.Neo4jError:
    with drv.session() as session, pytest.raises(nex.Neo4jError) as info:
        session.run(query).consume()
    return info.value


def test_driver_sees_procedure_not_found_and_forbidden(driver: neo4j.Driver) -> None:  # noqa: F811
    missing = _error(driver, "CALL apoc.help('text') YIELD name RETURN name")
    assert missing.code == "Neo.ClientError.Procedure.ProcedureNotFound"
    assert "apoc.help" in (missing.message or "") and "LIM.INJECTED" not in (missing.message or "")
    forbidden = _error(driver, "CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DELETE n', {})")
    assert forbidden.code == "Neo.ClientError.Security.Forbidden"
    assert "SEC.PROCEDURE" in (forbidden.message or "")


def test_driver_refuses_admin_shows_and_unlisted_functions(driver: neo4j.Driver) -> None:  # noqa: F811
    for query, code in [
        ("SHOW SETTINGS", "SEC.WRITE"),
        ("SHOW TRANSACTIONS YIELD transactionId AS t TERMINATE TRANSACTIONS t", "SEC.WRITE"),
        ("MATCH (m:Movie) RETURN genai.vector.encode(m.title, 'OpenAI', {}) AS v", "SEC.PROCEDURE"),
    ]:
        err = _error(driver, query)
        assert err.code == "Neo.ClientError.Security.Forbidden"
        assert (err.message or "").startswith(code) and "LIM.INJECTED" not in (err.message or "")
    with driver.session() as session:
        record = session.run("MATCH (m:Movie) RETURN count(m) AS n").single(strict=True)
    assert record["n"] > 0  # the graph is untouched and ordinary reads still work
