"""The audit log against a real run (neo4j driver → ProxyServer → embedded FalkorDB): one JSON
line per query with client, original, verdict, final query, codes and timings."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import neo4j
import pytest
from neo4j import exceptions as nex

from query_guard.config.load import parse_config
from query_guard.run.audit import AuditLog
from query_guard.runner import ProxyThread

# one schema for every front (proxy.run.record.KEYS, as the audit log names them; parameters
# only when asked), front-specific fields under `detail`
FIELDS = {
    "event", "timestamp", "front", "client", "user", "language", "original", "question",
    "database", "in_transaction", "verdict", "codes", "final_query", "guard_ms", "backend_ms",
    "error", "repair", "repaired", "detail",
}  # fmt: skip


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def test_one_json_line_per_query_from_a_real_run(tmp_path: Path) -> None:
    audit = tmp_path / "logs" / "audit.jsonl"
    config = parse_config(
        {
            "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp_path / "data")},
            "audit": {"path": str(audit)},
        }
    )
    queries = [
        "MATCH (m:Movie) RETURN count(m) AS n",  # allowed as is
        "MATCH (m:Movie)-[:DIRECTED]->(p:Person) RETURN p.name AS name",  # flipped + LIMIT
        "CREATE (:Movie {title: 'x'})",  # blocked
        "RETURN apoc.text.join(['a'], ',') AS x",  # an allowed function FalkorDB lacks
    ]
    with (
        ProxyThread(config) as proxy,
        neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=("u", "p")) as drv,
    ):
        for query in queries:
            with drv.session() as session, contextlib.suppress(nex.Neo4jError):
                session.run(query).consume()
    lines = _lines(audit)
    assert [line["original"] for line in lines] == queries
    for line in lines:
        assert set(line) == FIELDS, set(line) ^ FIELDS
        assert line["event"] == "query" and line["client"].startswith("127.0.0.1:")
        assert line["front"] == "bolt" and line["detail"]["connection_id"]
        assert isinstance(line["guard_ms"], int | float) and line["guard_ms"] >= 0
    allowed, rewritten, blocked, failed = lines
    assert allowed["verdict"] == "allow" and allowed["final_query"] == queries[0]
    assert allowed["codes"] == [] and allowed["error"] is None
    assert isinstance(allowed["backend_ms"], int | float)
    assert rewritten["verdict"] == "rewrite"
    assert {"DIR.REVERSED", "LIM.INJECTED"} <= set(rewritten["codes"])
    assert "<-[:DIRECTED]-" in rewritten["final_query"]
    assert rewritten["final_query"].endswith("LIMIT 1000")
    assert blocked["verdict"] == "block" and blocked["final_query"] is None
    assert "SEC.WRITE" in blocked["codes"] and blocked["backend_ms"] is None
    assert blocked["error"] == "Neo.ClientError.Security.Forbidden"
    assert failed["verdict"] in ("allow", "rewrite") and failed["error"]
    assert isinstance(failed["backend_ms"], int | float)


def test_parameters_only_when_asked(tmp_path: Path) -> None:
    event = {"query": "MATCH (n) RETURN n", "action": "allow", "parameters": {"ssn": "123"}}
    quiet = AuditLog(str(tmp_path / "a.jsonl"))
    quiet(event)
    quiet.close()
    loud = AuditLog(str(tmp_path / "b.jsonl"), include_parameters=True)
    loud(event)
    loud.close()
    loud(event)  # after close: dropped, not an exception on the query path
    (a,) = _lines(tmp_path / "a.jsonl")
    (b,) = _lines(tmp_path / "b.jsonl")
    assert "parameters" not in a and a["original"] == "MATCH (n) RETURN n"
    assert b["parameters"] == {"ssn": "123"} and b["verdict"] == "allow"


def test_standard_error_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    log = AuditLog()
    log({"query": "RETURN 1", "action": "allow", "event": "ignored"})
    log.close()  # does not close stderr
    line = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert line["event"] == "query" and line["original"] == "RETURN 1"
