"""Literal grounding: bindings extracted from the AST, and the probes on a real FalkorDB."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.cypher.query import CypherQuery
from query_guard.repair.cypher_literals import WORDS, Binding, extract_bindings, prober
from query_guard.repair.grounding import describe, ground, longest_token, rank_stored


def bindings(text: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    query = CypherQuery.parse(text)
    return [
        (b.variable, b.labels, b.prop, b.value, text[b.span[0] : b.span[1]], b.case_insensitive)
        for b in extract_bindings(query, params)
    ]


def test_bindings_from_maps_equality_case_insensitive_and_in_lists() -> None:
    text = (
        "MATCH (m:Movie {title: 'the matrix'})<-[:ACTED_IN]-(p) "
        "WHERE toLower(p.name) = 'keanu' AND p.born = 1964 AND m.tagline IN ['a', 2] RETURN p"
    )
    assert bindings(text) == [
        ("m", ("Movie",), "title", "the matrix", "'the matrix'", False),
        ("p", (), "name", "keanu", "'keanu'", True),
        ("m", ("Movie",), "tagline", "a", "'a'", False),
    ]


def test_binding_labels_come_from_the_variables_declaration_and_parameters_count() -> None:
    text = "MATCH (p:Person) WITH p AS q WHERE q.name = $n RETURN q"
    assert bindings(text, {"n": "Tom"}) == [("q", ("Person",), "name", "Tom", "$n", False)]
    assert bindings(text, {"n": 3}) == []


def test_relationship_bindings_and_the_three_binding_limit() -> None:
    text = (
        "MATCH (a {name: 'a'})-[r:REVIEWED {summary: 's'}]->(b {title: 'b', tagline: 'c'}) RETURN a"
    )
    found = bindings(text)
    assert len(found) == 3
    query = CypherQuery.parse(text)
    rel = extract_bindings(query)[1]
    assert rel.relationship and rel.labels == ("REVIEWED",) and rel.where == "REVIEWED.summary"


def test_written_patterns_are_not_bindings() -> None:
    assert bindings("MERGE (p:Person {name: 'x'}) RETURN p") == []


def literal_note(b: Binding, stored: list[tuple[str, Any]]) -> str:
    return describe(b, stored, WORDS)


def test_note_wording_and_ranking() -> None:
    b = Binding("m", ("Movie",), "title", "the matrix", (0, 0))
    stored = rank_stored(
        "the matrix",
        [("Movie", "The Matrix Revolutions"), ("Movie", "The Matrix"), ("Movie", "The Matrix")],
    )
    assert stored[0] == ("Movie", "The Matrix") and len(stored) == 2
    assert literal_note(b, stored) == (
        "'the matrix' is not stored on Movie.title; stored: 'The Matrix', "
        "'The Matrix Revolutions' — copy it exactly"
    )
    assert literal_note(b, []).endswith("no similar value — reconsider the property or label")
    anywhere = Binding("n", (), "name", "keanu", (0, 0))
    assert "stored: Person.name 'Keanu Reeves'" in literal_note(
        anywhere, [("Person", "Keanu Reeves")]
    )
    assert longest_token("the  matrix!") == "matrix"


@pytest.fixture
def backend(movies_url: str) -> Iterator[FalkorDBBackend]:
    yield FalkorDBBackend(movies_url, read_only=True)


def probe(backend: FalkorDBBackend, text: str) -> list[Any]:
    async def go() -> list[Any]:
        try:
            query = CypherQuery.parse(text)
            found = await ground(extract_bindings(query), prober(backend.run), WORDS)
            return [g.note for g in found]
        finally:
            await backend.close()

    return asyncio.run(go())


def test_the_matrix_gets_a_note_naming_the_matrix(backend: FalkorDBBackend) -> None:
    text = "MATCH (m:Movie {title: 'the matrix'})<-[:ACTED_IN]-(p:Person) RETURN p.name"
    (note,) = probe(backend, text)
    assert note.code == "ENT.LITERAL"
    assert note.message.startswith(
        "'the matrix' is not stored on Movie.title; stored: 'The Matrix'"
    )
    assert note.hint == "'The Matrix'"
    assert text[note.span[0] : note.span[1]] == "'the matrix'"


def test_probes_without_a_label_name_the_label_and_stored_values_need_no_note(
    backend: FalkorDBBackend,
) -> None:
    text = (
        "MATCH (p)-[:ACTED_IN]->(m) WHERE p.name = 'Keanu Reves' AND m.title = 'The Matrix' "
        "RETURN m"
    )
    (note,) = probe(backend, text)
    assert "any label's name; stored: Person.name 'Keanu Reeves'" in note.message


def test_a_literal_nothing_resembles(backend: FalkorDBBackend) -> None:
    (note,) = probe(backend, "MATCH (m:Movie) WHERE m.title = 'Zzyzx' RETURN m")
    assert "no similar value" in note.message


def test_a_number_written_as_a_string_is_shown_as_stored(backend: FalkorDBBackend) -> None:
    (note,) = probe(backend, "MATCH (m:Movie) WHERE m.released = '1999' RETURN m")
    assert "stored: 1999" in note.message
