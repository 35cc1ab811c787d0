"""Typed rule options (`OPTIONS`) and `query-guard rules` as a plugin author and an operator
see them."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from query_guard.build import build_guard
from query_guard.cli.main import main
from query_guard.config.load import parse_config
from query_guard.errors import ConfigError

RULE = '''
"""No star — flags RETURN * (an example third-party rule)."""
from query_guard.api import Finding, Option, Severity, hookimpl

OPTIONS = {"severity": Option(str, "warning", "how loud", choices=("warning", "error"))}


@hookimpl
def guard_cypher(query, ctx):
    at = query.text.find("RETURN *")
    if at < 0:
        return []
    level = Severity(ctx.options("no_star")["severity"])
    return [Finding("RET.STAR", level, "RETURN * returns everything", (at, at + 8))]
'''


@pytest.fixture()
def no_star(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "qg_no_star_opts.py").write_text(RULE)
    dist = tmp_path / "qg_no_star_opts-0.2.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: qg-no-star-opts\nVersion: 0.2\n")
    (dist / "entry_points.txt").write_text("[query_guard]\nno_star = qg_no_star_opts\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "no_star"
    sys.modules.pop("qg_no_star_opts", None)


def test_declared_options_get_defaults_and_types(no_star: str) -> None:
    verdict = build_guard().check("MATCH (m) RETURN * LIMIT 5")
    assert "RET.STAR" in verdict.codes and not verdict.blocked
    strict = build_guard(parse_config({"rules": {"no_star": {"severity": "error"}}}))
    assert strict.check("MATCH (m) RETURN * LIMIT 5").blocked


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ({"no_star": {"severity": "loud"}}, r"rules\.no_star\.severity"),
        ({"no_star": {"colour": "red"}}, r"rules\.no_star\.colour"),
        ({"fix_rel_types": {"min_similarity": "high"}}, r"rules\.fix_rel_types\.min_similarity"),
        ({"gremlin_scans": {"block": 1}}, r"rules\.gremlin_scans\.block"),
    ],
)
def test_bad_rule_options_name_the_key(no_star: str, table: dict, key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        build_guard(parse_config({"rules": table}))


def test_int_is_accepted_for_a_float_option() -> None:
    guard = build_guard(parse_config({"rules": {"fix_rel_types": {"min_similarity": 1}}}))
    assert guard.ctx.options("fix_rel_types")["min_similarity"] == 1.0


def test_rules_command_lists_source_codes_and_options(
    no_star: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rules", "--json"]) == 0
    rules = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rules["no_star"]["source"].startswith("qg-no-star-opts 0.2")
    assert rules["no_star"]["codes"] == ["RET.STAR"]
    assert rules["no_star"]["options"]["severity"]["default"] == "warning"
    assert rules["read_only"]["source"] == "built-in query_guard.rules.read_only"
    assert "SEC.WRITE" in rules["read_only"]["codes"]
    assert rules["fix_rel_types"]["options"]["min_similarity"]["type"] == "float"


@pytest.mark.parametrize(
    ("table", "key", "problem"),
    [
        ({"gremlin_scans": {"block": "true"}}, "rules.gremlin_scans.block", "must be bool"),
        ({"gremlin_read_only": {"allowed_calls": [1]}},
         "rules.gremlin_read_only.allowed_calls[0]", "must be str, got 1"),
        ({"gremlin_read_only": {"allowed_calls": "x"}},
         "rules.gremlin_read_only.allowed_calls", "must be list"),
        ({"fix_rel_types": {"min_similarity": True}}, "rules.fix_rel_types.min_similarity",
         "must be float, got True"),
        ({"fix_rel_types": {"threshold": 1}}, "rules.fix_rel_types.threshold",
         "unknown option; known options: min_similarity"),
        ({"read_only": {"strict": True}}, "rules.read_only.strict", "known options: none"),
        ({"no_such_rule": {}}, "rules.no_such_rule", "unknown rule; installed rules: "),
    ],
)  # fmt: skip
def test_rule_options_are_strict(table: dict, key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_guard(parse_config({"rules": table}))
    assert info.value.key == key
    assert problem in info.value.problem


def test_a_disabled_rule_may_keep_its_table() -> None:
    cfg = parse_config({"guard": {"disable": ["fix_rel_types"]},
                        "rules": {"fix_rel_types": {"min_similarity": 0.5}}})  # fmt: skip
    assert build_guard(cfg).pm.is_blocked("fix_rel_types")


def test_rule_option_errors_name_the_file_line(no_star: str, tmp_path: Path) -> None:
    from query_guard.config.load import load_config

    path = tmp_path / "conf.toml"
    path.write_text('[guard]\nread_only = true\n\n[rules."no_star"]\nseverity = "loud"\n')
    with pytest.raises(ConfigError) as info:
        build_guard(load_config(path))
    assert str(info.value) == (
        f"{path}:5: rules.no_star.severity: must be one of 'warning' or 'error', got 'loud'"
    )
    path.write_text("[rules.nope]\nx = 1\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}:1: rules\.nope: unknown"):
        build_guard(load_config(path))


def test_options_produce_a_pydantic_model_and_take_any_annotation() -> None:
    from typing import Literal

    from query_guard.guard.options import Option, options_model, resolve_options

    declared = {
        "schema": Option(Literal["a", "b"], "a", "a name pydantic models use themselves"),
        "ports": Option(list[int], [], "numbers"),
        "level": Option(str, "warning", "how loud", choices=("warning", "error")),
    }
    model = options_model("demo", declared)
    props = model.model_json_schema(by_alias=True)["properties"]
    assert props["level"]["enum"] == ["warning", "error"]
    assert props["schema"]["description"] == "a name pydantic models use themselves"
    assert resolve_options("demo", declared, {"schema": "b", "ports": [1, 2]}) == {
        "schema": "b", "ports": [1, 2], "level": "warning",
    }  # fmt: skip
    with pytest.raises(ConfigError, match=r"rules\.demo\.ports\[1\]: must be int, got '2'"):
        resolve_options("demo", declared, {"ports": [1, "2"]})
