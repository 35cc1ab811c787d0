"""The SQL repair loop on real databases (the embedded SQLite Northwind and a PostgreSQL started
by the tests): an empty result has its string literals grounded and its equalities relaxed,
under the safe/speculative rule of the Cypher loop — a literal that differs from exactly one
stored value only in case is fixed and reported; a substring match or case relaxation is
offered as `REPAIR.SUGGESTED` unless the client opted in (its question, or `[repair]
speculative = "apply"`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from query_guard.backends.sql_sqlite import SqliteBackend
from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.repair.model import RepairSettings
from query_guard.repair.sql import blank_aggregates
from query_guard.run.service import QueryResult, QueryService
from query_guard.run.sql_service import SqlService
from tests.e2e.test_sql_backends import Database, _run, database, northwind, postgres

__all__ = ["database", "northwind", "postgres"]  # the fixtures, shared with test_sql_backends

GERMAN = ["Alfreds Futterkiste", "Blauer See Delikatessen", "Drachenblut Delikatessen",
          "Die Wandernde Kuh", "Frankenversand", "Königlich Essen", "Lehmanns Marktstand",
          "Morgenstern Gesundkost", "Ottilies Käseladen", "QUICK-Stop", "Toms Spezialitäten"]


def ask(
    db: Database,
    text: str,
    settings: RepairSettings | None = None,
    question: str | None = None,
    params: dict[str, Any] | None = None,
) -> QueryResult:
    async def go() -> QueryResult:
        guard = build_guard(parse_config({}), entry_points=False)
        sql = SqlService(guard, db.backend, settings)
        service = QueryService(guard, None, sql=sql)
        try:
            return await service.run(text, params, front="test", language="sql",
                                     question=question)  # fmt: skip
        finally:
            await sql.close()

    return _run(go())  # type: ignore[no-any-return]


def codes(result: QueryResult) -> list[str]:
    return result.verdict.codes


def rows(result: QueryResult) -> list[list[Any]]:
    assert result.error is None, result.error
    return result.rows


def test_a_literal_in_the_wrong_case_is_fixed_and_reported(database: Database) -> None:
    correct = rows(ask(database, "SELECT companyname FROM customers WHERE country = 'Germany' "
                                 "ORDER BY companyname"))  # fmt: skip
    result = ask(database, "SELECT companyname FROM customers WHERE country = 'germany' "
                           "ORDER BY companyname")  # fmt: skip
    assert rows(result) == correct and sorted(r[0] for r in correct) == sorted(GERMAN)
    assert "'Germany'" in result.query and "'germany'" not in result.query
    literal = [f for f in result.verdict.findings if f.code == "ENT.LITERAL"]
    assert len(literal) == 1 and "'germany'" in literal[0].message
    assert "equal but for case" in literal[0].message
    assert [a["outcome"] for a in result.attempts] == ["empty", "rows"]
    assert [a["source"] for a in result.attempts] == ["client", "grounding"]
    assert "REPAIR.SUGGESTED" not in codes(result)


def test_a_named_parameter_is_grounded_like_a_literal(database: Database) -> None:
    result = ask(database, "SELECT companyname FROM customers WHERE country = :country",
                 params={"country": "germany"})  # fmt: skip
    assert sorted(r[0] for r in rows(result)) == sorted(GERMAN)
    assert "'Germany'" in result.query and ":country" not in result.query
    assert "ENT.LITERAL" in codes(result)


def test_literals_in_an_in_list_are_grounded(database: Database) -> None:
    correct = rows(ask(database, "SELECT companyname FROM customers "
                                 "WHERE country IN ('Germany', 'France') ORDER BY 1"))  # fmt: skip
    result = ask(database, "SELECT companyname FROM customers "
                           "WHERE country IN ('germany', 'FRANCE') ORDER BY 1")  # fmt: skip
    assert rows(result) == correct and len(correct) > len(GERMAN)
    assert "IN ('Germany', 'France')" in result.query
    assert codes(result).count("ENT.LITERAL") == 2


def test_an_empty_count_is_an_empty_answer(database: Database) -> None:
    result = ask(database, "SELECT count(*) FROM customers WHERE city = 'BERLIN'")
    assert rows(result) == [[1]]
    assert "'Berlin'" in result.query
    assert "ENT.LITERAL" in codes(result)


def test_a_substring_match_is_suggested_not_applied(database: Database) -> None:
    text = "SELECT companyname FROM customers WHERE contactname = 'Anders'"
    result = ask(database, text)
    assert rows(result) == []
    assert "'Anders'" in result.query
    [suggested] = [f for f in result.verdict.findings if f.code == "REPAIR.SUGGESTED"]
    assert "'Maria Anders'" in (suggested.hint or "")
    assert "would return 1 row(s)" in suggested.message
    assert "question" in suggested.message  # how to opt in
    note = next(f for f in result.verdict.findings if f.code == "ENT.LITERAL")
    assert "'Maria Anders'" in note.message
    # the client's question opts in; so does [repair] speculative = "apply"
    for opted in (ask(database, text, question="Which company does Anders work for?"),
                  ask(database, text, RepairSettings(speculative="apply"))):  # fmt: skip
        assert rows(opted) == [["Alfreds Futterkiste"]]
        assert "'Maria Anders'" in opted.query
        applied = next(f for f in opted.verdict.findings if f.code == "ENT.LITERAL")
        assert "opted in" in applied.message
        assert "REPAIR.SUGGESTED" not in codes(opted)


def test_case_insensitive_equality_is_speculative(database: Database) -> None:
    text = "SELECT companyname FROM customers WHERE country = 'GERMANY' AND city = 'berlin'"
    no_grounding = RepairSettings(grounding=False)
    result = ask(database, text, no_grounding)
    assert rows(result) == []
    [suggested] = [f for f in result.verdict.findings if f.code == "REPAIR.SUGGESTED"]
    assert suggested.message.startswith("FIL.CASE_INSENSITIVE")
    assert "LOWER(country) = LOWER('GERMANY')" in (suggested.hint or "")
    assert "LOWER(city) = LOWER('berlin')" in (suggested.hint or "")
    applied = ask(database, text, RepairSettings(grounding=False, speculative="apply"))
    assert rows(applied) == [["Alfreds Futterkiste"]]
    assert "FIL.CASE_INSENSITIVE" in codes(applied)


def test_rows_and_disabled_repair_leave_the_query_alone(database: Database) -> None:
    found = ask(database, "SELECT companyname FROM customers WHERE customerid = 'ALFKI'")
    assert rows(found) == [["Alfreds Futterkiste"]] and found.attempts == []
    off = ask(database, "SELECT companyname FROM customers WHERE country = 'germany'",
              RepairSettings(enabled=False))  # fmt: skip
    assert rows(off) == [] and off.attempts == []
    assert not {"ENT.LITERAL", "REPAIR.ATTEMPT"} & set(codes(off))
    # a value stored nowhere, not even similar: a note, no rewrite
    missing = ask(database, "SELECT companyname FROM customers WHERE country = 'Atlantis'")
    assert rows(missing) == [] and "'Atlantis'" in missing.query
    note = next(f for f in missing.verdict.findings if f.code == "ENT.LITERAL")
    assert "no similar value" in note.message


def test_every_statement_the_loop_runs_is_a_guarded_read(northwind: Path) -> None:
    """SQLite's trace sees every statement: the client's, the probes, the candidates — all
    plain SELECTs, and each candidate carries the guard's LIMIT (it was judged again)."""
    statements: list[str] = []
    db = Database(SqliteBackend(northwind, trace=statements.append), lambda: "")
    result = ask(db, "SELECT companyname FROM customers WHERE contactname = 'Anders'",
                 question="who is Anders?")  # fmt: skip
    assert rows(result) == [["Alfreds Futterkiste"]]
    # the connection's own PRAGMA query_only and the trace's "-- PRAGMA" notes aside
    ran = [s for s in statements if not s.upper().startswith(("PRAGMA", "-- PRAGMA"))]
    assert ran and all(s.lstrip().upper().startswith("SELECT") for s in ran), ran
    assert all(a["query"].endswith("LIMIT 1000") for a in result.attempts)


@pytest.mark.parametrize(
    ("text", "blank"),
    [
        ("SELECT count(*), max(x) FROM t", {0, 1}),
        ("SELECT a, count(*) FROM t GROUP BY a", set()),
        ("SELECT a, row_number() OVER (ORDER BY a) FROM t", set()),
        ("SELECT 1 + sum(x) AS s, b FROM t", {0}),
    ],
)
def test_blank_aggregates(text: str, blank: set[int]) -> None:
    import sqlglot

    assert blank_aggregates(sqlglot.parse_one(text)) == frozenset(blank)


def test_http_query_repairs_sql_and_reads_the_repair_settings(tmp_path: Path) -> None:
    """`/v1/query` with `language: "sql"` on the embedded Northwind: a speculative fix is
    suggested, applied with the request's question; `[repair] enabled = false` turns it off."""
    import json

    import aiohttp

    from query_guard.runner import ProxyThread

    async def post(base: str, body: dict[str, Any]) -> Any:
        async with aiohttp.ClientSession() as session, session.post(
            base + "/v1/query", json=body
        ) as r:
            assert r.status == 200, await r.text()
            return json.loads(await r.text())

    text = "SELECT companyName FROM customers WHERE contactName = 'Anders'"
    for repair in ({}, {"enabled": False}):
        config = parse_config({
            "server": {"bolt": "", "http": "127.0.0.1:0", "data_dir": str(tmp_path)},
            "audit": {"path": str(tmp_path / "audit.jsonl")}, "repair": repair,
        })  # fmt: skip
        with ProxyThread(config) as proxy:
            base = f"http://127.0.0.1:{proxy.server.http.port}"
            plain = _run(post(base, {"language": "sql", "query": text}))
            asked = _run(post(base, {"language": "sql", "query": text,
                                     "question": "Where does Anders work?"}))  # fmt: skip
        codes_plain = [f["code"] for f in plain["queryGuard"]["findings"]]
        assert plain["rows"] == []
        if repair:
            assert asked["rows"] == [] and "attempts" not in asked["queryGuard"]
            assert "REPAIR.SUGGESTED" not in codes_plain
            continue
        assert "REPAIR.SUGGESTED" in codes_plain
        assert asked["rows"] == [["Alfreds Futterkiste"]]
        assert "'Maria Anders'" in asked["query"]
        assert [a["outcome"] for a in asked["queryGuard"]["attempts"]][-1] == "rows"


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        ("SELECT a FROM customers WHERE country = 'x'", ["customers.country='x'"]),
        ("SELECT c.a FROM customers AS c JOIN orders AS o ON o.id = c.id "
         "WHERE 'x' = c.city AND o.shipcity = 'y'",
         ["customers.city='x'", "orders.shipcity='y'"]),
        # unqualified, in both joined tables: which one is meant is not known
        ("SELECT 1 FROM customers JOIN orders ON true WHERE city = 'x'", []),
        # a CTE's column is not a table's: nothing to probe
        ("WITH t AS (SELECT city AS c FROM customers) SELECT * FROM t WHERE c = 'x'", []),
        ("SELECT a FROM customers WHERE country = 'x' AND country = 'x' AND city <> 'z'",
         ["customers.country='x'"]),
        ("SELECT a FROM customers WHERE country IN ('x', 1, 'y')",
         ["customers.country='x'", "customers.country='y'"]),
        # negated: an empty answer is not about a misspelt value
        ("SELECT a FROM customers WHERE NOT country = 'x' AND country NOT IN ('y')", []),
    ],
)  # fmt: skip
def test_bindings(text: str, bound: list[str]) -> None:
    import sqlglot

    from query_guard.repair.sql_literals import extract_bindings
    from query_guard.schema.sql_catalog import SqlCatalog

    catalog = SqlCatalog.from_text(
        "customers(id integer, a text, city text, country text); orders(id integer, city text, "
        "shipcity text)"
    )
    found = extract_bindings(sqlglot.parse_one(text), catalog)
    assert [f"{b.where}='{b.value}'" for b in found] == bound
