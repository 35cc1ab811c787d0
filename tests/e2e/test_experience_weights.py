"""Weights at work in the context, with real components: the schema part ordered by the
weights verified runs deposited and cut to `[context] max_tokens`; examples learnt under an
earlier schema re-checked by the real guard (stale ones never served); and semantic ranking
through `[experience.embeddings]` against a real HTTP server speaking OpenAI's embeddings
API (a fake model only because no hosted one is reachable here)."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

from aiohttp import web

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.experience.embeddings import Embeddings
from query_guard.experience.library import Experience, open_store, passes
from query_guard.experience.schema_order import ordered_schema_text, tokens
from query_guard.run.request import Outcome, QueryRequest
from query_guard.run.seen import Seen
from query_guard.schema.catalog import SchemaCatalog

SCHEMA = SchemaCatalog.from_triples(
    "(Person, ACTED_IN, Movie), (Person, DIRECTED, Movie), (Person, FOLLOWS, Person)"
)
ACTED = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title"
DIRECTED = "MATCH (p:Person {name: 'Tom Hanks'})-[:DIRECTED]->(m:Movie) RETURN m.title"


def rel(example: dict[str, Any]) -> str:
    """The relationship type an example's query reads."""
    return "ACTED_IN" if "ACTED_IN" in example["query"] else "DIRECTED"


def seen(guard: Any, query: str, question: str, run_id: str) -> Seen:
    verdict = guard.check(query)
    req = QueryRequest(query, "http", "cypher", question=question, id=run_id)
    return Seen(req, Outcome(verdict, ran=verdict.to_run), 3, ["Cast Away"])


def library(tmp_path: Path, catalog: dict[str, Any], **kw: Any) -> Experience:
    table = parse_config({}).experience
    return Experience(open_store(table, str(tmp_path)), clock=lambda: 0.0,
                      catalog=lambda language: catalog["schema"],
                      recheck=lambda language, q: passes(catalog["guard"], language, q),
                      **kw)  # fmt: skip


def test_the_schema_text_puts_what_worked_first_within_the_budget() -> None:
    plain = ordered_schema_text(SCHEMA, {})
    assert plain.index("ACTED_IN") < plain.index("DIRECTED") < plain.index("FOLLOWS")
    weights = {("pattern", "(Person)-[:FOLLOWS]->(Person)"): 3.0,
               ("pattern", "(Person)-[:DIRECTED]->(Movie)"): 1.0,
               ("label", "Person"): 2.0, ("label", "Movie"): 2.0}  # fmt: skip
    ordered = ordered_schema_text(SCHEMA, weights)
    assert ordered.index("FOLLOWS") < ordered.index("DIRECTED") < ordered.index("ACTED_IN")
    budget = tokens(ordered) + 10
    while "left out" not in (cut := ordered_schema_text(SCHEMA, weights, budget)):
        budget -= 1  # the first budget too small for everything: the lightest line goes
    assert tokens(cut.rsplit("\n", 1)[0]) <= budget
    assert "FOLLOWS" in cut and "DIRECTED" in cut and "- Movie" in cut
    assert "ACTED_IN" not in cut and "(1 more schema lines left out" in cut


def test_verified_runs_raise_their_patterns_in_the_context(tmp_path: Path) -> None:
    guard = build_guard(parse_config({}), SCHEMA)
    lib = library(tmp_path, {"schema": SCHEMA, "guard": guard})
    try:
        lib(seen(guard, DIRECTED, "Which movies did Tom Hanks direct?", "r1"))
        weights = asyncio.run(lib.weights())
        assert weights[("pattern", "(Person)-[:DIRECTED]->(Movie)")] == 1.0
        text = ordered_schema_text(SCHEMA, weights)
        assert text.index("DIRECTED") < text.index("ACTED_IN")
    finally:
        lib.close()


def test_examples_from_an_earlier_schema_are_rechecked_before_they_are_served(
    tmp_path: Path,
) -> None:
    guard = build_guard(parse_config({}), SCHEMA)
    state: dict[str, Any] = {"schema": SCHEMA, "guard": guard}
    lib = library(tmp_path, state)
    try:
        lib(seen(guard, ACTED, "Which movies did Tom Hanks act in?", "r1"))
        lib(seen(guard, DIRECTED, "Which movies did Tom Hanks direct?", "r2"))
        assert len(asyncio.run(lib.examples("movies Tom Hanks", 5))) == 2
        # the graph drops ACTED_IN: that example no longer passes, the other one still does
        drifted = SchemaCatalog.from_triples("(Person, DIRECTED, Movie)")
        state.update(schema=drifted, guard=build_guard(parse_config({}), drifted))
        served = asyncio.run(lib.examples("movies Tom Hanks", 5))
        assert [rel(e) for e in served] == ["DIRECTED"]
        flagged = {rel(e): e for e in lib.store.examples()}
        assert flagged["ACTED_IN"]["stale"] and not flagged["DIRECTED"]["stale"]
        assert flagged["DIRECTED"]["fingerprint"] == lib.fingerprint("cypher")
        assert flagged["ACTED_IN"]["fingerprint"] != lib.fingerprint("cypher")
    finally:
        lib.close()


_CONCEPTS = ({"film", "films", "movie", "movies"}, {"act", "acted", "actor", "actors"},
             {"direct", "directed", "director", "directors"}, {"who", "which"})  # fmt: skip


def _vector(text: str) -> list[float]:
    words = {w.strip("?.,'").lower() for w in text.split()}
    return [float(len(words & concept)) for concept in _CONCEPTS] + [0.1]


async def _embeddings_server(asked: list[dict[str, Any]]) -> tuple[web.AppRunner, str]:
    """OpenAI's `POST /v1/embeddings`: one vector per input, by concept words."""

    async def embeddings(request: web.Request) -> web.Response:
        body = await request.json()
        asked.append(body)
        data = [{"object": "embedding", "index": i, "embedding": _vector(text)}
                for i, text in enumerate(body["input"])]  # fmt: skip
        return web.json_response({"object": "list", "data": data, "model": body["model"],
                                  "usage": {"prompt_tokens": 1, "total_tokens": 1}})  # fmt: skip

    app = web.Application()
    app.router.add_post("/v1/embeddings", embeddings)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/v1"


def test_embeddings_rank_the_example_that_means_the_same_first(tmp_path: Path) -> None:
    guard = build_guard(parse_config({}), SCHEMA)
    question = "Which films had Meg Ryan as director?"  # "director": no lexical match

    async def go() -> None:
        asked: list[dict[str, Any]] = []
        runner, url = await _embeddings_server(asked)
        table = {"base_url": url, "model": "tiny-embed", "api_key_env": "",
                 "timeout_seconds": 5.0}  # fmt: skip
        lexical = library(tmp_path / "a", {"schema": SCHEMA, "guard": guard})
        semantic = library(tmp_path / "b", {"schema": SCHEMA, "guard": guard},
                           embeddings=Embeddings.from_config(table))  # fmt: skip
        try:
            for lib in (lexical, semantic):
                lib(seen(guard, ACTED, "Which movies did Tom Hanks act in?", "r1"))
                lib(seen(guard, DIRECTED, "Which movies did Tom Hanks direct?", "r2"))
            plain = await lexical.examples(question, 2)
            blended = await semantic.examples(question, 2)
            assert rel(blended[0]) == "DIRECTED" and len(blended) == len(plain) == 2
            assert asked[0]["model"] == "tiny-embed" and len(asked[0]["input"]) == 3
            await semantic.examples(question, 2)  # the examples' vectors are stored now
            assert asked[1]["input"] == [question]
        finally:
            lexical.close()
            semantic.close()
            await runner.cleanup()

    asyncio.run(go())


def test_a_failing_embeddings_endpoint_leaves_the_lexical_ranking(tmp_path: Path) -> None:
    guard = build_guard(parse_config({}), SCHEMA)
    dead = Embeddings("http://127.0.0.1:9/v1", "tiny-embed", timeout=2.0)
    lib = library(tmp_path, {"schema": SCHEMA, "guard": guard}, embeddings=dead)
    try:
        lib(seen(guard, ACTED, "Which movies did Tom Hanks act in?", "r1"))
        found = asyncio.run(lib.examples("Which movies did Meg Ryan act in?", 2))
        assert [rel(e) for e in found] == ["ACTED_IN"]
        assert not math.isnan(found[0]["weight"])
    finally:
        lib.close()
