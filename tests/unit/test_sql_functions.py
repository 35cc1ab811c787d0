"""SQL functions are judged by an allow-list per dialect (proxy/sql/functions.py): attack
functions that run inside PostgreSQL's read-only transaction and persist or leak are
`SEC.FUNCTION`, secret system catalogs `SEC.CATALOG`; ordinary reads with common functions
pass in every dialect. (tests/e2e/test_sql_backends.py runs the same on a real PostgreSQL.)"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import pytest
from sqlglot import exp

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard
from query_guard.sql.functions import SQLGLOT_PURE

# (function name the message must carry, query): all of them PostgreSQL
ATTACK_FUNCTIONS: list[tuple[str, str]] = [
    ("lo_create", "SELECT lo_create(0)"),
    ("lo_from_bytea", "SELECT lo_from_bytea(0, 'x')"),
    ("lo_put", "SELECT lo_put(16400, 0, 'x')"),
    ("lowrite", "SELECT lowrite(3, 'x')"),
    ("lo_open", "SELECT lo_open(16400, 131072)"),
    ("lo_unlink", "SELECT lo_unlink(16400)"),
    ("lo_import", "SELECT lo_import('/etc/passwd')"),
    ("lo_export", "SELECT lo_export(16400, '/tmp/x')"),
    ("pg_create_physical_replication_slot", "SELECT pg_create_physical_replication_slot('s')"),
    ("pg_create_logical_replication_slot",
     "SELECT * FROM pg_create_logical_replication_slot('s', 'test_decoding')"),
    ("pg_replication_origin_create", "SELECT pg_replication_origin_create('o')"),
    ("pg_replication_origin_advance", "SELECT pg_replication_origin_advance('o', '0/1')"),
    ("pg_stat_reset", "SELECT pg_stat_reset()"),
    ("pg_stat_reset_shared", "SELECT pg_stat_reset_shared('bgwriter')"),
    ("pg_create_restore_point", "SELECT pg_create_restore_point('x')"),
    ("pg_logical_emit_message", "SELECT pg_logical_emit_message(true, 'p', 'x')"),
    ("pg_notify", "SELECT pg_notify('channel', 'x')"),
    ("set_config", "SELECT set_config('work_mem', '1GB', false)"),
    ("current_setting", "SELECT current_setting('data_directory')"),
    ("nextval", "SELECT nextval('orders_id_seq')"),
    ("setval", "SELECT setval('orders_id_seq', 1)"),
    ("pg_advisory_lock", "SELECT pg_advisory_lock(1)"),
    ("pg_try_advisory_xact_lock", "SELECT pg_try_advisory_xact_lock(1)"),
    ("dblink", "SELECT * FROM dblink('host=evil', 'SELECT 1') AS t(x int)"),
    ("dblink_connect", "SELECT dblink_connect('host=evil')"),
    ("pg_read_file", "SELECT pg_read_file('postgresql.conf')"),
    ("pg_ls_dir", "SELECT * FROM pg_ls_dir('.')"),
    ("pg_sleep", "SELECT name FROM customers WHERE id = (SELECT 1 FROM pg_sleep(5))"),
    ("pg_terminate_backend", "SELECT pg_terminate_backend(pid) FROM customers"),
    ("txid_current", "SELECT txid_current()"),
    # whole-table / whole-database exports
    ("table_to_xml", "SELECT table_to_xml('customers', true, false, '')"),
    ("query_to_xml", "SELECT query_to_xml('select * from pg_authid', true, true, '')"),
    ("database_to_xml", "SELECT database_to_xml(true, true, '')"),
    ("schema_to_xml", "SELECT schema_to_xml('public', true, true, '')"),
    ("table_to_xmlschema", "SELECT table_to_xmlschema('customers', true, true, '')"),
    ("database_to_xml_and_xmlschema", "SELECT database_to_xml_and_xmlschema(true, true, '')"),
    ("cursor_to_xml", "SELECT cursor_to_xml('c', 10, true, true, '')"),
    # hidden: nested, qualified, quoted, upper case
    ("lo_from_bytea", "SELECT upper(coalesce(lo_from_bytea(0, 'x')::text, 'y'))"),
    ("public.lower", "SELECT public.lower(name) FROM customers"),
    ("evil.count", "SELECT evil.count(*) FROM customers"),
    ("evil.generate_series", "SELECT * FROM evil.generate_series(1, 3)"),
    ("evil.unnest", "SELECT x FROM evil.unnest(ARRAY[1]) AS x"),
    ("lo_create", "SELECT \"lo_create\"(0)"),
    ("lo_create", "SELECT LO_CREATE(0)"),
    ("lo_create", "SELECT name FROM customers ORDER BY lo_create(0)"),
    ("current_user", "SELECT current_user"),
]  # fmt: skip
SECRET_TABLES: list[tuple[str, str]] = [
    ("postgres", "SELECT rolname, rolpassword FROM pg_authid"),
    ("postgres", "SELECT * FROM pg_catalog.pg_shadow"),
    ("postgres", "SELECT umoptions FROM pg_user_mapping"),
    ("postgres", "SELECT * FROM pg_user_mappings"),
    ("postgres", "SELECT * FROM information_schema.user_mapping_options"),
    ("postgres", "SELECT stavalues1 FROM pg_statistic"),
    ("postgres", "SELECT data FROM pg_largeobject"),
    ("postgres", "SELECT count(*) FROM pg_largeobject_metadata"),
    ("postgres", "SELECT * FROM pg_hba_file_rules"),
    ("postgres", "SELECT * FROM pg_ident_file_mappings"),
    ("postgres", "SELECT * FROM pg_file_settings"),
    ("postgres", "SELECT * FROM pg_config"),
    ("postgres", "SELECT name, setting FROM pg_settings"),
    ("postgres", "SELECT query FROM pg_stat_activity"),
    ("postgres", "SELECT query FROM public.pg_stat_statements"),
    ("postgres", "SELECT c.name FROM customers c WHERE EXISTS (SELECT 1 FROM pg_authid a)"),
    ("postgres", "WITH x AS (SELECT usename FROM pg_shadow) SELECT * FROM x"),
    ("postgres", "SELECT client_addr, state, sent_lsn FROM pg_stat_replication"),
    ("postgres", "SELECT pid, ssl, version, client_dn FROM pg_catalog.pg_stat_ssl"),
    ("sqlite", "SELECT name, file FROM pragma_database_list"),
    ("sqlite", "SELECT file FROM pragma_database_list()"),
    ("sqlite", "SELECT * FROM main.pragma_database_list"),
    ("mysql", "SELECT user, authentication_string FROM mysql.user"),
    ("mysql", "SELECT sql_text FROM performance_schema.events_statements_history"),
    ("mysql", "SELECT info FROM information_schema.processlist"),
]
# ordinary reads with common functions: (dialect, query)
READS: list[tuple[str, str]] = [
    ("postgres", "SELECT lower(name), upper(city), coalesce(city, '-'), length(name) FROM "
                 "customers"),
    ("postgres", "SELECT round(avg(total), 2), sum(total), count(*), min(total), max(total) "
                 "FROM orders"),
    ("postgres", "SELECT date_trunc('month', ordered_at) AS m, count(*) FROM orders GROUP BY m"),
    ("postgres", "SELECT extract(year FROM ordered_at), to_char(ordered_at, 'YYYY-MM') FROM "
                 "orders"),
    ("postgres", "SELECT city, string_agg(name, ', ' ORDER BY name), array_agg(id) FROM "
                 "customers GROUP BY city"),
    ("postgres", "SELECT data->>'name', data->'tags', data#>>'{a,b}', "
                 "jsonb_extract_path_text(data, 'x') FROM events"),
    ("postgres", "SELECT id, row_number() OVER (), rank() OVER (ORDER BY total DESC), "
                 "lag(total) OVER (ORDER BY id) FROM orders"),
    ("postgres", "SELECT nullif(city, ''), greatest(a, b), least(a, b), CAST(id AS text), "
                 "id::numeric FROM customers"),
    ("postgres", "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY total) FROM orders"),
    ("postgres", "SELECT now() - interval '7 days', age(ordered_at), date_part('dow', "
                 "ordered_at), make_date(2024, 1, 1) FROM orders"),
    ("postgres", "SELECT split_part(email, '@', 2), regexp_replace(name, '\\s+', ' '), "
                 "initcap(name), left(name, 3), trim(name) FROM customers"),
    ("postgres", "SELECT x FROM generate_series(1, 10) AS g(x)"),
    ("postgres", "SELECT unnest(tags), cardinality(tags), json_build_object('a', id) FROM t"),
    ("postgres", "SELECT pg_catalog.lower(name) FROM customers"),
    ("postgres", "SELECT to_tsvector('english', s) @@ plainto_tsquery('english', 'a'), "
                 "timezone('UTC', ts), ts AT TIME ZONE 'UTC' FROM t"),
    ("postgres", "SELECT a, grouping(a), sum(x) FROM t GROUP BY ROLLUP (a)"),
    ("postgres", "SELECT table_name, column_name FROM information_schema.columns"),
    ("postgres", "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                 "'public'"),
    ("sqlite", "SELECT lower(name), upper(city), coalesce(city, '-'), ifnull(city, '?'), "
               "length(name), substr(name, 1, 2) FROM customers"),
    ("sqlite", "SELECT round(avg(total), 2), sum(total), total(total), count(*) FROM orders"),
    ("sqlite", "SELECT strftime('%Y-%m', ordered_at), date(ordered_at), julianday(ordered_at) "
               "FROM orders"),
    ("sqlite", "SELECT city, group_concat(name, ', ') FROM customers GROUP BY city"),
    ("sqlite", "SELECT json_extract(data, '$.a'), data->>'$.b', iif(id > 1, 'x', 'y') FROM t"),
    ("sqlite", "SELECT id, row_number() OVER (), dense_rank() OVER (ORDER BY total) FROM "
               "orders"),
    ("sqlite", "SELECT name FROM sqlite_master WHERE type = 'table'"),
    ("sqlite", "SELECT name FROM sqlite_schema"),
    ("duckdb", "SELECT lower(name), upper(city), coalesce(city, '-'), length(name) FROM "
               "customers"),
    ("duckdb", "SELECT date_trunc('month', ordered_at), extract(year FROM ordered_at), "
               "strftime(ordered_at, '%Y') FROM orders"),
    ("duckdb", "SELECT city, string_agg(name, ','), list(id), median(total) FROM customers "
               "GROUP BY city"),
    ("duckdb", "SELECT round(avg(total), 2), count(*), row_number() OVER () FROM orders"),
    ("duckdb", "SELECT data->>'$.a', json_extract_string(data, '$.b') FROM t"),
    ("mysql", "SELECT lower(name), upper(city), coalesce(city, '-'), ifnull(city, '?'), "
              "length(name) FROM customers"),
    ("mysql", "SELECT date_format(ordered_at, '%Y-%m'), year(ordered_at), "
              "datediff(now(), ordered_at), extract(month FROM ordered_at) FROM orders"),
    ("mysql", "SELECT city, group_concat(name SEPARATOR ', ') FROM customers GROUP BY city"),
    ("mysql", "SELECT round(avg(total), 2), count(*), row_number() OVER () FROM orders"),
    ("mysql", "SELECT json_extract(data, '$.a'), data->>'$.b', if(id > 1, 'x', 'y') FROM t"),
    ("mysql", "SELECT table_name FROM information_schema.tables"),
]  # fmt: skip


@cache
def guard(dialect: str = "postgres", allowed: tuple[str, ...] = ()) -> Guard:
    guard_table = {"sql_dialect": dialect, "sql_allowed_functions": list(allowed)}
    return build_guard(parse_config({"guard": guard_table}), entry_points=False)


@pytest.mark.parametrize(("name", "text"), ATTACK_FUNCTIONS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(ATTACK_FUNCTIONS)])  # fmt: skip
def test_attack_functions_are_blocked_naming_the_function(name: str, text: str) -> None:
    verdict = guard().check(text, "sql")
    assert verdict.blocked, text
    found = [f for f in verdict.findings if f.code == "SEC.FUNCTION"]
    assert found and any(f"function {name}()" in f.message for f in found), verdict.findings
    # the finding points at the call's name in the client's text
    assert any(name.split(".")[-1] in text[f.span[0] : f.span[1]].lower() for f in found)


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb", "mysql", "trino"])
@pytest.mark.parametrize(
    "call",
    ["lo_from_bytea(0, 'x')", "load_extension('/tmp/x.so')", "read_csv('/etc/passwd')",
     "getenv('HOME')", "load_file('/etc/passwd')", "sleep(10)", "get_lock('x', 1)",
     "duckdb_secrets()", "current_setting('x')", "table_to_xml('t', true, false, '')"],
)  # fmt: skip
def test_other_dialects_block_them_too(dialect: str, call: str) -> None:
    verdict = guard(dialect).check(f"SELECT {call}", "sql")
    assert verdict.blocked and "SEC.FUNCTION" in verdict.codes, (dialect, call, verdict.codes)


@pytest.mark.parametrize(("dialect", "text"), SECRET_TABLES)
def test_secret_catalogs_are_refused(dialect: str, text: str) -> None:
    verdict = guard(dialect).check(text, "sql")
    assert verdict.blocked and "SEC.CATALOG" in verdict.codes, (text, verdict.findings)
    assert any("system catalog" in f.message for f in verdict.findings)


@pytest.mark.parametrize(("dialect", "text"), READS,
                         ids=[f"{d}-{i}" for i, (d, _) in enumerate(READS)])  # fmt: skip
def test_ordinary_reads_with_common_functions_pass(dialect: str, text: str) -> None:
    verdict = guard(dialect).check(text, "sql")
    assert not verdict.blocked, (dialect, text, verdict.findings)
    assert set(verdict.codes) <= {"LIM.INJECTED"}, verdict.findings


def test_operators_outside_pg_catalog_are_calls_of_their_own() -> None:
    evil = guard().check("SELECT a OPERATOR(public.===) b FROM t", "sql")
    assert evil.blocked and "SEC.FUNCTION" in evil.codes
    assert "OPERATOR(public.===)" in evil.findings[0].message
    assert not guard().check("SELECT a OPERATOR(pg_catalog.+) b FROM t", "sql").blocked


def test_other_dialects_get_the_conservative_common_list() -> None:
    read = "SELECT lower(name), count(*), coalesce(city, 'x'), round(avg(total), 2) FROM t"
    assert not guard("trino").check(read, "sql").blocked
    # a PostgreSQL-only built-in is not on the common list
    verdict = guard("trino").check("SELECT jsonb_pretty(j) FROM t", "sql")
    assert verdict.blocked and "SEC.FUNCTION" in verdict.codes
    assert not guard("postgres").check("SELECT jsonb_pretty(j) FROM t", "sql").blocked


def test_calls_are_judged_in_the_dialect_of_the_backend_they_run_on() -> None:
    """A call sqlglot does not know runs on the backend as written: a query read as PostgreSQL
    but run on SQLite may call SQLite's strftime, not PostgreSQL's jsonb_pretty."""
    sqlite_only = "SELECT strftime('%Y', d), total(x) FROM t"
    assert guard().check(sqlite_only, "sql").blocked  # sql_dialect = "postgres", no backend
    g = build_guard(parse_config({}), entry_points=False)
    g.ctx = replace(g.ctx, sql_backend_dialect="sqlite")  # as SqlService sets it
    assert not g.check(sqlite_only, "sql").blocked
    verdict = g.check("SELECT jsonb_pretty(j) FROM t", "sql")
    assert verdict.blocked and "(sqlite)" in verdict.findings[0].message


def test_the_operator_may_open_sql_functions_by_pattern() -> None:
    text = "SELECT similarity(name, 'x'), myschema.score(id) FROM customers"
    assert guard().check(text, "sql").codes.count("SEC.FUNCTION") == 2
    opened = guard("postgres", ("SIMILARITY", "myschema.*")).check(text, "sql")
    assert not opened.blocked, opened.findings
    # Cypher's allowed_functions is another list: it opens no SQL function
    cypher_only = parse_config({"guard": {"allowed_functions": ["similarity", "*"]}})
    g = build_guard(cypher_only, entry_points=False)
    assert g.check("SELECT similarity(name, 'x') FROM customers", "sql").blocked


def test_the_sqlglot_classes_listed_exist() -> None:
    """Each class name on the list is a sqlglot function expression (a sqlglot upgrade that
    renames one would silently block its built-in)."""
    missing = [
        name for names in SQLGLOT_PURE.values() for name in names
        if not (isinstance(getattr(exp, name, None), type) and issubclass(getattr(exp, name),
                exp.Func))
    ]  # fmt: skip
    assert not missing
