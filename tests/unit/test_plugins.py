"""The plugin system as a plugin author sees it: entry points, disabling, options, hook docs."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.errors import PluginError
from query_guard.guard import hookspecs
from query_guard.guard.registry import build_plugin_manager, builtin_rule_names

RULE = '''
from query_guard.guard.hookspecs import hookimpl
from query_guard.model import Edit, Finding, Severity


@hookimpl
def guard_cypher(query, ctx):
    """Flags RETURN * (an example third-party rule)."""
    word = ctx.option("no_star", "replacement", None)
    at = query.text.find("RETURN *")
    if at < 0:
        return []
    fix = (Edit(at + 7, at + 8, word),) if word else None
    return [Finding("RET.STAR", Severity.WARNING, "RETURN * returns everything", (at, at + 8),
                    fix=fix)]
'''


@pytest.fixture()
def installed_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A real distribution on sys.path declaring an entry point in the `query_guard` group."""
    (tmp_path / "qg_no_star.py").write_text(RULE)
    dist = tmp_path / "qg_no_star-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: qg-no-star\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[query_guard]\nno_star = qg_no_star\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "no_star"
    sys.modules.pop("qg_no_star", None)


def test_entry_point_rule_is_loaded_and_configured_from_toml(installed_rule: str) -> None:
    config = parse_config({"rules": {installed_rule: {"replacement": "m"}}})
    guard = build_guard(config)
    verdict = guard.check("MATCH (m) RETURN * LIMIT 5")
    assert verdict.query == "MATCH (m) RETURN m LIMIT 5"
    star = next(f for f in verdict.findings if f.code == "RET.STAR")
    assert star.rule == installed_rule


def test_entry_point_rule_can_be_disabled_by_name(installed_rule: str) -> None:
    guard = build_guard(parse_config({"guard": {"disable": [installed_rule]}}))
    assert "RET.STAR" not in guard.check("MATCH (m) RETURN * LIMIT 5").codes


def test_disabling_an_unknown_rule_is_an_error_naming_the_rules() -> None:
    with pytest.raises(PluginError, match="limts") as info:
        build_plugin_manager(disable=["limts"], entry_points=False)
    assert "limits" in str(info.value)


def test_plugin_manager_is_per_instance() -> None:
    a = build_plugin_manager(disable=["limits"], entry_points=False)
    b = build_plugin_manager(entry_points=False)
    assert a.get_plugin("limits") is None and b.get_plugin("limits") is not None


def test_builtin_rules_are_documented_plugins() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text()
    pm = build_plugin_manager(entry_points=False)
    for name in builtin_rule_names():
        module = pm.get_plugin(name)
        assert module is not None, name
        assert module.__doc__ and len(module.__doc__.strip()) > 80, f"{name} lacks its docs"
        assert f"## `{name}`" in page, f"{name} missing from docs/rules.md"


def test_every_hook_is_documented() -> None:
    specs = [
        fn for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
        if name.startswith("guard_")
    ]  # fmt: skip
    assert specs
    for fn in specs:
        assert fn.__doc__ and fn.__doc__.strip(), fn.__name__
