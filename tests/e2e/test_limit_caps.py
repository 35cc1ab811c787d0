"""LIMIT caps (issue 19, item 7): a LIMIT that sets no bound (SQL `LIMIT ALL`, `NULL`, SQLite's
`-1`) is lowered to `[guard] max_limit`, and one known only when the query runs (a parameter,
an expression) is bounded by it — checked on a real SQLite database, and in the Cypher the
guard forwards to Neo4j."""

from __future__ import annotations

import sqlite3

import pytest

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard
from query_guard.model import Action
from query_guard.sql.query import SqlQuery

CAP = 50
ROWS = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 200) "


def sql_guard(dialect: str) -> Guard:
    return build_guard(
        parse_config({"guard": {"sql_dialect": dialect, "max_limit": CAP, "default_limit": 20}})
    )


@pytest.mark.parametrize(
    ("limit", "params"),
    [("ALL", ()), ("NULL", ()), ("-1", ()), ("?", (150,)), ("$1", (150,)), ("100 + 50", ())],
)
def test_sqlite_returns_at_most_max_limit_rows(limit: str, params: tuple[int, ...]) -> None:
    guard = sql_guard("sqlite")
    text = f"{ROWS}SELECT x FROM n LIMIT {limit}"
    verdict = guard.check(text, "sql")
    assert verdict.action is Action.REWRITE and verdict.codes == ["LIM.CAPPED"]
    assert str(CAP) in verdict.findings[0].message
    assert guard.check(verdict.query, "sql").action is Action.ALLOW
    sent = SqlQuery.parse(verdict.query, "sqlite").emit("sqlite")
    with sqlite3.connect(":memory:") as db:
        rows = db.execute(sent.replace("$1", "?"), params).fetchall()
    assert len(rows) == CAP


@pytest.mark.parametrize(
    ("limit", "bounded"),
    [("ALL", "LIMIT 50"), ("$1", "LIMIT LEAST($1, 50)"), ("NULL", "LIMIT 50")],
)
def test_postgres_limits_are_bounded(limit: str, bounded: str) -> None:
    verdict = sql_guard("postgres").check(f"SELECT a FROM t LIMIT {limit}", "sql")
    assert verdict.codes == ["LIM.CAPPED"] and verdict.query.endswith(bounded)


def test_a_small_sql_limit_is_left_alone() -> None:
    verdict = sql_guard("sqlite").check("SELECT a FROM t LIMIT 5", "sql")
    assert verdict.action is Action.ALLOW


NEO4J = parse_config(
    {"backend": {"cypher": "bolt://neo4j:7687"}, "guard": {"max_limit": CAP, "default_limit": 20}}
)
FALKORDB = parse_config({"guard": {"max_limit": CAP, "default_limit": 20}})


@pytest.mark.parametrize(
    ("limit", "bounded"),
    [
        ("$n", "CASE WHEN $n <= 50 THEN $n ELSE 50 END"),
        ("10 * $pages", "CASE WHEN (10 * $pages) <= 50 THEN (10 * $pages) ELSE 50 END"),
        ("toInteger($x)", "CASE WHEN (toInteger($x)) <= 50 THEN (toInteger($x)) ELSE 50 END"),
    ],
)
def test_a_cypher_limit_known_only_at_run_time_is_bounded(limit: str, bounded: str) -> None:
    guard = build_guard(NEO4J)
    verdict = guard.check(f"MATCH (m:Movie) RETURN m.title LIMIT {limit}")
    assert verdict.codes == ["LIM.CAPPED"] and verdict.query.endswith(f"LIMIT {bounded}")
    assert "max_limit" in verdict.findings[0].message
    assert guard.check(verdict.query).action is Action.ALLOW  # a fixed point


def test_falkordb_keeps_a_parameter_limit_it_alone_accepts() -> None:
    verdict = build_guard(FALKORDB).check("MATCH (m:Movie) RETURN m.title LIMIT $n")
    assert verdict.action is Action.ALLOW
