"""Broken rule plugins fail safely and visibly: one clear error naming the plugin; `check`
exits 2 (usage/config), not 1 (BLOCK); `serve` skips a broken third-party plugin unless
`[guard] on_rule_error = "block"`."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from query_guard.build import build_guard
from query_guard.cli.main import EXIT_USAGE, main
from query_guard.config.load import parse_config
from query_guard.errors import ConfigError, PluginError
from query_guard.guard.hookspecs import hookimpl
from query_guard.model import Finding, Severity

BROKEN_IMPORT = "import qg_module_that_does_not_exist\n"
WRONG_ARGUMENT = '''
from query_guard.guard.hookspecs import hookimpl

@hookimpl
def guard_cypher(query, context):
    return []
'''
UNKNOWN_HOOK = '''
from query_guard.guard.hookspecs import hookimpl

@hookimpl
def guard_cyper(query, ctx):
    return []
'''


def _install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> None:
    """A real distribution on sys.path declaring `name` in the `query_guard` group."""
    module = f"qg_{name}"
    (tmp_path / f"{module}.py").write_text(source)
    dist = tmp_path / f"qg_{name}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: qg-{name}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[query_guard]\n{name} = {module}\n")
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.fixture(autouse=True)
def _forget_modules() -> Iterator[None]:
    yield
    for name in [m for m in sys.modules if m.startswith("qg_")]:
        sys.modules.pop(name, None)


@pytest.mark.parametrize(
    ("source", "words"),
    [
        (BROKEN_IMPORT, ["broken", "failed to import", "qg-broken"]),
        (WRONG_ARGUMENT, ["broken", "context"]),
        (UNKNOWN_HOOK, ["guard_cyper"]),
    ],
    ids=["import-error", "wrong-argument", "unknown-hook"],
)
def test_a_broken_plugin_is_one_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, words: list[str]
) -> None:
    _install(tmp_path, monkeypatch, "broken", source)
    with pytest.raises(PluginError) as info:
        build_guard()
    for word in words:
        assert word in str(info.value)


def test_check_exits_2_on_a_broken_plugin_not_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _install(tmp_path, monkeypatch, "broken", BROKEN_IMPORT)
    assert main(["check", "RETURN 1"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "broken" in err and "Traceback" not in err


def test_serve_skips_a_broken_third_party_plugin_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch, "broken", BROKEN_IMPORT)
    guard = build_guard(skip_broken=True)  # what ProxyServer.start asks for
    assert guard.pm.get_plugin("read_only") is not None
    assert guard.check("MATCH (n) DETACH DELETE n").blocked


def test_on_rule_error_block_fails_closed_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch, "broken", BROKEN_IMPORT)
    config = parse_config({"guard": {"on_rule_error": "block"}})
    with pytest.raises(PluginError, match="broken"):
        build_guard(config, skip_broken=True)


def test_on_rule_error_is_validated() -> None:
    with pytest.raises(ConfigError, match=r"guard\.on_rule_error"):
        parse_config({"guard": {"on_rule_error": "ignore"}})


WRAPPER = '''
from query_guard.guard.hookspecs import hookimpl

@hookimpl(wrapper=True)
def guard_cypher(query, ctx):
    return (yield)
'''
RETURNS_TEXT = '''
from query_guard.guard.hookspecs import hookimpl

@hookimpl
def guard_cypher(query, ctx):
    return "looks fine to me"
'''
RAISES = '''
from query_guard.guard.hookspecs import hookimpl

@hookimpl
def guard_cypher(query, ctx):
    raise KeyError("labels")
'''


def test_a_wrapper_hook_is_one_error_naming_the_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _install(tmp_path, monkeypatch, "wrapping", WRAPPER)
    with pytest.raises(PluginError, match=r"wrapping.*guard_cypher.*wrapper"):
        build_guard()
    assert main(["check", "RETURN 1"]) == EXIT_USAGE
    assert "wrapping" in capsys.readouterr().err


def test_serve_leaves_out_a_wrapper_plugin_and_guards_with_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch, "wrapping", WRAPPER)
    guard = build_guard(skip_broken=True)
    assert guard.pm.get_plugin("wrapping") is None
    assert guard.check("MATCH (n) DETACH DELETE n").blocked
    assert guard.check("MATCH (n) RETURN n LIMIT 5").action == "allow"


@pytest.mark.parametrize(
    ("source", "words"),
    [(RETURNS_TEXT, ["returned str", "not a list of Finding"]), (RAISES, ["KeyError"])],
    ids=["returns-text", "raises"],
)
@pytest.mark.parametrize("on_rule_error", ["warn", "block"])
def test_a_failing_rule_is_a_finding_naming_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    source: str,
    words: list[str],
    on_rule_error: str,
) -> None:
    _install(tmp_path, monkeypatch, "sloppy", source)
    guard = build_guard(parse_config({"guard": {"on_rule_error": on_rule_error}}))
    verdict = guard.check("MATCH (n) RETURN n LIMIT 5")
    (error,) = [f for f in verdict.findings if f.code == "GUARD.RULE_ERROR"]
    assert error.rule == "sloppy" and "rule sloppy failed" in error.message
    for word in words:
        assert word in error.message
    assert verdict.blocked is (on_rule_error == "block")
    # the other rules still ran: a write is blocked whatever the broken rule did
    assert "SEC.WRITE" in guard.check("MATCH (n) DETACH DELETE n").codes


class _Quiet:
    """Returns None (no findings) — allowed by the hookspec."""

    name = "quiet"

    @hookimpl
    def guard_cypher(self, query: Any, ctx: Any) -> None:
        return None


class _Tagger:
    name = "tagger"

    @hookimpl
    def guard_cypher(self, query: Any, ctx: Any) -> list[Finding]:
        return [Finding("PAT.NOTE", Severity.INFO, "a note", (0, 1))]


def test_findings_are_named_after_their_rule_when_another_rule_returns_none() -> None:
    guard = build_guard(extra_plugins=[_Tagger(), _Quiet()], entry_points=False)
    verdict = guard.check("MATCH (n) RETURN n LIMIT 5")
    assert [(f.code, f.rule) for f in verdict.findings] == [("PAT.NOTE", "tagger")]
