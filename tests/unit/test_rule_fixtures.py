"""Fixture pairs per rule: tests/fixtures/<rule>/<case>.cypher or .sql (format:
tests/fixture_format.py; a .sql case is checked as SQL in `config: sql_dialect=…`).

Headers: `schema` (triples) or `schema-file` (under tests/fixtures/schemas/), `sql-schema`
(`table(column type, …); …`, proxy/schema/sql_catalog.py), `config` (`key=value` pairs for
[guard]), `compat` (`key=value` pairs for [compat]; with it the proxy serves its procedures as
`build_guard` does), `dialect`, expected `codes` and `action` (both required). Only the named
rule runs, and a fixture fails if any rule reports GUARD.RULE_ERROR.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from query_guard.api.testing import check_verdict, guard_settings, parse_fixture
from query_guard.build import default_languages
from query_guard.compat.procedures import SERVED_PROCEDURES
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard
from query_guard.guard.registry import build_plugin_manager
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.context import GuardContext
from query_guard.schema.sql_catalog import SqlCatalog

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _cases() -> list[Path]:
    return sorted(p for pattern in ("*/*.cypher", "*/*.sql") for p in FIXTURES.glob(pattern))


def _guard(rule: str, headers: dict[str, str]) -> Guard:
    config = parse_config({"guard": guard_settings([headers.get("config", "")])})
    schema = None
    if "schema" in headers:
        schema = SchemaCatalog.from_triples(headers["schema"])
    elif "schema-file" in headers:
        schema = SchemaCatalog.load(FIXTURES / "schemas" / headers["schema-file"])
    sql_schema = SqlCatalog.from_text(headers["sql-schema"]) if "sql-schema" in headers else None
    pm = build_plugin_manager(builtins=[f"query_guard.rules.{rule}"], entry_points=False)
    compat = parse_config({"compat": guard_settings([headers.get("compat", "")])}).compat
    serving = "compat" in headers and compat.procedures == "proxy"
    ctx = GuardContext(
        schema=schema,
        settings=config.guard,
        served_procedures=SERVED_PROCEDURES if serving else frozenset(),
        compat=compat,
        dialect=headers.get("dialect", ""),
        sql_schema=sql_schema,
    )
    return Guard(pm, ctx, default_languages(ctx.settings.sql_dialect))


def _language(path: Path) -> str:
    return "sql" if path.suffix == ".sql" else "cypher"


@pytest.mark.parametrize("path", _cases(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_rule_fixture(path: Path) -> None:
    headers, source, expected = parse_fixture(path)
    last = {key: values[-1] for key, values in headers.items()}
    verdict = _guard(path.parent.name, last).check(source, _language(path))
    check_verdict(path, verdict, expected, headers)


def test_every_builtin_rule_has_fixtures() -> None:
    from query_guard.guard.registry import builtin_rule_names

    missing = [r for r in builtin_rule_names() if not list((FIXTURES / r).glob("*.cypher"))]
    assert not missing, f"rules without fixtures: {missing}"
