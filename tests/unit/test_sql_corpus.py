"""The SQL guard on 1,034 real text-to-SQL queries (the Spider dev set's gold SQL, written for
SQLite; tests/data/spider/PROVENANCE.md): every one is judged without a rule error or a parse
failure, none of these reads is blocked (read-only false positives: 0, in four dialects), and
the only name findings are Spider's double-quoted strings — SQLite reads `"JetBlue Airways"`
as text only because no column has that name, which `sql_unknown_names` reports."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard
from query_guard.schema.sql_catalog import SqlCatalog

DATA = Path(__file__).resolve().parents[1] / "data" / "spider"


@cache
def corpus() -> list[tuple[str, str]]:
    lines = (DATA / "dev_gold.sql.tsv").read_text(encoding="utf-8").splitlines()
    return [(q, db) for q, db in (line.split("\t") for line in lines if line.strip())]


@cache
def schemas() -> dict[str, SqlCatalog]:
    raw = json.loads((DATA / "dev_schemas.json").read_text(encoding="utf-8"))
    return {db: SqlCatalog(tables, "sqlite") for db, tables in raw.items()}


def guard(dialect: str, catalog: SqlCatalog | None = None) -> Guard:
    g = build_guard(parse_config({"guard": {"sql_dialect": dialect}}), entry_points=False)
    if catalog is not None:
        g.ctx = replace(g.ctx, sql_schema=catalog)
    return g


def test_the_corpus_is_real_and_large_enough() -> None:
    queries = corpus()
    assert len(queries) == 1034
    assert {db for _, db in queries} == set(schemas())


@pytest.mark.parametrize("dialect", ["sqlite", "postgres", "mysql", "duckdb"])
def test_no_real_read_is_blocked(dialect: str) -> None:
    g = guard(dialect)
    blocked: Counter[str] = Counter()
    for text, _ in corpus():
        verdict = g.check(text, "sql")
        assert "GUARD.RULE_ERROR" not in verdict.codes, (text, verdict.findings)
        if verdict.blocked:
            blocked.update(f.code for f in verdict.findings if f.severity.value == "error")
    assert sum(blocked.values()) == 0, f"read-only false positives in {dialect}: {blocked}"


def test_with_the_schemas_only_double_quoted_strings_are_named() -> None:
    guards = {db: guard("sqlite", catalog) for db, catalog in schemas().items()}
    named: list[str] = []
    for text, db in corpus():
        verdict = guards[db].check(text, "sql")
        assert not verdict.blocked and "GUARD.RULE_ERROR" not in verdict.codes, text
        assert set(verdict.codes) <= {"LIM.INJECTED", "SCH.UNKNOWN_COLUMN"}, verdict.findings
        for f in verdict.findings:
            if f.code == "SCH.UNKNOWN_COLUMN":
                assert f.fix is None  # no declared name is close to a string's text
                named.append(text[f.span[0] : f.span[1]])
    assert named and all(n.startswith('"') and n.endswith('"') for n in named), named[:5]
