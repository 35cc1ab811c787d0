"""The repair loop on the movie graph in a real FalkorDB, with the real guard and no LLM."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from query_guard.backend import collect
from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.repair.model import EMPTY, ROWS, RepairOutcome
from query_guard.repair.repairer import build_repairer
from query_guard.schema.catalog import SchemaCatalog

MOVIES = SchemaCatalog.from_dict(
    {
        "nodes": {"Person": ["name", "born"], "Movie": ["title", "released", "tagline"]},
        "relationships": [
            {"start": "Person", "type": t, "end": "Movie"}
            for t in ("ACTED_IN", "DIRECTED", "PRODUCED", "WROTE", "REVIEWED")
        ]
        + [{"start": "Person", "type": "FOLLOWS", "end": "Person", "reciprocity": 0.0}],
    }
)


def repair(
    url: str,
    text: str,
    schema: SchemaCatalog | None = MOVIES,
    question: str | None = None,
    **repair_cfg: Any,
) -> tuple[RepairOutcome, list[list[Any]]]:
    config = parse_config({"repair": repair_cfg})
    guard = build_guard(config, schema, entry_points=False)
    repairer = build_repairer(guard, config)
    assert repairer is not None

    async def go() -> tuple[RepairOutcome, list[list[Any]]]:
        backend = FalkorDBBackend(url, read_only=True)
        try:
            verdict = guard.check(text)
            out = await repairer.run(
                verdict.query, execute=backend.run, check=guard.check, question=question
            )
            rows = await collect(out.stream) if out.stream is not None else []
            return out, rows
        finally:
            await backend.close()

    return asyncio.run(go())


@pytest.mark.parametrize("schema", [MOVIES, None], ids=["schema", "no-schema"])
def test_tier1_fixes_a_reversed_arrow_between_unlabelled_endpoints(
    movies_url: str, schema: SchemaCatalog | None
) -> None:
    # ACTED_IN is declared one way only, Person -> Movie: with the schema the flip is safe;
    # without one it is speculative and needs the client's question
    text = "MATCH (m {title: 'The Matrix'})-[:ACTED_IN]->(p) RETURN p.name AS name"
    out, rows = repair(movies_url, text, schema, None if schema else "Who acted in it?")
    assert "(m {title: 'The Matrix'})<-[:ACTED_IN]-(p)" in out.query
    assert sorted(r[0] for r in rows) == [
        "Carrie-Anne Moss", "Emil Eifrem", "Hugo Weaving", "Keanu Reeves", "Laurence Fishburne",
    ]  # fmt: skip
    assert [(a.source, a.outcome) for a in out.attempts] == [("client", EMPTY), ("tier1", ROWS)]
    assert "DIR.FLIPPED_ON_EMPTY" in [f.code for f in out.findings]


def test_a_zero_count_triggers_the_loop(movies_url: str) -> None:
    text = "MATCH (p {name: 'Keanu Reeves'})<-[:ACTED_IN]-(m) RETURN count(m) AS movies"
    out, rows = repair(movies_url, text)
    assert rows == [[7]] and out.attempts[0].outcome == EMPTY


def test_multi_hop_with_one_wrong_arrow_is_fixed_by_a_single_flip(movies_url: str) -> None:
    text = (
        "MATCH (a {name: 'Keanu Reeves'})-[:ACTED_IN]->(m)-[:DIRECTED]->(d) "
        "RETURN DISTINCT d.name AS director"
    )
    out, rows = repair(movies_url, text, None, "Who directed Keanu's films?")
    assert {r[0] for r in rows} >= {"Lana Wachowski", "Lilly Wachowski"}
    assert "(m)<-[:DIRECTED]-(d)" in out.query and "-[:ACTED_IN]->" in out.query


def test_a_case_mistake_is_fixed_safely_with_the_one_stored_value(movies_url: str) -> None:
    text = "MATCH (p:Person {name: 'keanu reeves'})-[:ACTED_IN]->(m:Movie) RETURN m.title"
    out, rows = repair(movies_url, text)
    assert len(rows) == 7 and "{name: 'Keanu Reeves'}" in out.query
    (note,) = [f for f in out.findings if f.code == "ENT.LITERAL" and f.rule == "repair.grounding"]
    assert "used 'Keanu Reeves' (equal but for case)" in note.message
    # the case-insensitive relaxation came first: speculative, so only offered
    assert any(f.code == "REPAIR.SUGGESTED" for f in out.findings)


def test_relaxation_recovers_a_case_mistake(movies_url: str) -> None:
    text = "MATCH (p:Person {name: 'keanu reeves'})-[:ACTED_IN]->(m:Movie) RETURN m.title"
    out, rows = repair(movies_url, text, question="What did Keanu Reeves act in?")
    assert len(rows) == 7
    assert "toLower(p.name) = toLower('keanu reeves')" in out.query
    assert out.attempts[-1].source == "relaxation"
    assert "FIL.CASE_INSENSITIVE" in [f.code for f in out.findings]


def test_the_matrix_without_relaxation_gets_grounding_notes(movies_url: str) -> None:
    text = "MATCH (m:Movie {title: 'the matrix'})<-[:ACTED_IN]-(p:Person) RETURN p.name"
    out, rows = repair(movies_url, text, relaxation=False)
    assert len(rows) == 5 and "{title: 'The Matrix'}" in out.query
    notes = [f.message for f in out.findings if f.code == "ENT.LITERAL"]
    assert notes and "stored: 'The Matrix'" in notes[0]


def test_a_substring_literal_is_grounded_only_on_opt_in(movies_url: str) -> None:
    text = "MATCH (m:Movie {title: 'Matrix Reloaded'})<-[:ACTED_IN]-(p:Person) RETURN p.name"
    out, rows = repair(movies_url, text, relaxation=False)
    assert rows == [] and out.query.startswith(text)
    (offer,) = [f for f in out.findings if f.code == "REPAIR.SUGGESTED"]
    assert "'The Matrix Reloaded'" in (offer.hint or "") and "ENT.LITERAL" in offer.message
    out, rows = repair(movies_url, text, question="Who acted in Matrix Reloaded?")
    assert rows and "{title: 'The Matrix Reloaded'}" in out.query
    assert any("the only stored value containing it" in f.message for f in out.findings)


def test_a_correct_but_empty_query_is_returned_as_it_was(movies_url: str) -> None:
    text = "MATCH (p:Person)-[:DIRECTED]->(m:Movie) WHERE m.released = 1850 RETURN m.title"
    out, rows = repair(movies_url, text)
    assert rows == [] and out.query == out.attempts[0].query and not out.repaired
    assert out.query.startswith(text)
    # the flip is re-guarded, the schema turns it back into the client query: never re-run
    assert [a.source for a in out.attempts] == ["client"]


def test_repair_can_be_switched_off(movies_url: str) -> None:
    config = parse_config({"repair": {"enabled": False}})
    assert build_repairer(build_guard(config, MOVIES, entry_points=False), config) is None
    text = "MATCH (m {title: 'The Matrix'})-[:ACTED_IN]->(p) RETURN p.name"
    out, rows = repair(movies_url, text, tier1=False, relaxation=False)
    assert rows == [] and len(out.attempts) == 1


def test_a_flip_whose_rows_are_all_null_is_not_an_answer(movies_url: str) -> None:
    # flipping ACTED_IN alone also matches (p:Movie)<-…-(m:Person): rows of nulls, rejected
    text = "MATCH (p)-[:ACTED_IN]->(m)-[:DIRECTED]->(p) RETURN p.name AS name, m.title AS title"
    out, rows = repair(movies_url, text, None, "Who directed a film they acted in?")
    assert "(p)-[:ACTED_IN]->(m)<-[:DIRECTED]-(p)" in out.query
    assert rows and all(name is not None for name, _ in rows)


def test_a_reversed_arrow_and_a_case_mistake_at_once(movies_url: str) -> None:
    text = "MATCH (m {title: 'the matrix'})-[:ACTED_IN]->(p) RETURN p.name AS name"
    out, rows = repair(movies_url, text, question="Who acted in the matrix?")
    assert len(rows) == 5 and out.attempts[-1].source == "tier1+relaxation"
    # without the question: the safe flip and the safe literal fix, together
    out, rows = repair(movies_url, text)
    assert len(rows) == 5 and out.attempts[-1].source == "grounding"
    assert "(m {title: 'The Matrix'})<-[:ACTED_IN]-(p)" in out.query
