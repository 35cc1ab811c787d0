"""One repair loop for three languages: the same scripted `guard_repair` plugin drives the loop
through the runner on Cypher (the movie graph in a real FalkorDB), Gremlin (TinkerPop's modern
graph in the embedded graphersal) and SQL (the embedded SQLite Northwind), and the loop stops,
refuses, suggests and applies alike in all three (DESIGN §6): no change, ping-pong, the same
diagnosis twice, the budget, a blocked rewrite never runs, a plugin's rewrite is speculative.

Each language's queries are alike: `empty` returns nothing and gives the deterministic tiers
nothing to try (no arrow, no string literal), so the plugin is asked; `near` are three more
empty queries, `answer` returns `rows`, `write` is refused by the guard."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.backends.sql_sqlite import SqliteBackend
from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.guard.hookspecs import hookimpl
from query_guard.repair.model import RepairCandidate, RepairRequest, RepairSettings
from query_guard.repair.repairer import build_repairer
from query_guard.run.gremlin_service import GremlinService
from query_guard.run.runner import Runner
from query_guard.run.service import QueryResult, QueryService
from query_guard.run.sql_service import SqlService
from query_guard.schema.context import GuardContext
from tests.corpora import DATA
from tests.e2e.test_repair_falkordb import MOVIES
from tests.e2e.test_sql_backends import northwind

__all__ = ["northwind"]  # the fixture, shared with test_sql_backends


@dataclass(frozen=True)
class Queries:
    empty: str
    near: tuple[str, str, str]
    answer: str
    rows: list[list[Any]]
    write: str


def _cypher(year: int) -> str:
    return f"MATCH (m:Movie) WHERE m.released = {year} RETURN m.title AS title"


def _gremlin(age: int) -> str:
    return f"g.V().has('person', 'age', {age}).values('name')"


def _sql(where: str) -> str:
    return f"SELECT productName FROM products WHERE {where}"


QUERIES = {
    "cypher": Queries(
        _cypher(1850), (_cypher(1851), _cypher(1852), _cypher(1853)),
        "MATCH (m:Movie) WHERE m.title = 'The Matrix' RETURN m.title AS title",
        [["The Matrix"]], "MATCH (m:Movie) DETACH DELETE m",
    ),
    "gremlin": Queries(
        _gremlin(100), (_gremlin(101), _gremlin(102), _gremlin(103)), _gremlin(29),
        [["marko"]], "g.V().has('person', 'age', 29).drop()",
    ),
    "sql": Queries(
        _sql("unitPrice = 1000.5"),
        (_sql("unitPrice = 1001.5"), _sql("unitPrice = 1002.5"), _sql("unitPrice = 1003.5")),
        _sql("productID = 1"), [["Chai"]], "DELETE FROM products",
    ),
}  # fmt: skip


class Proposer:
    """A `guard_repair` plugin proposing scripted candidates, one per call."""

    name = "scripted_repair"

    def __init__(self, *candidates: RepairCandidate) -> None:
        self.candidates = list(candidates)
        self.requests: list[RepairRequest] = []

    @hookimpl
    def guard_repair(self, request: RepairRequest, ctx: GuardContext) -> RepairCandidate | None:
        self.requests.append(request)
        return self.candidates.pop(0) if self.candidates else None


def ask(
    language: str,
    text: str,
    plugin: Proposer,
    where: dict[str, Any],
    question: str | None = "?",
    **repair: Any,
) -> QueryResult:
    async def go() -> QueryResult:
        extra = (plugin,)
        if language == "gremlin":
            config = parse_config({
                "server": {"bolt": "", "data_dir": str(where["tmp"])},
                "backend": {"gremlin_data": [str(DATA / "tinkerpop-modern.json")]},
                "repair": repair,
            })  # fmt: skip
            graph = await GremlinService.create(config, extra_plugins=extra)
            service = QueryService(graph.guard, None, runner=Runner({"gremlin": graph.route()}))
            try:
                return await service.run(text, front="test", language=language, question=question)
            finally:
                service.close()
                await graph.close()
        config = parse_config({"repair": repair})
        if language == "sql":
            guard = build_guard(config, extra_plugins=extra, entry_points=False)
            settings = RepairSettings.from_config(config.repair)
            sql = SqlService(guard, SqliteBackend(where["northwind"]), settings)
            service = QueryService(guard, None, sql=sql)
            try:
                return await service.run(text, front="test", language=language, question=question)
            finally:
                service.close()
                await sql.close()
        guard = build_guard(config, MOVIES, extra_plugins=extra, entry_points=False)
        backend = FalkorDBBackend(where["movies"], read_only=True)
        service = QueryService(guard, backend, repairer=build_repairer(guard, config))
        try:
            return await service.run(text, front="test", language=language, question=question)
        finally:
            service.close()
            await backend.close()

    return asyncio.run(go())


@pytest.fixture(params=sorted(QUERIES))
def language(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def where(request: pytest.FixtureRequest, language: str, tmp_path: Path) -> dict[str, Any]:
    """Where each language's database is (only the one the test needs is started)."""
    if language == "cypher":
        return {"movies": request.getfixturevalue("movies_url")}
    if language == "sql":
        return {"northwind": request.getfixturevalue("northwind")}
    return {"tmp": tmp_path}


def outcomes(result: QueryResult) -> list[tuple[str, str]]:
    return [(a["source"], a["outcome"]) for a in result.attempts]


def test_the_queries_are_what_the_scenarios_need(language: str, where: dict[str, Any]) -> None:
    q = QUERIES[language]
    for text in (q.empty, *q.near):
        result = ask(language, text, Proposer(), where)
        assert result.error is None and result.rows == [] and result.attempts == [], text
    assert ask(language, q.answer, Proposer(), where).rows == q.rows


def test_a_plugin_rewrite_that_answers_is_applied_on_opt_in(
    language: str, where: dict[str, Any]
) -> None:
    q = QUERIES[language]
    plugin = Proposer(RepairCandidate(q.answer, "FIL.WRONG_VALUE"))
    result = ask(language, q.empty, plugin, where)
    assert result.rows == q.rows
    assert outcomes(result) == [("client", "empty"), ("scripted_repair", "rows")]
    assert [r.language for r in plugin.requests] == [language]
    assert plugin.requests[0].error is None  # an empty result, not an error
    assert result.verdict.codes.count("REPAIR.ATTEMPT") == 2


def test_without_opt_in_a_plugin_rewrite_is_only_suggested(
    language: str, where: dict[str, Any]
) -> None:
    q = QUERIES[language]
    plugin = Proposer(RepairCandidate(q.answer, "FIL.WRONG_VALUE"))
    result = ask(language, q.empty, plugin, where, question=None)
    assert result.rows == []
    [offer] = [f for f in result.verdict.findings if f.code == "REPAIR.SUGGESTED"]
    assert offer.message.startswith("FIL.WRONG_VALUE:") and "would return 1 " in offer.message
    assert "question" in offer.message  # how to opt in
    assert outcomes(result) == [("client", "empty"), ("scripted_repair", "rows")]


def test_a_rewrite_to_the_same_query_never_runs_again(
    language: str, where: dict[str, Any]
) -> None:
    q = QUERIES[language]
    plugin = Proposer(RepairCandidate(q.empty, "A.ONE"), RepairCandidate(q.answer, "A.TWO"))
    result = ask(language, q.empty, plugin, where)
    assert result.rows == [] and len(plugin.requests) == 1
    assert result.attempts == []  # only the client's query ran


def test_ping_pong_stops_on_the_current_query(language: str, where: dict[str, Any]) -> None:
    q = QUERIES[language]
    plugin = Proposer(
        RepairCandidate(q.near[0], "A.ONE"), RepairCandidate(q.empty, "A.TWO"),
        RepairCandidate(q.answer, "A.THREE"),
    )  # fmt: skip
    result = ask(language, q.empty, plugin, where)
    assert result.rows == [] and len(plugin.requests) == 2
    assert outcomes(result) == [("client", "empty"), ("scripted_repair", "empty")]
    mark = {"cypher": "1851", "gremlin": "101", "sql": "1001.5"}[language]
    assert mark in result.attempts[1]["query"] and mark in result.query  # what ran last


def test_the_same_diagnosis_twice_stops_after_the_second_rewrite(
    language: str, where: dict[str, Any]
) -> None:
    q = QUERIES[language]
    plugin = Proposer(*(RepairCandidate(t, "ENT.LITERAL") for t in (*q.near[:2], q.answer)))
    result = ask(language, q.empty, plugin, where, budget=5)
    assert result.rows == [] and len(plugin.requests) == 2
    assert [o for _, o in outcomes(result)] == ["empty", "empty", "empty"]


def test_the_budget_bounds_the_plugin_rounds(language: str, where: dict[str, Any]) -> None:
    q = QUERIES[language]
    plugin = Proposer(*(RepairCandidate(t, f"C.N{i}") for i, t in enumerate((*q.near, q.answer))))
    result = ask(language, q.empty, plugin, where, budget=2)
    assert result.rows == [] and len(plugin.requests) == 2
    assert [o for _, o in outcomes(result)] == ["empty", "empty", "empty"]


def test_a_blocked_rewrite_never_runs_and_the_plugin_hears_why(
    language: str, where: dict[str, Any]
) -> None:
    q = QUERIES[language]
    plugin = Proposer(RepairCandidate(q.write, "PAT.X"), RepairCandidate(q.answer, "FIL.Y"))
    result = ask(language, q.empty, plugin, where)
    assert result.rows == q.rows
    assert [o for _, o in outcomes(result)] == ["empty", "blocked", "rows"]
    assert "blocked" in (plugin.requests[1].error or "")
    assert ask(language, q.answer, Proposer(), where).rows == q.rows  # nothing was deleted
