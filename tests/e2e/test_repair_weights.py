"""Experience weights break ties in the repair loop (DESIGN §10), with real components: the
real SQLite experience store learning from verified runs, the real guard and repairer, and
FalkorDB (the movie graph, or a small social graph where two repairs both answer). Only the
order of the admissible candidates changes: no weights keep today's order, and a query that
returned rows is never repaired."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import redis

from query_guard.backend import collect
from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.experience.library import Experience, open_store
from query_guard.repair.model import EMPTY, ROWS, RepairOutcome
from query_guard.repair.repairer import build_repairer
from query_guard.run.request import Outcome, QueryRequest
from query_guard.run.seen import Seen
from query_guard.runner import ProxyThread
from query_guard.schema.catalog import SchemaCatalog
from tests.e2e.test_http_front import call

# people follow accounts and accounts (bots) follow people: FOLLOWS is declared both ways, so
# reversing it is admissible (and speculative), as is case-insensitive equality on the name
SOCIAL = SchemaCatalog.from_triples("(Person, FOLLOWS, Account), (Account, FOLLOWS, Person)")
SOCIAL_GRAPH = (
    "CREATE (:Person {name: 'ann'})<-[:FOLLOWS]-(:Account {handle: 'newsbot'}), "
    "(:Person {name: 'Ann'})-[:FOLLOWS]->(:Account {handle: 'cooking'}), "
    "(:Person {name: 'Bob'})-[:FOLLOWS]->(:Account {handle: 'chess'})"
)
ANN = "MATCH (p:Person {name: 'ann'})-[:FOLLOWS]->(a:Account) RETURN a.handle"
PEOPLE_FOLLOW = "MATCH (p:Person {name: $name})-[:FOLLOWS]->(a:Account) RETURN a.handle"
BOTS_FOLLOW = "MATCH (a:Account {handle: $handle})-[:FOLLOWS]->(p:Person) RETURN p.name"


def learnt(tmp_path: Path, schema: SchemaCatalog | None, runs: list[str]) -> Experience:
    """A library on the real SQLite store that learnt `runs` as verified runs."""
    guard = build_guard(parse_config({}), schema, entry_points=False)
    table = parse_config({}).experience
    library = Experience(open_store(table, str(tmp_path)), clock=lambda: 0.0,
                         catalog=lambda language: schema)  # fmt: skip
    for i, query in enumerate(runs):
        verdict = guard.check(query)
        req = QueryRequest(query, "http", "cypher", question=f"question {i}", id=f"r{i}")
        library(Seen(req, Outcome(verdict, ran=verdict.to_run), 2, ["x"]))
    return library


def repair(
    url: str,
    schema: SchemaCatalog | None,
    text: str,
    library: Experience | None,
    question: str | None,
) -> tuple[RepairOutcome, list[list[Any]]]:
    config = parse_config({})
    guard = build_guard(config, schema, entry_points=False)
    repairer = build_repairer(guard, config, library.weigher if library is not None else None)
    assert repairer is not None

    async def go() -> tuple[RepairOutcome, list[list[Any]]]:
        backend = FalkorDBBackend(url, read_only=True)
        try:
            verdict = guard.check(text)
            out = await repairer.run(verdict.query, execute=backend.run, check=guard.check,
                                     question=question)  # fmt: skip
            return out, await collect(out.stream) if out.stream is not None else []
        finally:
            await backend.close()

    return asyncio.run(go())


def social(falkordb_server: Any, fresh_graph: tuple[str, str]) -> str:
    name, url = fresh_graph
    with redis.Redis(host=falkordb_server.host, port=falkordb_server.port) as client:
        client.execute_command("GRAPH.QUERY", name, SOCIAL_GRAPH)
    return url


def sources(out: RepairOutcome) -> list[tuple[str, str]]:
    return [(a.source, a.outcome) for a in out.attempts]


def test_the_heavier_pattern_is_tried_first_and_returned(
    tmp_path: Path, falkordb_server: Any, fresh_graph: tuple[str, str]
) -> None:
    url = social(falkordb_server, fresh_graph)
    # today: the reversed arrow first (tier 1) — it answers, with the bot that follows Ann
    out, rows = repair(url, SOCIAL, ANN, None, "Which accounts does Ann follow?")
    assert rows == [["newsbot"]] and sources(out) == [("client", EMPTY), ("tier1", ROWS)]
    # people following accounts is what worked before: the relaxation, which keeps that
    # arrow, is tried first now, and its answer is returned
    library = learnt(tmp_path, SOCIAL, [PEOPLE_FOLLOW, PEOPLE_FOLLOW, BOTS_FOLLOW])
    try:
        out, rows = repair(url, SOCIAL, ANN, library, "Which accounts does Ann follow?")
    finally:
        library.close()
    assert rows == [["cooking"]] and sources(out) == [("client", EMPTY), ("relaxation", ROWS)]
    assert "toLower(p.name) = toLower('ann')" in out.query


def test_weights_the_other_way_keep_the_reversed_arrow_first(
    tmp_path: Path, falkordb_server: Any, fresh_graph: tuple[str, str]
) -> None:
    url = social(falkordb_server, fresh_graph)
    library = learnt(tmp_path, SOCIAL, [BOTS_FOLLOW, BOTS_FOLLOW, PEOPLE_FOLLOW])
    try:
        out, rows = repair(url, SOCIAL, ANN, library, "Which accounts does Ann follow?")
    finally:
        library.close()
    assert rows == [["newsbot"]] and sources(out) == [("client", EMPTY), ("tier1", ROWS)]


def test_an_empty_library_keeps_todays_order(
    tmp_path: Path, falkordb_server: Any, fresh_graph: tuple[str, str]
) -> None:
    url = social(falkordb_server, fresh_graph)
    library = learnt(tmp_path, SOCIAL, [])
    try:
        out, rows = repair(url, SOCIAL, ANN, library, "Which accounts does Ann follow?")
    finally:
        library.close()
    assert rows == [["newsbot"]] and sources(out) == [("client", EMPTY), ("tier1", ROWS)]


def test_weights_never_make_a_speculative_candidate_applied_without_opt_in(
    tmp_path: Path, falkordb_server: Any, fresh_graph: tuple[str, str]
) -> None:
    url = social(falkordb_server, fresh_graph)
    library = learnt(tmp_path, SOCIAL, [PEOPLE_FOLLOW, PEOPLE_FOLLOW])
    try:
        out, rows = repair(url, SOCIAL, ANN, library, None)
    finally:
        library.close()
    assert rows == [] and out.query.startswith(ANN[:20])  # the client's own (empty) answer
    (offer,) = [f for f in out.findings if f.code == "REPAIR.SUGGESTED"]
    assert "toLower" in offer.message  # the heavier candidate is the one offered


def test_a_correct_answer_is_never_touched(
    tmp_path: Path, falkordb_server: Any, fresh_graph: tuple[str, str]
) -> None:
    url = social(falkordb_server, fresh_graph)
    library = learnt(tmp_path, SOCIAL, [BOTS_FOLLOW, BOTS_FOLLOW])  # the other direction
    text = "MATCH (p:Person {name: 'Bob'})-[:FOLLOWS]->(a:Account) RETURN a.handle"
    try:
        out, rows = repair(url, SOCIAL, text, library, "Which accounts does Bob follow?")
    finally:
        library.close()
    assert rows == [["chess"]] and sources(out) == [("client", ROWS)]


def test_on_the_movie_graph_the_learnt_arrow_is_flipped_first(
    tmp_path: Path, movies_url: str
) -> None:
    # no schema catalog: the guard cannot set the arrows, the loop does. One arrow of two is
    # wrong: today the loop reverses both first, then each alone in order; with weights the
    # candidate that keeps the arrow verified runs used (and reverses the other) runs first
    text = (
        "MATCH (a:Person {name: 'Keanu Reeves'})-[:ACTED_IN]->(m:Movie)-[:DIRECTED]->(d:Person) "
        "RETURN DISTINCT d.name AS director"
    )
    question = "Who directed Keanu Reeves' films?"
    before, rows_before = repair(movies_url, None, text, None, question)
    library = learnt(tmp_path, None, [
        "MATCH (p:Person {name: $n})-[:ACTED_IN]->(m:Movie) RETURN m.title",
        "MATCH (p:Person {name: $n})-[:DIRECTED]->(m:Movie) RETURN m.title",
    ])  # fmt: skip
    try:
        after, rows_after = repair(movies_url, None, text, library, question)
    finally:
        library.close()
    assert sorted(rows_after) == sorted(rows_before)
    assert {"Lana Wachowski", "Lilly Wachowski"} <= {r[0] for r in rows_after}
    assert after.query == before.query and "(m:Movie)<-[:DIRECTED]-(d:Person)" in after.query
    assert sources(before) == [("client", EMPTY), ("tier1", EMPTY), ("tier1", EMPTY),
                               ("tier1", ROWS)]  # fmt: skip
    assert sources(after) == [("client", EMPTY), ("tier1", ROWS)]


def test_through_serve_the_library_orders_the_repair(
    tmp_path: Path, falkordb_server: Any, fresh_graph: tuple[str, str]
) -> None:
    # the whole path: `serve` on the social graph (schema discovered from it), verified runs
    # over HTTP deposit their weights, and the next empty query is repaired heaviest first;
    # with `[experience] enabled = false` the loop keeps today's order
    url = social(falkordb_server, fresh_graph)
    verified = "MATCH (p:Person {name: 'Bob'})-[:FOLLOWS]->(a:Account) RETURN a.handle"
    answers = {}
    for enabled in (True, False):
        data = tmp_path / str(enabled)
        config = parse_config({
            "server": {"http": "127.0.0.1:0", "data_dir": str(data)},
            "backend": {"cypher": url}, "experience": {"enabled": enabled},
            "audit": {"path": str(data / "audit.jsonl")},
        })  # fmt: skip
        with ProxyThread(config) as running:
            base = f"http://127.0.0.1:{running.server.http.port}"
            for _ in range(2):
                status, answer = call(base, "POST", "/v1/query",
                                      {"query": verified, "question": "Whom does Bob follow?"})
                assert status == 200 and answer["rows"] == [["chess"]], answer
            status, answer = call(base, "POST", "/v1/query",
                                  {"query": ANN, "question": "Which accounts does Ann follow?"})
            assert status == 200, answer
            answers[enabled] = answer["rows"]
    assert answers == {True: [["cooking"]], False: [["newsbot"]]}
