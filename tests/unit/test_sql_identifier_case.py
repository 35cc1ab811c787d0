"""`sql_unknown_names` matches names the way the database does: PostgreSQL folds unquoted
names to lower case and compares quoted ones exactly (Oracle and Snowflake fold to upper case),
SQLite ignores case. Checked on rules alone and on the real PostgreSQL the tests start, with a
table created as `"OrderLines"` ("OrderID", "Quantity")."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from query_guard.backend import BackendError
from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard
from query_guard.model import Verdict
from query_guard.run.service import QueryService
from query_guard.run.sql_service import SqlService
from query_guard.schema.sql_catalog import SqlCatalog
from tests.e2e.test_sql_backends import Database, _run, northwind, postgres

__all__ = ["northwind", "postgres"]  # the fixtures, shared with test_sql_backends

MIXED = {"OrderLines": {"OrderID": "integer", "Quantity": "integer"}}


def guard(catalog: SqlCatalog, dialect: str = "postgres") -> Guard:
    g = build_guard(parse_config({"guard": {"sql_dialect": dialect}}), entry_points=False)
    g.ctx = replace(g.ctx, sql_schema=catalog)
    return g


def check(catalog: SqlCatalog, text: str, dialect: str = "postgres") -> Verdict:
    return guard(catalog, dialect).check(text, "sql")


def name_codes(verdict: Verdict) -> list[str]:
    return [c for c in verdict.codes if c.startswith("SCH.")]


@pytest.mark.parametrize(
    ("text", "fixed"),
    [
        ('SELECT "OrderID" FROM "OrderLines"', None),
        ("SELECT orderid FROM OrderLines", 'SELECT "OrderID" FROM "OrderLines"'),
        ('SELECT "orderid" FROM "OrderLines"', 'SELECT "OrderID" FROM "OrderLines"'),
        ('SELECT l."OrderID", quantity FROM "OrderLines" AS l',
         'SELECT l."OrderID", "Quantity" FROM "OrderLines" AS l'),
        ('WITH t AS (SELECT "OrderID" AS "Id" FROM "OrderLines") SELECT "Id" FROM t', None),
        ('WITH t AS (SELECT "OrderID" AS "Id" FROM "OrderLines") SELECT id FROM t',
         'WITH t AS (SELECT "OrderID" AS "Id" FROM "OrderLines") SELECT "Id" FROM t'),
        ('SELECT "OrderID" AS n FROM "OrderLines" ORDER BY N', None),
    ],
)  # fmt: skip
def test_postgres_quoted_names_are_exact_unquoted_ones_fold(text: str, fixed: str | None) -> None:
    verdict = check(SqlCatalog(MIXED, "postgres"), text)
    if fixed is None:
        assert name_codes(verdict) == [], verdict.findings
        return
    assert name_codes(verdict) and set(name_codes(verdict)) <= {
        "SCH.UNKNOWN_TABLE", "SCH.UNKNOWN_COLUMN"}  # fmt: skip
    assert verdict.query.removesuffix(" LIMIT 1000") == fixed
    assert name_codes(check(SqlCatalog(MIXED, "postgres"), fixed)) == []


def test_postgres_lower_case_names_quoted_in_another_case_are_unknown() -> None:
    catalog = SqlCatalog({"customers": {"companyname": "text"}}, "postgres")
    assert name_codes(check(catalog, "SELECT companyName FROM Customers")) == []
    verdict = check(catalog, 'SELECT "companyName" FROM customers')
    assert name_codes(verdict) == ["SCH.UNKNOWN_COLUMN"]
    [finding] = [f for f in verdict.findings if f.code == "SCH.UNKNOWN_COLUMN"]
    assert "'companyname'" in finding.message
    assert verdict.query.startswith('SELECT "companyname" FROM customers')


def test_upper_case_folding_databases() -> None:
    catalog = SqlCatalog({"ORDERS": {"ID": "number"}}, "snowflake")
    assert name_codes(check(catalog, "SELECT id FROM orders", "snowflake")) == []
    assert name_codes(check(catalog, 'SELECT "id" FROM orders', "snowflake")) == [
        "SCH.UNKNOWN_COLUMN"]  # fmt: skip


def test_sqlite_and_text_schemas_ignore_case() -> None:
    for catalog in (SqlCatalog(MIXED, "sqlite"), SqlCatalog(MIXED)):
        for text in ('SELECT "orderid" FROM orderlines', "SELECT ORDERID FROM OrderLines"):
            assert name_codes(check(catalog, text)) == [], (catalog.dialect, text)
    # a postgres-dialect query against the embedded SQLite: its camelCase names are fine
    catalog = SqlCatalog({"customers": {"companyName": "TEXT"}}, "sqlite")
    assert name_codes(check(catalog, "SELECT companyname FROM customers")) == []


def test_on_postgres_the_fix_returns_the_rows_of_the_correct_query(postgres: Database) -> None:
    _run(_create_mixed_case(postgres))
    service = SqlService(
        build_guard(parse_config({}), entry_points=False), postgres.backend
    )

    async def go() -> tuple[Any, ...]:
        try:
            await service.ready()
            catalog = service.guard.ctx.sql_schema
            assert catalog is not None and catalog.dialect == "postgres"
            assert catalog.tables["OrderLines"] == {"OrderID": "integer", "Quantity": "integer"}
            wrong = "SELECT orderid, sum(quantity) AS q FROM OrderLines GROUP BY orderid " \
                    "ORDER BY orderid"
            right = 'SELECT "OrderID", sum("Quantity") AS q FROM "OrderLines" GROUP BY ' \
                    '"OrderID" ORDER BY "OrderID"'
            try:  # the database itself folds the names: the unguarded query fails
                await service.backend.run(wrong)  # type: ignore[union-attr]
                raw_error = None
            except BackendError as exc:
                raw_error = exc.message
            fixed = service.guard.check(wrong, "sql")
            correct = service.guard.check(right, "sql")
            whole = QueryService(service.guard, None, sql=service)  # the runner's SQL path
            try:
                got = await whole.run(wrong, front="test", language="sql")
                expected = await whole.run(right, front="test", language="sql")
            finally:
                whole.close()
            return raw_error, fixed, got, correct, expected
        finally:
            await service.close()

    raw_error, fixed, got, correct, expected = _run(go())
    assert raw_error is not None and "orderlines" in raw_error
    assert set(name_codes(fixed)) == {"SCH.UNKNOWN_TABLE", "SCH.UNKNOWN_COLUMN"}
    assert name_codes(correct) == []
    assert got.error is None and got.rows == expected.rows
    assert got.rows == [[1, 5], [2, 7]]


async def _create_mixed_case(db: Database) -> None:
    import asyncpg

    conn = await asyncpg.connect(db.backend.url)
    try:
        await conn.execute('DROP TABLE IF EXISTS "OrderLines"')
        await conn.execute('CREATE TABLE "OrderLines" ("OrderID" integer, "Quantity" integer)')
        await conn.execute('INSERT INTO "OrderLines" VALUES (1, 2), (1, 3), (2, 7)')
    finally:
        await conn.close()
