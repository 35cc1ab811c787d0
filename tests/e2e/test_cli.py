"""`query-guard check` as DESIGN §8 specifies: single query, --json, --batch, --disable."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from query_guard.cli.main import main

SCHEMA = "(Person, WORKS_AT, Organization), (Person, KNOWS, Person)"


@pytest.fixture()
def schema_file(tmp_path: Path) -> Path:
    path = tmp_path / "schema.txt"
    path.write_text(SCHEMA)
    return path


def test_check_json(schema_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = "MATCH (o:Organization)-[:WORKS_AT]->(p:Person) RETURN o.name"
    assert main(["check", "--schema", str(schema_file), "--json", q]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["action"] == "rewrite"
    assert out["query"] == "MATCH (o:Organization)<-[:WORKS_AT]-(p:Person) RETURN o.name LIMIT 1000"
    assert [f["code"] for f in out["findings"]] == ["DIR.REVERSED", "LIM.INJECTED"]
    assert {"code", "severity", "message", "start", "end"} <= set(out["findings"][0])


def test_check_human_block_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "MATCH (n) DETACH DELETE n"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("BLOCK") and "SEC.WRITE" in out


def test_disable_rule_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--json", "--disable", "limits", "MATCH (n) RETURN n"]) == 0
    assert json.loads(capsys.readouterr().out)["action"] == "allow"
    assert main(["check", "--disable", "no_such_rule", "RETURN 1"]) == 2
    assert "no_such_rule" in capsys.readouterr().err


def test_batch_keeps_order_uses_line_schema_and_survives_bad_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "in.jsonl"
    lines = [
        {"id": 1, "query": "MATCH (o:Organization)-[:WORKS_AT]->(p:Person) RETURN p",
         "schema_triples": SCHEMA},
        "this is not json",
        {"id": "three", "query": "MATCH (n) RETURN n; MATCH (m) DELETE m"},
        {"id": 4, "query": "MATCH (p:Person)-[:KNOWS]->(:Person) RETURN count(*)"},
    ]  # fmt: skip
    batch.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    assert main(["check", "--batch", str(batch), "--disable", "limits"]) == 2  # a bad line
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o.get("id") for o in out] == [1, None, "three", 4]
    assert out[0]["action"] == "rewrite" and "<-[:WORKS_AT]-" in out[0]["query"]
    assert out[1]["error"]["line"] == 2
    assert out[2]["action"] == "block"
    assert {f["code"] for f in out[2]["findings"]} >= {"SEC.MULTI_STATEMENT", "SEC.WRITE"}
    assert out[3] == {"id": 4, "action": "allow", "query": lines[3]["query"], "findings": []}


def test_batch_reports_bad_encoding_and_bad_schema_per_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "in.jsonl"
    good = json.dumps({"id": "ok", "query": "RETURN 1 AS one"}).encode()
    bad_schema = json.dumps({"id": "s", "query": "RETURN 1", "schema_triples": "nonsense"})
    batch.write_bytes(b'{"id": "latin", "query": "RETURN \xe9"}\n' + bad_schema.encode()
                      + b"\n" + good + b"\n")  # fmt: skip
    assert main(["check", "--batch", str(batch)]) == 2
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert out[0]["error"]["line"] == 1 and "utf-8" in out[0]["error"]["message"]
    assert out[1]["id"] == "s" and "triples" in out[1]["error"]["message"]
    assert out[2]["action"] == "allow"
    assert main(["check", "--batch", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read --batch" in capsys.readouterr().err


def test_missing_schema_file_is_a_clear_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--schema", str(tmp_path / "nope.json"), "RETURN 1"]) == 2
    assert "cannot read schema file" in capsys.readouterr().err


def test_python_dash_m_proxy_is_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "query_guard", "check", "--json", "RETURN 1 AS one"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["action"] == "allow"


def test_schema_command_discovers_a_live_falkordb(
    movies_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "schema.json"
    assert main(["schema", "--uri", movies_url, "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert {"Person", "Movie"} <= set(data["nodes"])
    acted = [r for r in data["relationships"] if r["type"] == "ACTED_IN"]
    assert acted == [
        {"start": "Person", "type": "ACTED_IN", "end": "Movie", "reciprocity": 0.0,
         "properties": ["roles"]}
    ]  # fmt: skip
    # the file it wrote is what `check --schema` reads
    q = "MATCH (m:Movie)-[:ACTED_IN]->(p:Person) RETURN p.name"
    assert main(["check", "--schema", str(out), "--json", "--disable", "limits", q]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["query"] == "MATCH (m:Movie)<-[:ACTED_IN]-(p:Person) RETURN p.name"


def test_schema_command_reports_an_unreachable_database(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["schema", "--uri", "falkordb://127.0.0.1:1/g"]) == 2
    assert "schema discovery failed" in capsys.readouterr().err


def test_disable_help_names_every_built_in_rule(capsys: pytest.CaptureFixture[str]) -> None:
    from query_guard.guard.registry import builtin_rule_names

    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for rule in builtin_rule_names():
        assert rule in text


def _cli(*args: str, stdin: str = "", cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "query_guard", *args], input=stdin, capture_output=True,
        text=True, timeout=120, check=False, cwd=cwd,
    )  # fmt: skip


def test_batch_reads_list_triples_refuses_malformed_ones_and_exits_1_on_block() -> None:
    reversed_q = "MATCH (o:Organization)-[:WORKS_AT]->(p:Person) RETURN p LIMIT 5"
    triples = [["Person", "WORKS_AT", "Organization"]]
    lines = [
        {"id": "a", "query": reversed_q, "schema_triples": triples},
        {"id": "b", "query": "MATCH (n) DETACH DELETE n"},
    ]  # fmt: skip
    done = _cli("check", "--batch", "-", stdin="".join(json.dumps(x) + "\n" for x in lines))
    assert done.returncode == 1, done.stderr  # a line was blocked
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert out[0]["action"] == "rewrite"
    assert out[0]["query"] == "MATCH (o:Organization)<-[:WORKS_AT]-(p:Person) RETURN p LIMIT 5"
    assert out[1]["action"] == "block"

    allowed = _cli("check", "--batch", "-", stdin=json.dumps(lines[0]) + "\n")
    assert allowed.returncode == 0

    bad = {"id": "c", "query": "RETURN 1", "schema_triples": [["Person", "KNOWS"]]}
    done = _cli("check", "--batch", "-", stdin=json.dumps(lines[0]) + "\n" + json.dumps(bad))
    assert done.returncode == 2
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert out[1] == {"id": "c", "error": {"line": 2, "message": (
        "'schema_triples'[0] must be a list of three names [start, type, end], "
        'got ["Person", "KNOWS"]')}}  # fmt: skip


def test_batch_help_names_both_triple_forms_and_the_exit_status() -> None:
    text = " ".join(_cli("check", "--help").stdout.split())
    assert '[["A", "T", "B"], …]' in text and '"(A, T, B), …"' in text
    assert "Exit status: 2 if a line had an error, else 1 if a line was blocked, else 0" in text


def test_rules_prints_whole_descriptions_without_dangling_references() -> None:
    done = _cli("rules")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "DESIGN" not in text
    # the first paragraphs of the docstrings, whole (they span several source lines)
    assert (
        "Read-only — block writes, administration, unsafe or unknown procedures and functions, "
        "and multi-statement scripts, anywhere in the tree (subqueries, FOREACH bodies and SHOW "
        "bodies too)." in text
    )
    rules = json.loads(_cli("rules", "--json").stdout)
    for rule in rules:
        assert rule["summary"].endswith((".", ")")), rule  # a sentence, not a cut line


def test_schema_without_uri_discovers_the_embedded_default(tmp_path: Path) -> None:
    conf = tmp_path / "qg.toml"
    conf.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n')
    done = _cli("schema", "--config", str(conf), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {"Person", "Movie"} <= set(data["nodes"])
    assert (tmp_path / "data" / "falkordb" / "auth.conf").exists()  # what serve uses
    # the embedded server was stopped: a second run starts it again on the same data
    assert _cli("schema", "--config", str(conf), cwd=tmp_path).returncode == 0


def test_schema_help_names_the_uri_forms_with_credentials() -> None:
    text = " ".join(_cli("schema", "--help").stdout.split())
    assert "falkordb://[:PASSWORD@]HOST:PORT/GRAPH" in text
    assert "neo4j+s://[USER:PASSWORD@]HOST:PORT[/DATABASE]" in text
    assert "embedded FalkorDB" in text and "--password-env" in text
