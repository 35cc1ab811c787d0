"""SQL through the guard onto real databases: the embedded SQLite (Northwind) and a PostgreSQL
started here from the distribution's packages (skipped, saying why, when it cannot be).

Blocked queries never reach the database (SQLite's statement trace; PostgreSQL's own
`log_statement = all` log, and the data unchanged) — PostgreSQL functions that a read-only
transaction still runs (large objects, replication slots, …) included, checked on the server;
ordinary reads with common functions run; a misspelt name the guard fixes returns
the rows of the hand-written correct query; `/v1/query` with `language: "sql"` end to end.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from query_guard.backends.limits import TIMEOUT_CODE
from query_guard.backends.sql_postgres import PostgresBackend
from query_guard.backends.sql_sqlite import SqliteBackend, build_northwind
from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.run.service import QueryResult, QueryService
from query_guard.run.sql_service import SqlService
from query_guard.runner import ProxyThread
from tests.e2e.test_sql_limits import HUGE_VALUE
from tests.postgres_server import postgres_server

# each carries a marker literal, so a database log that ever saw one would show it
ATTACKS = [
    "DELETE FROM orders WHERE 'qgmark01' = 'qgmark01'",
    "WITH d AS (DELETE FROM orders RETURNING *) SELECT 'qgmark02', count(*) FROM d",
    "SELECT 'qgmark03'; DROP TABLE orders",
    "SELECT pg_read_file('/etc/passwd'), 'qgmark04'",
    "SELECT 'qgmark05' AS x INTO stolen FROM orders",
    "SELECT orderID, 'qgmark06' FROM orders FOR UPDATE",
    "COPY orders TO PROGRAM 'echo qgmark07'",
    "UPDATE products SET unitPrice = 0 WHERE 'qgmark08' <> ''",
    "SELECT pg_sleep(1), 'qgmark09'",
    "SELECT 'qgmark10' /*! ; DELETE FROM orders */",
    "SELECT load_extension('qgmark11')",
    "SELECT 'qgmark12', set_config('default_transaction_read_only', 'off', false)",
    "SELECT name, file, 'qgmark13' FROM pragma_database_list",
    "SELECT file, 'qgmark14' FROM pragma_database_list()",
]
# functions a PostgreSQL read-only transaction still runs (they persist or leak), secret
# catalogs and whole-database exports; each carries a marker the server log would show
PG_ATTACKS = [
    "SELECT lo_create(0) AS qgmark20",
    "SELECT lo_from_bytea(0, 'qgmark21')",
    "SELECT lo_put(:oid, 0, 'qgmark22')",
    "SELECT lowrite(lo_open(:oid, 131072), 'qgmark23')",
    "SELECT lo_unlink(:oid) AS qgmark24",
    "SELECT lo_import('/etc/hostname') AS qgmark25",
    "SELECT lo_export(:oid, '/tmp/qgmark26')",
    "SELECT pg_create_physical_replication_slot('qgmark27')",
    "SELECT * FROM pg_create_logical_replication_slot('qgmark28', 'test_decoding')",
    "SELECT pg_replication_origin_create('qgmark29')",
    "SELECT pg_stat_reset() AS qgmark30",
    "SELECT pg_stat_reset_shared('bgwriter') AS qgmark31",
    "SELECT pg_create_restore_point('qgmark32')",
    "SELECT pg_logical_emit_message(true, 'qgmark33', 'x')",
    "SELECT pg_notify('qgmark34', 'x')",
    "SELECT set_config('work_mem', '64MB', false) AS qgmark35",
    "SELECT nextval('qg_seq') AS qgmark36",
    "SELECT setval('qg_seq', 99) AS qgmark37",
    "SELECT pg_advisory_lock(1) AS qgmark38",
    "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS qgmark39(x int)",
    "SELECT pg_read_file('postgresql.conf') AS qgmark40",
    "SELECT table_to_xml('orders', true, false, 'qgmark41')",
    "SELECT query_to_xml('SELECT * FROM pg_authid', true, true, 'qgmark42')",
    "SELECT database_to_xml(true, true, 'qgmark43')",
    "SELECT schema_to_xml('public', true, true, 'qgmark44')",
    "SELECT table_to_xmlschema('orders', true, true, 'qgmark45')",
    "SELECT cursor_to_xml('qgmark46', 1, true, true, '')",
    "SELECT rolname, rolpassword, 'qgmark47' FROM pg_authid",
    "SELECT usename, passwd, 'qgmark48' FROM pg_catalog.pg_shadow",
    "SELECT query, 'qgmark49' FROM pg_stat_activity",
    "SELECT name, setting, 'qgmark50' FROM pg_settings",
    "SELECT count(*) AS qgmark51 FROM pg_largeobject_metadata",
    "SELECT * FROM pg_hba_file_rules WHERE 'qgmark52' <> ''",
    "SELECT upper(lo_from_bytea(0, 'qgmark53')::text)",
    "SELECT * FROM public.generate_series(1, 2) AS qgmark54",
    "SELECT client_addr, 'qgmark55' FROM pg_stat_replication",
    "SELECT ssl, client_dn, 'qgmark56' FROM pg_stat_ssl",
]
# what those would change, read directly on the server
PG_STATE = """SELECT (SELECT count(*) FROM pg_largeobject_metadata) AS large_objects,
  (SELECT count(*) FROM pg_replication_slots) AS slots,
  (SELECT count(*) FROM pg_replication_origin) AS origins,
  (SELECT last_value FROM qg_seq) AS sequence,
  (SELECT stats_reset FROM pg_stat_database WHERE datname = current_database()) AS reset,
  (SELECT string_agg(lo_get(oid)::text, ',') FROM pg_largeobject_metadata) AS contents"""
# ordinary reads with common functions, run through the proxy: (backend, query)
COMMON_READS = [
    ("postgres", "SELECT lower(companyname) AS l, upper(city) AS u, coalesce(region, '-') AS r, "
                 "length(companyname) AS n FROM customers ORDER BY customerid LIMIT 3"),
    ("postgres", "SELECT round(avg(freight)::numeric, 2) AS a, sum(freight) AS s, count(*) AS n "
                 "FROM orders"),
    ("postgres", "SELECT date_trunc('month', orderdate::timestamp) AS m, count(*) AS n FROM "
                 "orders GROUP BY m ORDER BY m LIMIT 3"),
    ("postgres", "SELECT extract(year FROM orderdate::timestamp) AS y, to_char(orderdate::"
                 "timestamp, 'YYYY-MM') AS ym FROM orders ORDER BY orderid LIMIT 2"),
    ("postgres", "SELECT country, string_agg(city, ', ' ORDER BY city) AS cities, "
                 "array_agg(customerid) AS ids FROM customers GROUP BY country ORDER BY country "
                 "LIMIT 3"),
    ("postgres", "SELECT json_build_object('id', shipperid, 'name', companyname)->>'name' AS "
                 "name, jsonb_build_object('a', jsonb_build_object('b', phone))#>>'{a,b}' AS p, "
                 "to_jsonb(shipperid)->0 AS j FROM shippers ORDER BY shipperid"),
    ("postgres", "SELECT orderid, row_number() OVER () AS n, rank() OVER (ORDER BY freight DESC) "
                 "AS r FROM orders ORDER BY orderid LIMIT 3"),
    ("postgres", "SELECT nullif(quantityperunit, ''), greatest(unitprice, 10), "
                 "least(unitprice, 10), CAST(productid AS text) FROM products ORDER BY productid "
                 "LIMIT 2"),
    ("postgres", "SELECT table_name, column_name FROM information_schema.columns WHERE "
                 "table_schema = 'public' ORDER BY table_name, ordinal_position LIMIT 5"),
    ("sqlite", "SELECT lower(companyName), upper(city), coalesce(region, '-'), ifnull(fax, '?'),"
               " length(companyName) FROM customers ORDER BY customerID LIMIT 3"),
    ("sqlite", "SELECT round(avg(freight), 2), sum(freight), total(freight), count(*) FROM "
               "orders"),
    ("sqlite", "SELECT strftime('%Y-%m', orderDate) AS m, count(*) FROM orders GROUP BY m "
               "ORDER BY m LIMIT 3"),
    ("sqlite", "SELECT country, group_concat(city, ', ') FROM customers GROUP BY country "
               "ORDER BY country LIMIT 3"),
    ("sqlite", "SELECT json_extract(json_object('n', companyName), '$.n') FROM shippers "
               "ORDER BY shipperID"),
    ("sqlite", "SELECT orderID, row_number() OVER () AS n FROM orders ORDER BY orderID LIMIT 3"),
    ("sqlite", "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"),
]  # fmt: skip
# (misspelt, hand-written correct): the fix must return the correct query's rows
FIXES = [
    ("SELECT compnyName, cty FROM customers WHERE country = 'Germany' ORDER BY compnyName",
     "SELECT companyName, city FROM customers WHERE country = 'Germany' ORDER BY companyName"),
    ("SELECT p.productNme, sum(d.quantty) AS q FROM products AS p JOIN order_details AS d "
     "ON d.productID = p.productID GROUP BY p.productNme ORDER BY q DESC, 1 LIMIT 5",
     "SELECT p.productName, sum(d.quantity) AS q FROM products AS p JOIN order_details AS d "
     "ON d.productID = p.productID GROUP BY p.productName ORDER BY q DESC, 1 LIMIT 5"),
    ("SELECT count(*) FROM ordrs WHERE shipCountry = 'France'",
     "SELECT count(*) FROM orders WHERE shipCountry = 'France'"),
]  # fmt: skip


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def northwind(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sqlite") / "northwind.sqlite"
    build_northwind(path)
    return path


class Database:
    """One SQL backend and what it logged."""

    def __init__(self, backend: Any, log: Any) -> None:
        self.backend, self.log = backend, log

    def service(self) -> QueryService:
        guard = build_guard(parse_config({}), entry_points=False)
        return QueryService(guard, None, sql=SqlService(guard, self.backend))

    def query(self, text: str, params: dict[str, Any] | None = None) -> QueryResult:
        async def go() -> QueryResult:
            service = self.service()
            try:
                return await service.run(text, params, front="test", language="sql")
            finally:
                await service.sql.close()

        return _run(go())


def _sqlite(path: Path) -> Database:
    statements: list[str] = []
    return Database(SqliteBackend(path, trace=statements.append), lambda: "\n".join(statements))


@pytest.fixture(scope="module")
def postgres(northwind: Path) -> Iterator[Database]:
    with postgres_server("log_statement=all") as server:
        _run(_load_postgres(server.url, northwind))
        yield Database(PostgresBackend(server.url), server.log.read_text)


async def _load_postgres(url: str, northwind: Path) -> None:
    """Northwind in PostgreSQL, names lower-cased the PostgreSQL way (unquoted names fold)."""
    import asyncpg

    types = {"INTEGER": "bigint", "REAL": "double precision", "TEXT": "text"}
    source = sqlite3.connect(northwind)
    conn = await asyncpg.connect(url)
    try:
        tables = [r[0] for r in source.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            cols = source.execute(f"SELECT name, type FROM pragma_table_info('{table}')").fetchall()
            ddl = ", ".join(f"{name.lower()} {types[t]}" for name, t in cols)
            await conn.execute(f"CREATE TABLE {table} ({ddl})")
            rows = source.execute(f'SELECT * FROM "{table}"').fetchall()
            await conn.copy_records_to_table(table, records=rows)
    finally:
        await conn.close()
        source.close()


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, northwind: Path) -> Database:
    if request.param == "sqlite":
        return _sqlite(northwind)
    return request.getfixturevalue("postgres")  # type: ignore[no-any-return]


def test_blocked_queries_never_reach_the_database(database: Database) -> None:
    before = database.query("SELECT count(*) AS n FROM orders").rows
    for text in ATTACKS:
        result = database.query(text)
        assert result.blocked, text
        assert result.rows == [] and result.query == ""
    allowed = database.query("SELECT 'qgallowed' AS x")
    assert allowed.rows == [["qgallowed"]]
    log = database.log()
    assert "qgallowed" in log  # the log does record what ran
    assert "qgmark" not in log
    assert database.query("SELECT count(*) AS n FROM orders").rows == before == [[830]]


async def _direct(url: str, text: str, *args: Any) -> list[Any]:
    """A statement run on the server directly, as its superuser (no guard)."""
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        return [tuple(r) for r in await conn.fetch(text, *args)]
    finally:
        await conn.close()


async def _unguarded(url: str, text: str) -> list[list[Any]]:
    """What the proxy's backend (a read-only session) runs when nothing stops the text."""
    backend = PostgresBackend(url)  # one per call: a closed backend stays closed
    try:
        return (await backend.run(text))[1]
    finally:
        await backend.close()


def test_postgres_functions_that_persist_in_read_only_transactions_never_run(
    postgres: Database,
) -> None:
    url = postgres.backend.url
    _run(_direct(url, "CREATE SEQUENCE IF NOT EXISTS qg_seq"))
    (oid,) = _run(_direct(url, "SELECT lo_from_bytea(0, 'qgsetup')"))[0]
    before = _run(_direct(url, PG_STATE))
    try:
        for text in PG_ATTACKS:
            result = postgres.query(text, {"oid": oid} if ":oid" in text else None)
            assert result.blocked and result.rows == [] and result.query == "", text
            codes = set(result.verdict.codes) & {"SEC.FUNCTION", "SEC.CATALOG"}
            assert codes, (text, result.verdict.codes)
        assert "qgmark" not in postgres.log()
        assert _run(_direct(url, PG_STATE)) == before  # no object, slot, origin, reset, write
        # the guard is what stopped them: the same session without it creates and writes
        assert _run(_unguarded(url, "SELECT lo_from_bytea(0, 'qgcontrol')"))
        _run(_unguarded(url, "SELECT pg_create_physical_replication_slot('qgcontrol')"))
        after = _run(_direct(url, PG_STATE))[0]
        assert after[:2] == (before[0][0] + 1, before[0][1] + 1), (before, after)
    finally:
        _run(_direct(url, "SELECT lo_unlink(oid) FROM pg_largeobject_metadata"))
        _run(_direct(url, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"))


@pytest.mark.parametrize(("backend", "text"), COMMON_READS,
                         ids=[f"{b}-{i}" for i, (b, _) in enumerate(COMMON_READS)])  # fmt: skip
def test_reads_with_common_functions_run(
    request: pytest.FixtureRequest, northwind: Path, backend: str, text: str
) -> None:
    database = _sqlite(northwind) if backend == "sqlite" else request.getfixturevalue(backend)
    result = database.query(text)
    assert not result.blocked and result.error is None, (result.verdict.findings, result.error)
    # sql_unknown_names does not know SQLite's own sqlite_master (a warning, nothing more)
    expected = {"LIM.INJECTED", *(["SCH.UNKNOWN_TABLE"] if "sqlite_master" in text else [])}
    assert set(result.verdict.codes) <= expected, result.verdict.findings
    assert result.rows


@pytest.mark.parametrize("wrong,right", FIXES, ids=["columns", "join", "table"])
def test_fixed_names_return_the_rows_of_the_correct_query(
    database: Database, wrong: str, right: str
) -> None:
    fixed, correct = database.query(wrong), database.query(right)
    assert fixed.error is None and correct.error is None, (fixed.error, correct.error)
    assert {"SCH.UNKNOWN_COLUMN", "SCH.UNKNOWN_TABLE"} & set(fixed.verdict.codes)
    assert correct.verdict.codes in ([], ["LIM.INJECTED"])
    assert fixed.rows and fixed.rows == correct.rows
    assert fixed.fields == correct.fields or len(fixed.fields) == len(correct.fields)


def test_the_database_gets_the_judged_text_not_the_clients(database: Database) -> None:
    result = database.query("SELECT companyName /* ; DROP TABLE orders */ FROM shippers -- x")
    assert result.error is None and len(result.rows) == 3
    assert "DROP" not in result.query and "--" not in result.query
    assert "LIMIT 1000" in result.query  # as judged: the guard's LIMIT is in what ran


def test_parameters(database: Database) -> None:
    result = database.query(
        "SELECT companyName FROM customers WHERE country = :c AND city = :city", {"c": "Norway",
        "city": "Stavern"})  # fmt: skip
    assert result.rows == [["Santé Gourmet"]]


def test_unknown_column_without_a_close_name_reaches_the_database_as_an_error(
    database: Database,
) -> None:
    result = database.query("SELECT revenue FROM orders")
    assert "SCH.UNKNOWN_COLUMN" in result.verdict.codes and not result.blocked
    assert result.error is not None and "revenue" in result.error.message


def test_http_query_with_language_sql(tmp_path: Path) -> None:
    """`query-guard serve` with `[server] http` and no `[backend] sql`: the embedded Northwind
    is built on first use and `/v1/query` runs SQL; `/v1/check` knows its schema."""
    config = parse_config({
        "server": {"bolt": "", "http": "127.0.0.1:0", "data_dir": str(tmp_path)},
        "audit": {"path": str(tmp_path / "audit.jsonl")},
    })  # fmt: skip

    async def post(base: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        async with aiohttp.ClientSession() as session, session.post(base + path, json=body) as r:
            return r.status, json.loads(await r.text())

    with ProxyThread(config) as proxy:
        base = f"http://127.0.0.1:{proxy.server.http.port}"
        query = {"language": "sql", "query": "SELECT shipperID, compnyName FROM shippers "
                 "WHERE shipperID = :id", "parameters": {"id": 2}}  # fmt: skip
        status, body = _run(post(base, "/v1/query", query))
        assert status == 200, body
        assert body["fields"] == ["shipperID", "companyName"]
        assert body["rows"] == [[2, "United Package"]]
        status, body = _run(post(base, "/v1/query", {"language": "sql",
                                                    "query": "DROP TABLE shippers"}))  # fmt: skip
        assert status == 400 and body["queryGuard"]["action"] == "block"
        status, body = _run(post(base, "/v1/check", {"language": "sql",
                                                    "query": "SELECT * FROM shipers"}))  # fmt: skip
        assert status == 200 and "FROM shippers" in body["query"]
    assert (tmp_path / "northwind.sqlite").exists()
    audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [e["language"] for e in audit if e.get("front") == "http"][:2] == ["sql", "sql"]


ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def _bounded(database: Database, timeout_ms: int = 30_000, max_bytes: int = 0) -> Database:
    """The same database behind a backend with `[limits] query_timeout_ms` / max_result_bytes."""
    backend = database.backend
    if isinstance(backend, SqliteBackend):
        bounded: Any = SqliteBackend(
            backend.path, timeout_ms=timeout_ms, max_result_bytes=max_bytes
        )
    else:
        bounded = PostgresBackend(
            backend.url, statement_timeout_ms=timeout_ms, max_result_bytes=max_bytes
        )
    return Database(bounded, database.log)


def test_an_endless_recursive_query_stops_at_the_query_timeout(database: Database) -> None:
    bounded = _bounded(database, timeout_ms=500)
    started = time.monotonic()
    result = bounded.query(ENDLESS)
    waited = time.monotonic() - started
    assert result.error is not None, result.rows
    assert result.error.code == TIMEOUT_CODE
    assert "LIM.TIMEOUT" in result.error.message and "query_timeout_ms" in result.error.message
    assert waited < 3 * 0.5  # the configured timeout stops it, not something later
    assert bounded.query("SELECT count(*) AS n FROM orders").rows == [[830]]  # still answers


def test_a_result_over_the_byte_budget_is_refused(database: Database) -> None:
    bounded = _bounded(database, max_bytes=20_000)
    many = bounded.query("SELECT * FROM orders")  # 830 rows of ~150 bytes
    huge = HUGE_VALUE \
        if isinstance(database.backend, SqliteBackend) \
        else "SELECT repeat('x', 200000) AS b"  # fmt: skip
    for result in (many, bounded.query(huge)):
        assert result.error is not None and result.rows == []
        assert result.error.message.startswith("LIM.RESULT_SIZE")
        assert "max_result_bytes" in result.error.message
    assert bounded.query("SELECT count(*) AS n FROM orders").rows == [[830]]
