"""What the workers of one `serve` share (`query_guard.run.peers`): a console feed's state
survives the trip between workers unchanged, merged states show the newest queries of all
workers with their counts added up, a worker's console over real Unix sockets shows the queries
of the others — leaving out, and cleaning up after, a worker that is gone — and the workers'
metrics come out as one exposition labelled by worker."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from query_guard.console.feed import Attempt, Entry, FeedState, QueryFeed
from query_guard.console.page import Console
from query_guard.console.peers import all_seqs, all_states, decode, encode, provide
from query_guard.run.metrics import Metrics, of_workers
from query_guard.run.peers import Peers
from tests.unit.test_console_feed import Clock, record

texts = st.text(max_size=30)
maybe = st.none() | texts
attempts = st.builds(Attempt, query=texts, source=texts, code=maybe, outcome=texts,
                     rows=st.integers(0, 10**6), error=maybe,
                     ms=st.floats(0, 1e6, allow_nan=False))  # fmt: skip
entries = st.builds(
    Entry, seq=st.integers(0, 10**9), at=st.floats(0, 4e9, allow_nan=False), id=texts,
    front=texts, client=texts, user=maybe, language=texts, database=maybe, question=maybe,
    query=texts, forwarded=maybe, action=texts, codes=st.lists(texts, max_size=3).map(tuple),
    error=maybe, guard_ms=st.none() | st.integers(0, 10**6),
    backend_ms=st.none() | st.integers(0, 10**6),
    attempts=st.lists(attempts, max_size=2).map(tuple), repaired=st.booleans(),
)  # fmt: skip
states = st.builds(
    FeedState, seq=st.integers(0, 10**9),
    verdicts=st.dictionaries(texts, st.integers(0, 10**6), max_size=4),
    entries=st.lists(entries, max_size=4).map(tuple),
    minutes=st.dictionaries(st.integers(0, 10**8),
                            st.dictionaries(texts, st.integers(1, 100), max_size=3), max_size=3),
    size=st.integers(1, 120), recent=st.integers(1, 500),
)  # fmt: skip


@given(states)
def test_a_state_crosses_between_workers_unchanged(state: FeedState) -> None:
    assert decode(encode(state)) == state


def test_merged_states_keep_the_newest_entries_and_add_the_counts() -> None:
    clock = Clock()
    one, two = QueryFeed(recent=3, minutes=5, clock=clock), QueryFeed(3, 5, clock)
    for n in range(4):
        clock.now += 1
        (one if n % 2 else two)(record(f"RETURN {n}", codes=["LIM.INJECTED"]))
    clock.now += 1
    one(record("MATCH (n) DETACH DELETE n", "block", codes=["SEC.WRITE"]))
    snap = FeedState.merge([one.state(), two.state()]).snapshot(int(clock.now // 60))
    assert [e.query for e in snap.entries] == ["MATCH (n) DETACH DELETE n", "RETURN 3",
                                               "RETURN 2"]  # the ring's size, newest first
    assert snap.total == 5 and snap.seq == 5
    assert snap.verdicts == {"allow": 4, "block": 1}
    assert {c.code: c.total for c in snap.codes} == {"LIM.INJECTED": 4, "SEC.WRITE": 1}
    assert [b.query for b in snap.blocked] == ["MATCH (n) DETACH DELETE n"]


def test_each_workers_console_shows_the_queries_of_all(tmp_path: Path) -> None:
    async def go() -> None:
        feeds = [QueryFeed(), QueryFeed()]
        peers = [Peers(tmp_path, "one"), Peers(tmp_path, "two")]  # one process plays both
        for peer, feed in zip(peers, feeds, strict=True):
            provide(peer, feed)
            await peer.start()
        dead = tmp_path / "4999999.sock"  # a socket whose worker has stopped (no such pid)
        with socket.socket(socket.AF_UNIX) as left:
            left.bind(str(dead))
        feeds[0](record("RETURN 'first worker'"))
        feeds[1](record("RETURN 'second worker'"))
        feeds[1](record("RETURN 'second worker, again'"))
        for peer, feed in zip(peers, feeds, strict=True):
            seen = {e.query for e in (await all_states(peer, feed)).entries}
            assert seen == {"RETURN 'first worker'", "RETURN 'second worker'",
                            "RETURN 'second worker, again'"}  # fmt: skip
            assert await all_seqs(peer, feed) == 3  # what the page polls
        assert not dead.exists()
        assert await peers[0].ask("no such question") == [("two", b"")]
        console = Console(feeds[0])
        console.peers = peers[0]
        page = console.templates.get_template("panels.html").render(await console._view())
        assert "second worker" in page
        await peers[1].close()  # a worker stops: its socket goes, the others go on
        assert not (tmp_path / "two.sock").exists()
        assert [e.query for e in (await all_states(peers[0], feeds[0])).entries] == [
            "RETURN 'first worker'"]
        await peers[0].close()

    asyncio.run(go())


def test_the_metrics_of_workers_are_labelled_by_worker() -> None:
    one, two = Metrics(), Metrics()
    event = {"front": "bolt", "language": "cypher", "action": "allow", "codes": ["LIM.INJECTED"]}
    one(event)
    two(event)
    two({**event, "action": "block", "codes": ["SEC.WRITE"]})
    text = of_workers([("11", one.render()), ("12", two.render())]).decode()
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families(text) for s in f.samples}  # fmt: skip
    allow = (("front", "bolt"), ("language", "cypher"), ("verdict", "allow"))
    assert samples[("query_guard_queries_total", (*allow, ("worker", "11")))] == 1
    assert samples[("query_guard_queries_total", (*allow, ("worker", "12")))] == 1
    block = (("front", "bolt"), ("language", "cypher"), ("verdict", "block"), ("worker", "12"))
    assert samples[("query_guard_queries_total", block)] == 1
    assert text.count("# TYPE query_guard_queries_total counter") == 1
