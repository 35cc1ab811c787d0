"""The experience library without a server: which runs are verified (each condition of
DESIGN §10), templates per language with typed slots, the SQLite store (BM25 times weight,
one per template, decay with an injected clock, eviction, store_literals = false, a restart),
and feedback — real verdicts from the real guard, a real SQLite file."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from query_guard.backend import BackendError
from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.experience.library import Experience, UnknownQueryId, open_store
from query_guard.experience.store import Decay, NewExample, SqliteStore
from query_guard.experience.templates import cypher_template, gremlin_template, sql_template
from query_guard.experience.verify import unverified
from query_guard.model import Finding, Severity
from query_guard.run.request import Outcome, QueryRequest
from query_guard.run.seen import Seen
from query_guard.schema.catalog import SchemaCatalog

HOUR = 3600.0
SCHEMA = SchemaCatalog.from_triples("(Person, ACTED_IN, Movie), (Person, DIRECTED, Movie)")
GUARD = build_guard(parse_config({}), SCHEMA)
QUESTION = "Which movies did Tom Hanks act in?"
QUERY = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title"


def seen(query: str = QUERY, question: str | None = QUESTION, rows: int = 3,
         first: list[Any] | None = None, **outcome: Any) -> Seen:  # fmt: skip
    verdict = outcome.pop("verdict", None) or GUARD.check(query)
    req = QueryRequest(query, "http", "cypher", question=question, id="q1")
    return Seen(req, Outcome(verdict, ran=verdict.to_run, **outcome), rows,
                first if first is not None else ["Cast Away"])  # fmt: skip


# ---------------------------------------------------------------- verified runs


def test_a_run_with_question_rows_and_no_warning_is_verified() -> None:
    assert unverified(seen()) is None


def test_a_guard_fix_is_no_warning_left_but_an_unfixed_warning_is() -> None:
    reversed_arrow = "MATCH (m:Movie)-[:ACTED_IN]->(p:Person {name: 'Tom Hanks'}) RETURN m.title"
    fixed = GUARD.check(reversed_arrow)
    assert "DIR.REVERSED" in fixed.codes
    assert unverified(seen(reversed_arrow)) is None
    unknown = "MATCH (p:Robot) RETURN p"
    assert unverified(seen(unknown)) == "warning left: SCH.UNKNOWN_LABEL"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"question": None}, "no question"),
        ({"question": "  "}, "no question"),
        ({"query": "MATCH (n) DETACH DELETE n"}, "blocked"),
        ({"error": BackendError("boom")}, "backend error"),
        ({"rows": 0}, "empty result"),
        ({"rows": 1, "first": [0]}, "empty result"),  # count(m) = 0
        ({"rows": 1, "first": [None, []]}, "empty result"),
    ],
)
def test_each_condition_keeps_a_run_out(change: dict[str, Any], reason: str) -> None:
    assert unverified(seen(**change)) == reason


def test_a_suggested_speculative_repair_is_a_warning_left() -> None:
    verdict = GUARD.check(QUERY)
    offer = Finding("REPAIR.SUGGESTED", Severity.WARNING, "flip?", (0, 0), rule="repair")
    suggested = dataclasses.replace(verdict, findings=(*verdict.findings, offer))
    assert unverified(seen(verdict=suggested)) == "warning left: REPAIR.SUGGESTED"
    applied = Finding("ENT.LITERAL", Severity.WARNING, "grounded", (0, 0), rule="repair.grounding")
    grounded = dataclasses.replace(verdict, findings=(*verdict.findings, applied))
    assert unverified(seen(verdict=grounded)) is None  # applied with the question's opt-in


# ---------------------------------------------------------------- templates


def test_cypher_templates_have_typed_slots_in_order() -> None:
    t = cypher_template("MATCH (m:Movie) WHERE m.title = 'Heat' AND m.released > 1990.5 "
                        "RETURN m LIMIT 10")  # fmt: skip
    assert t.text == "MATCH (m:Movie) WHERE m.title = $s1 AND m.released > $n1 RETURN m LIMIT $n2"
    assert t.literals == {"$s1": "Heat", "$n1": 1990.5, "$n2": 10}
    assert ("label", "Movie") in t.elements and ("property", "released") in t.elements
    both = cypher_template("MATCH (m:Movie)<-[:ACTED_IN]-(p:Person) RETURN p")
    assert ("pattern", "(Person)-[:ACTED_IN]->(Movie)") in both.elements


def test_sql_and_gremlin_templates() -> None:
    sql = sql_template("SELECT name FROM customers WHERE city = 'Berlin' AND age > 30 LIMIT 5")
    assert sql.text == "SELECT name FROM customers WHERE city = $s1 AND age > $n1 LIMIT $n2"
    assert {("label", "customers"), ("property", "city")} <= sql.elements
    g = gremlin_template("g.V().hasLabel('person').has('name', 'marko').out('knows')"
                         ".has('age', P.gt(30)).values('name')")  # fmt: skip
    assert g.text == ("g.V().hasLabel('person').has('name', $s1).out('knows')"
                      ".has('age', P.gt($n1)).values('name')")  # fmt: skip
    assert {("label", "person"), ("pattern", "knows"), ("property", "age")} <= g.elements


# ---------------------------------------------------------------- the store


def example(question: str, query: str, database: str = "") -> NewExample:
    t = cypher_template(query)
    return NewExample(database, "cypher", question, query, t.text, "fp", [], 3,
                      sorted(t.elements))  # fmt: skip


def store(tmp_path: Path, half_life: float = 0.0) -> SqliteStore:
    return SqliteStore(tmp_path / "x.sqlite3", Decay(half_life=half_life))


def test_ranking_is_bm25_times_weight_one_per_template(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.deposit(example(QUESTION, QUERY), "a", 0, 0)
    same = "MATCH (p:Person {name: 'Tom Cruise'})-[:ACTED_IN]->(m:Movie) RETURN m.title"
    s.deposit(example("Which movies did Tom Cruise act in?", same), "b", 0, 0)
    directed = "MATCH (p:Person {name: 'Tom Hanks'})-[:DIRECTED]->(m:Movie) RETURN m.title"
    s.deposit(example("Which movies did Tom Hanks direct?", directed), "c", 0, 0)
    s.deposit(example("How old is Keanu?", "MATCH (p:Person) RETURN p.born"), "d", 0, 0)
    found = s.search("", "which movies did Meg Ryan act in", 3, 0)
    assert [e["question"] for e in found][:1] == [QUESTION]  # the two "act in" share a template
    assert len({e["template"] for e in found}) == len(found)
    for _ in range(3):  # uses raise the weight: the Cruise example overtakes
        s.deposit(example("Which movies did Tom Cruise act in?", same), "b", 0, 0)
    top = s.search("", "which movies did Meg Ryan act in", 3, 0)[0]
    assert (top["question"], top["uses"], top["weight"]) == ("Which movies did Tom Cruise act in?",
                                                             4, 4.0)  # fmt: skip
    assert s.search("", "movies", 1, 0)[0]["query"] in (QUERY, same, directed)
    assert s.search("other-db", "movies", 3, 0) == []


def test_weights_decay_with_the_half_life_on_read(tmp_path: Path) -> None:
    s = store(tmp_path, half_life=10 * HOUR)
    s.deposit(example(QUESTION, QUERY), "a", 0, 0)
    assert s.search("", QUESTION, 1, 10 * HOUR)[0]["weight"] == 0.5
    s.deposit(example(QUESTION, QUERY), "b", 20 * HOUR, 0)  # 0.25 + 1
    assert s.search("", QUESTION, 1, 20 * HOUR)[0]["weight"] == 1.25


def test_recent_lists_the_examples_used_last_with_their_weight_now(tmp_path: Path) -> None:
    """What the operator console lists: the examples served or learnt last, decayed."""
    s = store(tmp_path, half_life=10 * HOUR)
    s.deposit(example(QUESTION, QUERY), "a", 0, 0)
    s.deposit(example("How old is Keanu?", "MATCH (p:Person) RETURN p.born"), "b", HOUR, 0)
    recent = s.recent(5, 10 * HOUR)
    assert [e["question"] for e in recent] == ["How old is Keanu?", QUESTION]
    assert recent[1]["weight"] == 0.5 and recent[1]["language"] == "cypher"
    assert len(s.recent(1, 10 * HOUR)) == 1


def test_eviction_keeps_the_heaviest_per_database(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.deposit(example("movies of Tom", QUERY), "a", 0, 2)
    s.deposit(example("movies of Tom", QUERY), "a2", 0, 2)  # weight 2
    s.deposit(example("born", "MATCH (p:Person) RETURN p.born"), "b", 0, 2)
    s.deposit(example("names", "MATCH (p:Person) RETURN p.name"), "c", 0, 2)
    kept = {e["question"] for e in s.examples()}
    assert "movies of Tom" in kept and len(kept) == 2


def test_a_restart_keeps_examples_and_run_ids(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.deposit(example(QUESTION, QUERY), "run-1", 0, 0)
    s.close()
    again = store(tmp_path)
    assert again.search("", "Tom Hanks movies", 1, 0)[0]["question"] == QUESTION
    assert again.feedback("run-1", True, 0) == {"example": 1, "weight": 2.0}
    assert again.feedback("nope", True, 0) is None


def test_three_wrong_reports_take_an_example_off_rank_one(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.deposit(example(QUESTION, QUERY), "good", 0, 0)
    s.deposit(example(QUESTION, QUERY), "good", 0, 0)
    other = "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) WHERE p.name = 'Tom Hanks' RETURN m"
    s.deposit(example("Tom Hanks movies?", other), "other", 0, 0)
    assert s.search("", QUESTION, 2, 0)[0]["query"] == QUERY
    for _ in range(3):
        s.feedback("good", False, 0)
    assert [e["query"] for e in s.search("", QUESTION, 2, 0)] == [other]


def run_async(coro: Any) -> Any:
    return asyncio.run(coro)


def test_the_library_learns_masks_literals_and_takes_feedback(tmp_path: Path) -> None:
    table = parse_config({"experience": {"store_literals": False}}).experience
    library = Experience(open_store(table, str(tmp_path)), store_literals=False,
                         clock=lambda: 0.0)  # fmt: skip
    try:
        library(seen())
        library(seen(question=None, **{}))  # no question: remembered for feedback only
        found = run_async(library.examples("movies of Tom Hanks", 3))
        assert found[0]["question"] == "Which movies did $s1 act in?"
        assert found[0]["query"] == found[0]["template"]
        assert "Tom Hanks" not in found[0]["query"]
        done = run_async(library.feedback("q1", "correct"))
        assert done["example"] == found[0]["id"] and done["weight"] == 2.0
        with pytest.raises(UnknownQueryId):
            run_async(library.feedback("never-given", "wrong"))
    finally:
        library.close()
    assert (tmp_path / "experience.sqlite3").exists()
