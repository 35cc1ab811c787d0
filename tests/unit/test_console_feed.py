"""The console's data and markup without a server: the feed keeps a bounded ring of audit
records and counts codes per minute, the diff marks what the guard changed, and the panels
escape whatever a client sent."""

from __future__ import annotations

import asyncio
from typing import Any

from query_guard.console.diff import side_by_side
from query_guard.console.feed import MAX_TEXT, QueryFeed
from query_guard.console.page import Console
from query_guard.run.record import KEYS


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def record(query: str, action: str = "allow", **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys(KEYS)
    out.update(front="bolt", client="127.0.0.1:5000", language="cypher", query=query,
               action=action, codes=[], final_query=None if action == "block" else query,
               detail={"id": "q1"})  # fmt: skip
    out.update(fields)
    return out


def test_the_ring_keeps_the_newest_queries_only() -> None:
    feed = QueryFeed(recent=3, minutes=5, clock=Clock())
    for n in range(5):
        feed(record(f"RETURN {n}"))
    snap = feed.snapshot()
    assert [e.query for e in snap.entries] == ["RETURN 4", "RETURN 3", "RETURN 2"]
    assert snap.total == 5 and snap.seq == 5 and snap.verdicts == {"allow": 5}


def test_long_texts_are_cut_and_parameters_never_kept() -> None:
    feed = QueryFeed(clock=Clock())
    feed(record("RETURN '" + "x" * (2 * MAX_TEXT) + "'", parameters={"secret": "s3cr3t"}))
    entry = feed.snapshot().entries[0]
    assert len(entry.query) < MAX_TEXT + 20 and entry.query.endswith("(cut)")
    assert "s3cr3t" not in repr(entry)


def test_codes_are_counted_per_minute_within_the_window() -> None:
    clock = Clock()
    feed = QueryFeed(minutes=3, clock=clock)
    feed(record("a", "rewrite", codes=["DIR.REVERSED", "LIM.ADDED"]))
    clock.now += 60
    feed(record("b", "rewrite", codes=["DIR.REVERSED"]))
    feed(record("c", "block", codes=["SEC.WRITE"]))
    series = {s.code: s.counts for s in feed.snapshot().codes}
    assert series == {"DIR.REVERSED": (0, 1, 1), "LIM.ADDED": (0, 1, 0), "SEC.WRITE": (0, 0, 1)}
    clock.now += 3 * 60  # every count is older than the window now
    assert feed.snapshot().codes == ()


def test_top_blocked_counts_refusals_of_the_same_text() -> None:
    feed = QueryFeed(clock=Clock())
    for _ in range(3):
        feed(record("CREATE (n)", "block", codes=["SEC.WRITE"]))
    feed(record("CALL apoc.load.json('x')", "block", codes=["SEC.PROCEDURE"]))
    feed(record("RETURN 1"))
    top = feed.snapshot().blocked
    assert [(b.query, b.count, b.codes) for b in top] == [
        ("CREATE (n)", 3, ("SEC.WRITE",)), ("CALL apoc.load.json('x')", 1, ("SEC.PROCEDURE",))]
    entry = feed.snapshot().entries[1]  # a refusal forwarded nothing
    assert entry.action == "block" and entry.forwarded is None and not entry.changed


def test_repair_attempts_are_kept_with_the_one_that_answered() -> None:
    feed = QueryFeed(clock=Clock())
    attempts = [
        {"query": "MATCH (a)-[:R]->(b) RETURN b", "source": "client", "code": None,
         "outcome": "EMPTY", "rows": 0, "error": None, "ms": 1.5},
        {"query": "MATCH (a)<-[:R]-(b) RETURN b", "source": "tier1", "code": "DIR.FLIPPED_ON_EMPTY",
         "outcome": "ROWS", "rows": 2, "error": None, "ms": 2.0},
    ]  # fmt: skip
    feed(record(attempts[0]["query"], "rewrite", final_query=attempts[1]["query"],
                repair=attempts, guard_ms=3, backend_ms=7))  # fmt: skip
    entry = feed.snapshot().entries[0]
    assert entry.repaired and entry.changed and [a.source for a in entry.attempts] == [
        "client", "tier1"]
    assert (entry.guard_ms, entry.backend_ms) == (3, 7)


def test_the_diff_marks_only_what_changed() -> None:
    client, forwarded = side_by_side("MATCH (m)-[:ACTED_IN]->(p) RETURN p",
                                     "MATCH (m)<-[:ACTED_IN]-(p)\nRETURN p LIMIT 1000")  # fmt: skip
    assert [s.text for s in client if s.kind == "del"] == ["-", "->"]
    assert [s.text for s in forwarded if s.kind == "ins"] == ["<-", "-", "LIMIT 1000"]
    assert "".join(s.text for s in forwarded) == "MATCH (m)<-[:ACTED_IN]-(p)\nRETURN p LIMIT 1000"
    same, _ = side_by_side("RETURN  1", "RETURN 1")  # blanks are no difference
    assert {s.kind for s in same} == {"same"}


def render_panels(feed: QueryFeed) -> str:
    async def go() -> str:
        view = await Console(feed)._view()
        return Console(feed).templates.get_template("panels.html").render(view)

    return asyncio.run(go())


def test_the_panels_escape_what_clients_sent() -> None:
    feed = QueryFeed(clock=Clock())
    hostile = "RETURN '</pre><script>alert(1)</script><img src=x onerror=alert(2)>' AS x"
    feed(record(hostile, "block", codes=["SEC.WRITE"], user="<b>mallory</b>",
                question="<iframe src=//evil>"))  # fmt: skip
    feed(record("MATCH (m)-[:R]->(p) RETURN '<svg onload=alert(3)>'", "rewrite",
                final_query="MATCH (m)<-[:R]-(p) RETURN '<svg onload=alert(3)>'"))  # fmt: skip
    html = render_panels(feed)
    for raw in ("<script>", "<img", "<iframe", "<b>mallory", "<svg onload"):
        assert raw not in html, raw
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;mallory&lt;/b&gt;" in html
    assert "<ins>&lt;-</ins>" in html  # the rewrite's diff, escaped inside the markup
