"""The repair loop's pure decisions and its control flow on a scripted in-memory database:
emptiness, tier-1 / relaxation candidates, stopping rules, re-guarding, peeked streams."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from query_guard.backend import BackendError, BackendUnavailable, ResultSummary, collect
from query_guard.backends.falkordb import FalkorDBResult
from query_guard.cypher.query import CypherQuery
from query_guard.guard.hookspecs import hookimpl
from query_guard.guard.registry import build_plugin_manager
from query_guard.model import Action, Finding, Severity, Verdict
from query_guard.repair.candidates import aggregate_columns, flip_candidates, relax_case
from query_guard.repair.cypher import is_read_query
from query_guard.repair.loop import stop_reason
from query_guard.repair.model import (
    BLOCKED,
    EMPTY,
    ERROR,
    ROWS,
    PeekedStream,
    RepairCandidate,
    RepairRequest,
    RepairSettings,
    is_empty,
)
from query_guard.repair.repairer import Repairer
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.context import GuardContext

SCHEMA = SchemaCatalog.from_triples("(Person, ACTED_IN, Movie), (Person, DIRECTED, Movie)")


def q(text: str) -> CypherQuery:
    return CypherQuery.parse(text)


# ---------------------------------------------------------------- emptiness


@pytest.mark.parametrize(
    ("rows", "query", "empty"),
    [
        ([], "MATCH (n) RETURN n", True),
        ([[1]], "MATCH (n) RETURN n.x", False),
        ([[0]], "MATCH (n) RETURN count(n)", True),
        ([[0.0, [], None]], "MATCH (n) RETURN sum(n.x), collect(n), avg(n.x)", True),
        ([[3]], "MATCH (n) RETURN count(n)", False),
        ([["x", 0]], "MATCH (n) RETURN n.name, count(n)", True),  # every aggregate blank
        ([[0], [0]], "MATCH (n) RETURN count(n)", False),
        ([[False]], "MATCH (n) RETURN count(n) > 0", False),
        ([[0]], "MATCH (n) RETURN n.born", False),  # 0 as a value, not an aggregate
        ([[0]], "MATCH (n) RETURN * ", False),
    ],
)
def test_empty_means_no_rows_or_one_row_of_blank_aggregates(
    rows: list[list[Any]], query: str, empty: bool
) -> None:
    assert is_empty(rows, False, aggregate_columns(q(query))) is empty


def test_aggregate_columns_of_a_union_are_the_common_ones() -> None:
    text = "MATCH (n) RETURN count(n) AS c, 1 AS k UNION MATCH (m) RETURN count(m) AS c, 2 AS k"
    assert aggregate_columns(q(text)) == {0}


# ---------------------------------------------------------------- tier 1


def test_the_first_flip_reverses_every_arrow_and_edits_only_the_arrows() -> None:
    text = "MATCH (a)-[r:X]->(b)<-[:Y]-(c), (c)-[:Z]-(d) // keep\nRETURN a"
    assert flip_candidates(q(text), None, max_single=0)[0].text == (
        "MATCH (a)<-[r:X]-(b)-[:Y]->(c), (c)-[:Z]-(d) // keep\nRETURN a"
    )
    assert flip_candidates(q("MATCH (a)-[:X]-(b) RETURN a"), None, max_single=3) == []


def test_flip_candidates_add_single_flips_of_unpinned_arrows() -> None:
    text = "MATCH (p:Person)-[:ACTED_IN]->(m:Movie)<-[:DIRECTED]-(d)-[:FOLLOWS]->(x) RETURN p"
    out = flip_candidates(q(text), SCHEMA, max_single=3)
    # the ACTED_IN arrow is pinned by the schema, so no candidate flips it
    assert all("(p:Person)-[:ACTED_IN]->" in c.text for c in out)
    assert [c.text.count("-[:DIRECTED]->") + c.text.count("<-[:FOLLOWS]-") for c in out] == [
        2, 1, 1,
    ]  # fmt: skip  # both unpinned arrows, then each alone
    assert not any(c.safe for c in out)  # DIRECTED reversed would not fit the schema
    assert [c.text for c in flip_candidates(q("MATCH (a)-[:X]->(b) RETURN a"), None, 3)] == [
        "MATCH (a)<-[:X]-(b) RETURN a"
    ]


@pytest.mark.parametrize(
    ("text", "safe"),
    [
        ("MATCH (m:Movie)-[:ACTED_IN]->(p:Person) RETURN p", True),  # declared one way only
        ("MATCH (m {title: 'x'})-[:ACTED_IN]->(p) RETURN p", True),
        ("MATCH (m:Movie)-[:ACTED_IN]->(p) RETURN p", True),
        ("MATCH (a:Person)-[:FOLLOWS]->(b:Person) RETURN b", False),  # same label
        ("MATCH (a)-[:KNOWS]->(b) RETURN b", False),  # declared both ways
        ("MATCH (m:Movie)-->(p:Person) RETURN p", False),  # untyped: FOLLOWS could be meant
    ],
)
def test_a_flip_is_safe_only_when_the_schema_pins_the_other_direction(
    text: str, safe: bool
) -> None:
    schema = SchemaCatalog.from_triples(
        "(Person, ACTED_IN, Movie), (Person, FOLLOWS, Person), (Person, KNOWS, Movie), "
        "(Movie, KNOWS, Person)"
    )
    (flip,) = flip_candidates(q(text), schema, max_single=3)
    assert flip.safe is safe


def test_mutual_arrows_are_never_flipped_and_match_arrows_come_first() -> None:
    schema = SchemaCatalog.from_triples("(Person, FOLLOWS, Person), (Person, ACTED_IN, Movie)")
    mutual = "MATCH (a:Person)-[:FOLLOWS]->(b:Person)-[:FOLLOWS]->(a) RETURN a, b"
    assert flip_candidates(q(mutual), schema, 3) == []
    apart = "MATCH (a)-[:FOLLOWS]->(b), (b)-[:FOLLOWS]->(a) RETURN a"
    assert flip_candidates(q(apart), schema, 3) == []
    nested = (
        "MATCH (p)-[:FOLLOWS]->(q) WHERE size([(p)<-[:FOLLOWS]-(x) | x]) > 1 "
        "RETURN q"
    )
    texts = [c.text for c in flip_candidates(q(nested), schema, 3)]
    assert texts[0].startswith("MATCH (p)<-[:FOLLOWS]-(q) WHERE size([(p)<-[:FOLLOWS]-(x)")
    assert texts[-1].startswith("MATCH (p)-[:FOLLOWS]->(q) WHERE size([(p)-[:FOLLOWS]->(x)")


# ---------------------------------------------------------------- relaxation


@pytest.mark.parametrize(
    ("text", "relaxed"),
    [
        (
            "MATCH (p:Person) WHERE p.name = 'tom hanks' RETURN p",
            "MATCH (p:Person) WHERE toLower(p.name) = toLower('tom hanks') RETURN p",
        ),
        (
            "MATCH (p) WHERE p.born = 1956 AND p.name IN ['a', 1] RETURN p",
            "MATCH (p) WHERE p.born = 1956 AND toLower(p.name) IN [toLower('a'), 1] RETURN p",
        ),
        (
            "MATCH (:Movie {title: 'x', released: 1999})<-[:ACTED_IN]-(p) WHERE p.born > 1 OR "
            "p.name = $n RETURN p",
            "MATCH (_qg0:Movie {released: 1999})<-[:ACTED_IN]-(p) WHERE toLower(_qg0.title) = "
            "toLower('x') AND (p.born > 1 OR toLower(p.name) = toLower($n)) RETURN p",
        ),
        (
            "MATCH (m:Movie {title: 'x'}) RETURN m",
            "MATCH (m:Movie) WHERE toLower(m.title) = toLower('x') RETURN m",
        ),
        ("MATCH (p) WHERE p.born = 1956 RETURN p.name = 'x'", None),
        ("MATCH (p) WHERE p.name = $n RETURN p", None),  # $n is not a string here
    ],
)
def test_relax_case(text: str, relaxed: str | None) -> None:
    assert relax_case(q(text), {"n": "Tom"} if "OR" in text else {"n": 3}) == relaxed
    if relaxed is not None:
        CypherQuery.parse(relaxed)


# ---------------------------------------------------------------- small decisions


def test_stop_reason() -> None:
    seen = {"A", "B"}
    assert stop_reason(None, "B", seen) == "no candidate"
    assert stop_reason(RepairCandidate("  "), "B", seen) == "no candidate"
    assert stop_reason(RepairCandidate("B "), "B", seen) == "unchanged rewrite"
    assert stop_reason(RepairCandidate("A"), "B", seen) == "ping-pong"
    assert stop_reason(RepairCandidate("C"), "B", seen) is None


def test_only_reads_are_repaired() -> None:
    assert is_read_query("MATCH (n) RETURN n")
    assert is_read_query("MATCH (n) WHERE EXISTS { (n)--() } RETURN count(*)")
    for text in (
        "CREATE (n)",
        "MATCH (n) SET n.x = 1",
        "MATCH (n) CALL { WITH n DELETE n }",
        "CALL db.labels()",
        "MATCH (n",
    ):
        assert not is_read_query(text)


def test_peeked_stream_hands_back_every_record() -> None:
    async def go() -> None:
        inner = FalkorDBResult(["i"], [[i] for i in range(5)], ResultSummary())
        stream = PeekedStream(inner, await inner.fetch(2))
        assert stream.has_more()
        assert await stream.fetch(1) == [[0]]
        assert await stream.fetch(3) == [[1], [2], [3]]
        assert await stream.fetch(-1) == [[4]]
        assert not stream.has_more()

    asyncio.run(go())


def test_falkordb_rows_peeked_and_rewound_are_decoded_once() -> None:
    """The runner's peek (`plainly_has_rows`) decodes the first rows; after `rewind` the
    client's fetch gets those rows without decoding them again, and the rest once."""
    decoded: list[Any] = []

    async def decode(batch: list[list[Any]]) -> list[list[Any]]:
        decoded.extend(row[0] for row in batch)
        return [[f"v{row[0]}"] for row in batch]

    async def go() -> None:
        rows = [[i] for i in range(5)]
        result = FalkorDBResult(["i"], rows, ResultSummary(), decode)
        assert await result.fetch(2) == [["v0"], ["v1"]]
        assert result.rewind()
        assert await result.fetch(1) == [["v0"]]
        assert result.rewind()
        assert await result.fetch(10) == [[f"v{i}"] for i in range(5)]
        assert decoded == [0, 1, 2, 3, 4]

    asyncio.run(go())


# ---------------------------------------------------------------- the loop on a scripted database


class Script:
    """A database that answers by query text; unknown queries return nothing."""

    def __init__(self, answers: dict[str, list[list[Any]] | BackendError]) -> None:
        self.answers = answers
        self.ran: list[str] = []

    async def execute(self, text: str, params: dict[str, Any]) -> FalkorDBResult:
        self.ran.append(text)
        answer = self.answers.get(text, [])
        if isinstance(answer, BackendError):
            raise answer
        return FalkorDBResult(["x"], answer, ResultSummary())


def allow(text: str) -> Verdict:
    if "DELETE" in text:
        bad = Finding("SEC.WRITE", Severity.ERROR, "DELETE is not allowed", (0, 6))
        return Verdict(Action.BLOCK, text, (bad,), text)
    return Verdict(Action.ALLOW, text, (), text)


class Proposer:
    """A `guard_repair` plugin proposing scripted candidates, one per call."""

    def __init__(self, *candidates: RepairCandidate | None) -> None:
        self.candidates = list(candidates)
        self.requests: list[RepairRequest] = []

    @hookimpl
    def guard_repair(self, request: RepairRequest, ctx: GuardContext) -> Any:
        self.requests.append(request)
        nxt = self.candidates.pop(0) if self.candidates else None

        async def later() -> RepairCandidate | None:  # plugins may answer asynchronously
            return nxt

        return later()


def repairer(plugin: object | None = None, **settings: Any) -> Repairer:
    pm = build_plugin_manager(entry_points=False, extra=[plugin] if plugin else [])
    return Repairer(RepairSettings(**settings), pm, GuardContext(schema=SCHEMA))


def run(
    r: Repairer,
    db: Script,
    text: str,
    check: Callable[[str], Verdict] = allow,
    question: str | None = None,
) -> Any:
    return asyncio.run(r.run(text, execute=db.execute, check=check, question=question))


def test_rows_at_once_take_one_attempt_and_stream_everything() -> None:
    db = Script({"MATCH (n) RETURN n": [[1], [2], [3]]})
    out = run(repairer(), db, "MATCH (n) RETURN n")
    assert [a.outcome for a in out.attempts] == [ROWS] and out.findings == []
    assert asyncio.run(collect(out.stream)) == [[1], [2], [3]]


def test_a_speculative_flip_is_only_suggested_without_opt_in() -> None:
    text, flipped = "MATCH (a)-[:X]->(b) RETURN a", "MATCH (a)<-[:X]-(b) RETURN a"
    out = run(repairer(), Script({flipped: [[1], [2], [3]]}), text)
    assert out.query == text and not out.repaired and out.stop == "suggested"
    (offer,) = [f for f in out.findings if f.code == "REPAIR.SUGGESTED"]
    assert offer.hint == flipped and "DIR.FLIPPED_ON_EMPTY" in offer.message
    assert "3 row(s)" in offer.message and "question" in offer.message
    assert asyncio.run(collect(out.stream)) == []  # the client's own (empty) answer


@pytest.mark.parametrize("opt_in", ["question", "config"])
def test_tier1_keeps_the_flip_only_when_rows_appear(opt_in: str) -> None:
    flipped = "MATCH (a)<-[:X]-(b) RETURN a"
    db = Script({flipped: [[1]]})
    r = repairer(speculative="apply") if opt_in == "config" else repairer()
    question = "who?" if opt_in == "question" else None
    out = run(r, db, "MATCH (a)-[:X]->(b) RETURN a", question=question)
    assert out.query == flipped and out.repaired
    assert [(a.source, a.outcome) for a in out.attempts] == [("client", EMPTY), ("tier1", ROWS)]
    assert "DIR.FLIPPED_ON_EMPTY" in [f.code for f in out.findings]
    assert sum(f.code == "REPAIR.ATTEMPT" for f in out.findings) == 2


def test_a_plugin_candidate_is_guarded_and_a_blocked_one_never_runs() -> None:
    plugin = Proposer(
        RepairCandidate("MATCH (n) DETACH DELETE n", "PAT.X"),
        RepairCandidate("MATCH (n:Good) RETURN n", "FIL.Y"),
    )
    db = Script({"MATCH (n:Good) RETURN n": [[7]]})
    out = run(repairer(plugin, speculative="apply"), db, "MATCH (n:Bad) RETURN n")
    assert [a.outcome for a in out.attempts] == [EMPTY, BLOCKED, ROWS]
    assert "MATCH (n) DETACH DELETE n" not in db.ran
    assert out.query == "MATCH (n:Good) RETURN n"
    assert "blocked" in (plugin.requests[1].error or "")


def test_ping_pong_stops_and_returns_the_current_query() -> None:
    plugin = Proposer(
        RepairCandidate("MATCH (b) RETURN b", "A.ONE"),
        RepairCandidate("MATCH (a) RETURN a", "A.TWO"),
    )
    db = Script({})
    out = run(repairer(plugin, speculative="apply"), db, "MATCH (a) RETURN a")
    assert out.stop == "ping-pong" and out.query == "MATCH (b) RETURN b"
    assert db.ran.count("MATCH (a) RETURN a") == 1


def test_same_code_twice_stops_after_running_the_second_candidate() -> None:
    plugin = Proposer(
        RepairCandidate("MATCH (b) RETURN b", "ENT.LITERAL"),
        RepairCandidate("MATCH (c) RETURN c", "ENT.LITERAL"),
        RepairCandidate("MATCH (d) RETURN d", "ENT.LITERAL"),
    )
    out = run(repairer(plugin, budget=5), Script({}), "MATCH (a) RETURN a", question="?")
    assert out.stop == "same diagnosis twice" and out.query == "MATCH (c) RETURN c"
    assert len(plugin.requests) == 2


def test_budget_bounds_the_plugin_rounds_and_errors_are_repaired() -> None:
    plugin = Proposer(*(RepairCandidate(f"MATCH (n{i}) RETURN 1", f"C.{i}") for i in range(9)))
    db = Script({"MATCH (n) RETURN oops(n)": BackendError("Unknown function 'oops'")})
    out = run(repairer(plugin, budget=2), db, "MATCH (n) RETURN oops(n)", question="?")
    assert out.attempts[0].outcome == ERROR and len(plugin.requests) == 2
    assert plugin.requests[0].error == "Unknown function 'oops'"
    assert out.stop == "budget exhausted" and out.error is None


def test_an_unavailable_database_is_not_retried_and_disabled_means_one_attempt() -> None:
    db = Script({"MATCH (a)-[:X]->(b) RETURN a": BackendUnavailable("down")})
    out = run(repairer(), db, "MATCH (a)-[:X]->(b) RETURN a")
    assert len(out.attempts) == 1 and isinstance(out.error, BackendUnavailable)
    out = run(repairer(enabled=False), Script({}), "MATCH (a)-[:X]->(b) RETURN a")
    assert len(out.attempts) == 1 and out.error is None


def test_writes_are_never_retried() -> None:
    db = Script({})
    out = run(
        repairer(Proposer(RepairCandidate("MATCH (n) RETURN n"))),
        db,
        "MATCH (a)-[:X]->(b) SET a.x = 1",
    )
    assert out.stop == "not a read query" and db.ran == ["MATCH (a)-[:X]->(b) SET a.x = 1"]


def test_a_plugin_rewrite_is_offered_not_applied_without_opt_in() -> None:
    plugin = Proposer(RepairCandidate("MATCH (n:Good) RETURN n", "FIL.Y"))
    db = Script({"MATCH (n:Good) RETURN n": [[7]]})
    out = run(repairer(plugin), db, "MATCH (n:Bad) RETURN n")
    assert out.query == "MATCH (n:Bad) RETURN n" and out.stop == "suggested"
    assert any(f.code == "REPAIR.SUGGESTED" and "FIL.Y" in f.message for f in out.findings)


@pytest.mark.parametrize(
    "text", ["RETURN 1 AS one", "EXPLAIN MATCH (a)-[:X]->(b) RETURN a", "UNWIND [] AS x RETURN x"]
)
def test_explain_and_queries_without_a_match_are_never_repaired(text: str) -> None:
    db = Script({})
    out = run(repairer(Proposer(RepairCandidate("MATCH (n) RETURN n"))), db, text, question="?")
    assert len(out.attempts) == 1 and db.ran == [text]


def test_a_candidate_that_is_not_a_plain_read_never_runs() -> None:
    plugin = Proposer(RepairCandidate("EXPLAIN CREATE (n)", "PAT.X"))
    db = Script({})
    out = run(repairer(plugin, budget=1), db, "MATCH (n:Bad) RETURN n", question="?")
    assert [a.outcome for a in out.attempts] == [EMPTY, BLOCKED]
    assert db.ran == ["MATCH (n:Bad) RETURN n"]
