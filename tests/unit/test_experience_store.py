"""The experience library without a server: which runs are verified (each condition of
DESIGN §10), templates per language with typed slots, the library over a SQLite store
(store_literals = false, feedback) — real verdicts from the real guard, a real SQLite file.
The stores themselves, SQLite and PostgreSQL: tests/e2e/test_experience_stores.py."""

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
