"""The experience stores, each test run over the embedded SQLite store and over a real
PostgreSQL 15 (`[experience] store = "postgresql://…"`, started here): ranking (full-text
relevance times weight, one per template), decay on read with an injected clock, deposits and
"correct" / "wrong" feedback on examples and schema elements, three "wrong" reports taking an
example off rank 1, eviction by weight, flags (pin, ban, stale), export/import, and a library
that survives a restart; two proxies sharing one PostgreSQL library."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from query_guard.config.load import parse_config
from query_guard.experience.library import open_store
from query_guard.experience.sqlite_store import SqliteStore
from query_guard.experience.store import Decay, ExperienceStore, NewExample, rank
from query_guard.experience.templates import cypher_template
from tests.postgres_server import postgres_server

HOUR = 3600.0
QUESTION = "Which movies did Tom Hanks act in?"
QUERY = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title"
CRUISE = "MATCH (p:Person {name: 'Tom Cruise'})-[:ACTED_IN]->(m:Movie) RETURN m.title"
DIRECTED = "MATCH (p:Person {name: 'Tom Hanks'})-[:DIRECTED]->(m:Movie) RETURN m.title"
Opener = Callable[..., ExperienceStore]
_numbers = itertools.count()


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with postgres_server() as server:
        yield server.url


async def _create_database(url: str, name: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f"CREATE DATABASE {name}")
    finally:
        await conn.close()


@pytest.fixture(params=["sqlite", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    """Opens the store of this test (again, after a close), with a given half-life."""
    if request.param == "sqlite":
        target = str(tmp_path / "x.sqlite3")
    else:
        admin = request.getfixturevalue("postgres_url")
        name = f"experience_{next(_numbers)}"
        asyncio.run(_create_database(admin, name))
        target = admin.rsplit("/", 1)[0] + "/" + name
    opened: list[ExperienceStore] = []

    def open_(half_life_hours: float = 0.0) -> ExperienceStore:
        table = {"store": target, "half_life_hours": half_life_hours}
        store = open_store({**parse_config({}).experience, **table}, str(tmp_path))
        opened.append(store)
        return store

    yield open_  # type: ignore[misc]
    for store in opened:
        store.close()


def example(question: str, query: str, database: str = "") -> NewExample:
    t = cypher_template(query)
    return NewExample(database, "cypher", question, query, t.text, "fp", [], 3,
                      sorted(t.elements))  # fmt: skip


def search(s: ExperienceStore, database: str, question: str, k: int, now: float
           ) -> list[dict[str, Any]]:  # fmt: skip
    """What the library serves, without the embeddings and the drift check."""
    return rank(s.candidates(database, question, now), k, s.decay, now)


def test_ranking_is_relevance_times_weight_one_per_template(opener: Opener) -> None:
    s = opener()
    s.deposit(example(QUESTION, QUERY), "a", 0, 0)
    s.deposit(example("Which movies did Tom Cruise act in?", CRUISE), "b", 0, 0)
    s.deposit(example("Which movies did Tom Hanks direct?", DIRECTED), "c", 0, 0)
    s.deposit(example("How old is Keanu?", "MATCH (p:Person) RETURN p.born"), "d", 0, 0)
    found = search(s, "", "which movies did Meg Ryan act in", 3, 0)
    assert [e["question"] for e in found][:1] == [QUESTION]  # the two "act in" share a template
    assert len({e["template"] for e in found}) == len(found)
    for _ in range(3):  # uses raise the weight: the Cruise example overtakes
        s.deposit(example("Which movies did Tom Cruise act in?", CRUISE), "b", 0, 0)
    top = search(s, "", "which movies did Meg Ryan act in", 3, 0)[0]
    assert (top["question"], top["uses"], top["weight"]) == ("Which movies did Tom Cruise act in?",
                                                             4, 4.0)  # fmt: skip
    assert search(s, "", "movies", 1, 0)[0]["query"] in (QUERY, CRUISE, DIRECTED)
    assert search(s, "other-db", "movies", 3, 0) == []


def test_weights_decay_with_the_half_life_on_read(opener: Opener) -> None:
    s = opener(half_life_hours=10)
    s.deposit(example(QUESTION, QUERY), "a", 0, 0)
    assert search(s, "", QUESTION, 1, 10 * HOUR)[0]["weight"] == 0.5
    s.deposit(example(QUESTION, QUERY), "b", 20 * HOUR, 0)  # 0.25 + 1
    assert search(s, "", QUESTION, 1, 20 * HOUR)[0]["weight"] == 1.25
    # the schema elements its query used decay the same way: two deposits, the first halved
    # twice (1/4) and the second once (1/2) by 30 hours
    weights = s.weights("", 30 * HOUR)
    assert weights[("pattern", "(Person)-[:ACTED_IN]->(Movie)")] == pytest.approx(0.625)
    assert weights[("label", "Movie")] == pytest.approx(0.625)


def test_feedback_moves_example_and_element_weights(opener: Opener) -> None:
    s = opener()
    s.deposit(example(QUESTION, QUERY), "run-1", 0, 0)
    pattern = ("pattern", "(Person)-[:ACTED_IN]->(Movie)")
    assert s.feedback("run-1", True, 0) == {"example": 1, "weight": 2.0}
    assert s.weights("", 0)[pattern] == 2.0
    assert s.feedback("run-1", False, 0) == {"example": 1, "weight": 1.0}
    assert s.feedback("run-1", False, 0) == {"example": 1, "weight": 0.0}
    assert s.feedback("run-1", False, 0) == {"example": 1, "weight": 0.0}  # never below 0
    assert s.weights("", 0)[pattern] == 0.0
    assert s.feedback("never-given", True, 0) is None


def test_three_wrong_reports_take_an_example_off_rank_one(opener: Opener) -> None:
    s = opener()
    s.deposit(example(QUESTION, QUERY), "good", 0, 0)
    s.deposit(example(QUESTION, QUERY), "good", 0, 0)
    other = "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) WHERE p.name = 'Tom Hanks' RETURN m"
    s.deposit(example("Tom Hanks movies?", other), "other", 0, 0)
    assert search(s, "", QUESTION, 2, 0)[0]["query"] == QUERY
    for _ in range(3):
        s.feedback("good", False, 0)
    assert [e["query"] for e in search(s, "", QUESTION, 2, 0)] == [other]


def test_eviction_keeps_the_heaviest_per_database(opener: Opener) -> None:
    s = opener()
    s.deposit(example("movies of Tom", QUERY), "a", 0, 2)
    s.deposit(example("movies of Tom", QUERY), "a2", 0, 2)  # weight 2
    s.deposit(example("born", "MATCH (p:Person) RETURN p.born"), "b", 0, 2)
    s.deposit(example("names", "MATCH (p:Person) RETURN p.name"), "c", 0, 2)
    kept = {e["question"] for e in s.examples()}
    assert "movies of Tom" in kept and len(kept) == 2


def test_flags_ban_pin_stale_and_forget(opener: Opener) -> None:
    s = opener()
    first = s.deposit(example(QUESTION, QUERY), "a", 0, 0)
    second = s.deposit(example("Tom Hanks directed which movies?", DIRECTED), "b", 0, 0)
    assert first is not None and second is not None
    assert s.mark(second, "pinned")
    assert [e["id"] for e in search(s, "", QUESTION, 2, 0)] == [second, first]
    assert s.mark(first, "stale")  # schema drift: never served until a verified run again
    assert [e["id"] for e in search(s, "", QUESTION, 2, 0)] == [second]
    assert s.deposit(example(QUESTION, QUERY), "a", 0, 0) == first
    assert s.example(first)["stale"] is False  # type: ignore[index]
    assert s.mark(first, "banned") and s.deposit(example(QUESTION, QUERY), "c", 0, 0) is None
    assert [e["id"] for e in search(s, "", QUESTION, 2, 0)] == [second]
    assert s.forget(second) and not s.forget(second) and not s.mark(999, "pinned")
    assert s.count() == 1


def test_export_and_import_round_trip(opener: Opener) -> None:
    s = opener()
    s.deposit(example(QUESTION, QUERY), "a", 0, 0)
    exported = list(s.examples())
    s.forget(exported[0]["id"])
    assert s.count() == 0
    s.load(exported[0])
    back = list(s.examples())
    assert [(e["question"], e["query"], e["weight"]) for e in back] == [(QUESTION, QUERY, 1.0)]


def test_a_restart_keeps_examples_weights_and_run_ids(opener: Opener) -> None:
    s = opener()
    s.deposit(example(QUESTION, QUERY), "run-1", 0, 0)
    s.close()
    again = opener()
    assert search(again, "", "Tom Hanks movies", 1, 0)[0]["question"] == QUESTION
    assert again.feedback("run-1", True, 0) == {"example": 1, "weight": 2.0}
    assert again.weights("", 0)[("label", "Person")] == 2.0


def test_two_proxies_share_one_postgres_library(postgres_url: str, tmp_path: Path) -> None:
    table = {**parse_config({}).experience, "store": postgres_url}
    one, two = open_store(table, str(tmp_path)), open_store(table, str(tmp_path))
    try:
        assert not isinstance(one, SqliteStore)
        one.deposit(example("Who acted in The Matrix?", CRUISE, "shared"), "p1-run", 0, 0)
        found = search(two, "shared", "who acted in Top Gun", 1, 0)
        assert found and found[0]["question"] == "Who acted in The Matrix?"
        assert two.feedback("p1-run", True, 0) == {"example": found[0]["id"], "weight": 2.0}
    finally:
        one.close()
        two.close()


def test_a_sqlite_file_from_before_stale_and_vectors_opens(tmp_path: Path) -> None:
    import sqlite3

    old = sqlite3.connect(tmp_path / "old.sqlite3")
    old.execute("CREATE TABLE examples (id INTEGER PRIMARY KEY, database TEXT NOT NULL, "
                "language TEXT NOT NULL, question TEXT NOT NULL, query TEXT NOT NULL, "
                "template TEXT NOT NULL, fingerprint TEXT NOT NULL, codes TEXT NOT NULL, "
                "rows INTEGER NOT NULL, weight REAL NOT NULL, stamp REAL NOT NULL, "
                "uses INTEGER NOT NULL, created REAL NOT NULL, last_used REAL NOT NULL, "
                "names TEXT NOT NULL, pinned INTEGER NOT NULL DEFAULT 0, "
                "banned INTEGER NOT NULL DEFAULT 0, wrong INTEGER NOT NULL DEFAULT 0, "
                "UNIQUE (database, language, template, question))")  # fmt: skip
    old.close()
    s = SqliteStore(tmp_path / "old.sqlite3", Decay())
    s.deposit(example(QUESTION, QUERY), "a", 0, 0)
    assert search(s, "", QUESTION, 1, 0)[0]["question"] == QUESTION
    s.close()


def test_a_postgres_store_without_its_extra_is_a_config_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import sys

    from query_guard.errors import ConfigError

    monkeypatch.setitem(sys.modules, "asyncpg", None)  # as if the extra were not installed
    monkeypatch.delitem(sys.modules, "query_guard.experience.postgres_store", raising=False)
    table = {**parse_config({}).experience, "store": "postgresql://localhost/db"}
    with pytest.raises(ConfigError, match=r"experience\.store.*query-guard\[postgres\]"):
        open_store(table, str(tmp_path))
