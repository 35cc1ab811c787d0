"""Fixture pairs per rule: tests/fixtures/<rule>/<case>.cypher or .sql (format:
tests/fixture_format.py; a .sql case is checked as SQL in `config: sql_dialect=…`).

Headers: `schema` (triples) or `schema-file` (under tests/fixtures/schemas/), `config`
(`key=value` pairs for [guard]), `compat` (`key=value` pairs for [compat]; with it the
proxy serves its procedures as `build_guard` does), `dialect`, expected `codes` and `action`.
Only the named rule runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy.compat.procedures import SERVED_PROCEDURES
from proxy.config import parse_config
from proxy.context import GuardContext
from proxy.pipeline import Guard
from proxy.plugins import build_plugin_manager
from proxy.schema import SchemaCatalog
from tests.fixture_format import guard_settings, parse_fixture

FIXTURES = Path(__file__).parent / "fixtures"


def _cases() -> list[Path]:
    return sorted(p for pattern in ("*/*.cypher", "*/*.sql") for p in FIXTURES.glob(pattern))


def _parse_fixture(path: Path) -> tuple[dict[str, str], str, str]:
    headers, source, expected = parse_fixture(path)
    return {key: values[-1] for key, values in headers.items()}, source, expected


def _guard(rule: str, headers: dict[str, str]) -> Guard:
    config = parse_config({"guard": guard_settings([headers.get("config", "")])})
    schema = None
    if "schema" in headers:
        schema = SchemaCatalog.from_triples(headers["schema"])
    elif "schema-file" in headers:
        schema = SchemaCatalog.load(FIXTURES / "schemas" / headers["schema-file"])
    pm = build_plugin_manager(builtins=[f"plugins.{rule}"], entry_points=False)
    compat = parse_config({"compat": guard_settings([headers.get("compat", "")])}).compat
    serving = "compat" in headers and compat.procedures == "proxy"
    ctx = GuardContext(
        schema=schema,
        settings=config.guard,
        served_procedures=SERVED_PROCEDURES if serving else frozenset(),
        compat=compat,
        dialect=headers.get("dialect", ""),
    )
    return Guard(pm, ctx)


def _language(path: Path) -> str:
    return "sql" if path.suffix == ".sql" else "cypher"


@pytest.mark.parametrize("path", _cases(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_rule_fixture(path: Path) -> None:
    headers, source, expected = _parse_fixture(path)
    verdict = _guard(path.parent.name, headers).check(source, _language(path))
    assert verdict.action == headers.get("action", verdict.action)
    assert verdict.query == expected
    if "codes" in headers:
        wanted = sorted(c.strip() for c in headers["codes"].split(",") if c.strip())
        assert sorted(set(verdict.codes)) == wanted


def test_every_builtin_rule_has_fixtures() -> None:
    from proxy.plugins import builtin_rule_names

    missing = [r for r in builtin_rule_names() if not list((FIXTURES / r).glob("*.cypher"))]
    assert not missing, f"rules without fixtures: {missing}"
