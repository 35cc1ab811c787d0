"""The audit log's lines: rendered when the batch is written (not on the query's path) and
exactly what structlog's `TimeStamper(fmt="iso", utc=True)` + `JSONRenderer` made of them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import structlog

from query_guard.run.audit import AuditLog

EVENT = {
    "front": "bolt", "query": "MATCH (m:Movie) RETURN m", "parameters": {"t": 1},
    "action": "rewrite", "codes": ["LIM.INJECTED"], "detail": {"id": "ab", "x": object()},
    "guard_ms": 0, "event": "theirs", "note": "ünï ✓",
}  # fmt: skip


def test_a_line_is_what_structlog_renders() -> None:
    audit = AuditLog()
    line = audit.render(EVENT, 1_700_000_000.25)
    fields = {{"query": "original", "action": "verdict"}.get(k, k): v for k, v in EVENT.items()}
    del fields["parameters"], fields["event"]
    fields["user"], fields["event"] = None, "query"
    stamped = structlog.processors.TimeStamper(fmt="iso", utc=True)(None, "info", fields)
    stamped["timestamp"] = "2023-11-14T22:13:20.250000Z"
    rendered = structlog.processors.JSONRenderer(ensure_ascii=False, default=str)
    assert line == rendered(None, "info", stamped)


def test_on_a_loop_lines_wait_for_the_flush(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"

    async def run() -> list[str]:
        audit = AuditLog(str(path))
        audit(EVENT)
        audit({**EVENT, "query": "RETURN 1"})
        before = path.read_text("utf-8")
        audit.flush()
        audit.close()
        return [before, path.read_text("utf-8")]

    before, after = asyncio.run(run())
    assert before == ""
    lines = [json.loads(line) for line in after.splitlines()]
    assert [line["original"] for line in lines] == [EVENT["query"], "RETURN 1"]


def test_off_a_loop_each_line_is_written_at_once(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(str(path))
    audit(EVENT)
    assert json.loads(path.read_text("utf-8"))["verdict"] == "rewrite"
    audit.close()
    audit(EVENT)  # after close: dropped, no error
    assert len(path.read_text("utf-8").splitlines()) == 1
