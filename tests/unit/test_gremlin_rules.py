"""Fixture pairs per Gremlin rule: tests/fixtures/gremlin_<rule>/<case>.gremlin.

A fixture holds header lines `//! key: value`, the input traversal, a line `//=>` and the
expected output traversal. Only the rule named by the directory runs (plus `also:` rules).
Headers (each may repeat; repeated TOML lines are joined):

* `codes:` expected finding codes (a set), `action:` allow / rewrite / block (both required);
* `config:` `[guard]` pairs `key=value, …` (as for the Cypher fixtures);
* `config-file:` a whole TOML configuration, relative to the project root (shared settings such
  as `conf/segra-similarity.toml`); the headers below are merged over it;
* `gremlin:` a TOML line inside `[gremlin]`, e.g. `similarity.threshold = 0.8`;
* `rules:` a TOML line inside `[rules]`, e.g. `gremlin_scans.block = true`;
* `schema:` schema-catalog triples, `schema-json:` a schema catalog as one line of JSON;
* `also:` more rule modules to run, after the named one.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from query_guard.api.testing import check_verdict, guard_settings, parse_fixture
from query_guard.build import default_languages
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard
from query_guard.guard.registry import build_plugin_manager
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.context import GuardContext

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ROOT = FIXTURES.parent.parent


def _cases() -> list[Path]:
    return sorted(FIXTURES.glob("gremlin_*/*.gremlin"))


def fixture_guard(rule: str, headers: dict[str, list[str]]) -> Guard:
    raw: dict[str, Any] = {}
    for name in headers.get("config-file", []):
        raw = _merge(raw, tomllib.loads((ROOT / name).read_text(encoding="utf-8")))
    raw = _merge(raw, {"guard": guard_settings(headers.get("config", []))})
    for section in ("gremlin", "rules"):
        if section in headers:
            raw = _merge(raw, {section: tomllib.loads("\n".join(headers[section]))})
    config = parse_config(raw)
    schema = None
    if "schema" in headers:
        schema = SchemaCatalog.from_triples(", ".join(headers["schema"]))
    elif "schema-json" in headers:
        schema = SchemaCatalog.from_dict(json.loads(" ".join(headers["schema-json"])))
    also = [f"query_guard.rules.{r.strip()}"
            for line in headers.get("also", []) for r in line.split(",")]  # fmt: skip
    pm = build_plugin_manager(builtins=[f"query_guard.rules.{rule}", *also], entry_points=False)
    ctx = GuardContext(
        schema=schema, settings=config.guard, rule_options=config.rules, gremlin=config.gremlin
    )
    return Guard(pm, ctx, default_languages(ctx.settings.sql_dialect), cache_size=0)


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


@pytest.mark.parametrize("path", _cases(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_gremlin_rule_fixture(path: Path) -> None:
    headers, source, expected = parse_fixture(path)
    verdict = fixture_guard(path.parent.name, headers).check(source, "gremlin")
    check_verdict(path, verdict, expected, headers)


def test_every_gremlin_rule_has_fixtures() -> None:
    from query_guard.guard.registry import builtin_rule_names

    rules = [r for r in builtin_rule_names() if r.startswith("gremlin_")]
    assert len(rules) >= 6
    missing = [r for r in rules if not list((FIXTURES / r).glob("*.gremlin"))]
    assert not missing, f"Gremlin rules without fixtures: {missing}"


def test_gremlin_rules_leave_cypher_alone() -> None:
    """The Gremlin rules implement only `guard_gremlin`: a Cypher write passes them untouched."""
    from query_guard.guard.registry import BUILTIN_RULES

    gremlin_rules = [m for m in BUILTIN_RULES if m.rsplit(".", 1)[1].startswith("gremlin_")]
    pm = build_plugin_manager(builtins=gremlin_rules, entry_points=False)
    for name, plugin in pm.list_name_plugin():
        if name.startswith("gremlin_"):
            assert not hasattr(plugin, "guard_cypher"), name
    guard = Guard(pm, GuardContext(), default_languages(), cache_size=0)
    verdict = guard.check("MATCH (n) DETACH DELETE n")
    assert verdict.action == "allow" and not verdict.findings


# ---------------------------------------------------------------- [gremlin.*] configuration


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"similarity": {"score_property": "s"}}, "gremlin.similarity.edges"),
        ({"similarity": {"edges": {"a": 1}}}, "gremlin.similarity.edges.a"),
        ({"similarity": {"edges": {"a": "b"}, "window": ["x"]}}, "gremlin.similarity.window"),
        ({"similarity": {"edges": {"a": "b"}, "window": [2, 1]}}, "gremlin.similarity.window"),
        ({"similarity": {"edges": {"a": "b"}, "window": [1, "x"]}}, "gremlin.similarity.window"),
        ({"similarity": {"edges": {"a": "b"}, "threshold": "hi"}}, "gremlin.similarity.threshold"),
        ({"similarity": {"edges": {"a": "b"}, "colour": 1}}, "gremlin.similarity.colour"),
        ({"similarity": "yes"}, "gremlin.similarity"),
        ({"schema": {"edges": [["a", "b"]]}}, "gremlin.schema.edges[0]"),
        ({"schema": {"edges": "a"}}, "gremlin.schema.edges"),
        ({"schema": {"nodes": []}}, "gremlin.schema.nodes"),
    ],
)
def test_gremlin_config_errors_name_the_key(raw: dict[str, Any], key: str) -> None:
    from query_guard.errors import ConfigError
    from query_guard.gremlin.similarity import gremlin_settings

    with pytest.raises(ConfigError) as info:
        gremlin_settings(raw)
    assert info.value.key == key


def test_gremlin_config_parses_into_frozen_settings() -> None:
    import dataclasses
    import datetime as dt

    from query_guard.gremlin.similarity import gremlin_settings

    config = tomllib.loads((ROOT / "conf" / "segra-similarity.toml").read_text())
    settings = gremlin_settings(config["gremlin"])
    sim = settings.similarity
    assert sim is not None and sim.threshold == 0.8 and sim.case_label == "case"
    assert sim.content_edge("similarSymptoms") == "exhibits" and sim.content_edge("x") is None
    assert sim.window_predicate() == "P.between('2024-01-01', '2024-06-30')"
    catalog = settings.schema.catalog()
    assert catalog is not None and catalog.fits(["case"], "hasReason", ["reason"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        sim.threshold = 0.1  # type: ignore[misc]
    dated = gremlin_settings(
        {"similarity": {"edges": {"a": "b"}, "window": [dt.date(2024, 1, 1), dt.date(2024, 2, 1)]}}
    )
    assert dated.similarity is not None
    assert dated.similarity.window_predicate() == (
        "P.between(datetime('2024-01-01T00:00:00Z'), datetime('2024-02-01T00:00:00Z'))"
    )
    assert gremlin_settings({}).similarity is None and gremlin_settings({}).schema.catalog() is None
