"""`query-guard check --language gremlin` (DESIGN §8): single traversal, --json, --batch,
--config with `[gremlin.*]` tables, --disable by rule name, exit statuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from query_guard.cli.main import main

SEGRA = Path(__file__).resolve().parents[2] / "conf" / "segra-similarity.toml"


def _json(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_rewrite_json(capsys: pytest.CaptureFixture[str]) -> None:
    q = "g.V().hasLabel('person').values('name').toList()"
    assert main(["check", "--language", "gremlin", "--json", q]) == 0
    out = _json(capsys)
    assert out["action"] == "rewrite"
    assert out["query"] == "g.V().hasLabel('person').values('name').limit(1000).toList()"
    finding = out["findings"][0]  # type: ignore[index]
    assert finding["code"] == "LIM.INJECTED"
    assert {"code", "severity", "message", "start", "end"} <= set(finding)


def test_write_is_blocked_with_exit_status_1(capsys: pytest.CaptureFixture[str]) -> None:
    q = "g.V().has('person', 'name', 'marko').fold().coalesce(unfold(), addV('person'))"
    assert main(["check", "--language", "gremlin", q]) == 1
    out = capsys.readouterr().out
    assert out.startswith("BLOCK") and "SEC.WRITE" in out


def test_script_is_blocked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--language", "gremlin", "--json", "g.V().map{ it.get() }"]) == 1
    assert [f["code"] for f in _json(capsys)["findings"]] == ["SEC.SCRIPT"]  # type: ignore[union-attr]


def test_config_drives_similarity_rules(capsys: pytest.CaptureFixture[str]) -> None:
    q = "g.V().has('case', 'id', 'c1').outE('similarReason').inV().in('hasReason').values('title')"
    args = ["check", "--language", "gremlin", "--config", str(SEGRA), "--json", q]
    assert main(args) == 0
    out = _json(capsys)
    assert out["query"] == (
        "g.V().hasLabel('case').hasId('c1').out('hasReason').bothE('similarReason')"
        ".has('similarityScore', P.gte(0.8)).otherV().in('hasReason')"
        ".has('createdAt', P.between('2024-01-01', '2024-06-30')).values('title').limit(1000)"
    )
    codes = {f["code"] for f in out["findings"]}  # type: ignore[union-attr]
    assert codes == {
        "ANC.ID", "DIR.SIMILARITY_ASYMMETRIC", "SIM.THRESHOLD", "SIM.BRACKET", "SIM.WINDOW",
        "LIM.INJECTED",
    }  # fmt: skip


def test_config_rule_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "qg.toml"
    config.write_text(
        "[rules.gremlin_scans]\nblock = true\n[rules.gremlin_read_only]\n"
        'allowed_calls = ["tinker.search"]\n'
    )
    base = ["check", "--language", "gremlin", "--config", str(config), "--json"]
    assert main([*base, "g.V().values('name')"]) == 1
    assert _json(capsys)["findings"][0]["code"] == "LIM.FULL_SCAN"  # type: ignore[index]
    assert main([*base, "g.call('tinker.search', [search: 'vada']).element()"]) == 0
    assert _json(capsys)["action"] == "allow"


def test_disable_gremlin_rule_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    q = "g.V().hasLabel('person').values('name')"
    assert main(["check", "--language", "gremlin", "--disable", "gremlin_limits", "--json", q]) == 0
    assert _json(capsys)["action"] == "allow"


def test_bad_gremlin_config_names_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(
        '[gremlin.similarity]\nedges = { similarReason = "hasReason" }\n'
        'window = ["2024-06-30", "2024-01-01"]\n'
    )
    q = "g.V(1).out('hasReason').bothE('similarReason').otherV()"
    status = main(["check", "--language", "gremlin", "--config", str(config), "--json", q])
    captured = capsys.readouterr()
    if status == 2:  # validated at load time
        assert "gremlin.similarity.window" in captured.err
    else:  # validated by the rules: reported, never a crash
        messages = [f["message"] for f in json.loads(captured.out)["findings"]]
        assert any("gremlin.similarity.window" in m for m in messages)


def test_batch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    batch = tmp_path / "in.jsonl"
    lines = [
        {"id": "a", "query": "g.V().hasLabel('person').out('knows')"},
        "not json",
        {"id": "b", "query": "```gremlin\ng.V(1).drop()\n```"},
        {"id": "c", "query": "g.V(1).values('name')"},
        {"id": "d", "query": "g.V().outt("},
    ]
    batch.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    assert main(["check", "--language", "gremlin", "--batch", str(batch)]) == 2  # not JSON
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["id"] for o in out] == ["a", None, "b", "c", "d"]
    assert out[0]["action"] == "rewrite" and out[0]["query"].endswith(".limit(1000)")
    assert "error" in out[1]
    assert out[2]["action"] == "block"
    assert [f["code"] for f in out[2]["findings"]] == ["SYN.FENCE", "SEC.WRITE"]
    assert out[3] == {
        "id": "c",
        "action": "allow",
        "query": "g.V(1).values('name')",
        "findings": [],
    }
    assert out[4]["action"] == "block" and out[4]["findings"][0]["code"] == "SYN.PARSE"
