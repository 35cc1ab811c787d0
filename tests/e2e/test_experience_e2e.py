"""The experience library as clients see it, through `query-guard serve` on the embedded
FalkorDB (movie graph): a question and its query over HTTP become an example, served by
`/v1/context?question=…` and MCP `get_context` for a similar question; `POST /v1/feedback`
changes its weight; the Bolt driver sees the query id in its summary; the operator lists and
exports the examples with `query-guard experience`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest

from query_guard.cli.main import main
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from tests.e2e.test_http_front import call

ACTED = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title"
QUESTION = "Which movies did Tom Hanks act in?"
Proxy = tuple[str, str, Path, int]  # HTTP base, Bolt URL, data_dir, Gremlin port


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    data = tmp_path_factory.mktemp("experience")
    config = parse_config({
        "server": {"bolt": "127.0.0.1:0", "http": "127.0.0.1:0", "gremlin": "127.0.0.1:0",
                   "data_dir": str(data)},
        "audit": {"path": str(data / "audit.jsonl")},
    })  # fmt: skip
    with ProxyThread(config) as running:
        base = f"http://127.0.0.1:{running.server.http.port}"
        yield base, f"bolt://{running.address}", data, running.server.gremlin.port


def ask(base: str, query: str, question: str | None = QUESTION) -> dict[str, Any]:
    body = {"query": query, **({"question": question} if question else {})}
    status, answer = call(base, "POST", "/v1/query", body)
    assert status == 200, answer
    return answer  # type: ignore[no-any-return]


def test_a_verified_http_run_is_served_for_a_similar_question(proxy: Proxy
                                                              ) -> None:  # fmt: skip
    base = proxy[0]
    answer = ask(base, ACTED)
    assert "Cast Away" in {row[0] for row in answer["rows"]}
    qid = answer["queryGuard"]["id"]
    status, context = call(base, "GET", "/v1/context?question=movies%20of%20Meg%20Ryan&examples=3")
    assert status == 200
    assert "ACTED_IN" in context["context"]
    best = context["examples"][0]
    assert best["question"] == QUESTION
    assert "'Tom Hanks'" in best["query"] and "$s1" in best["template"]
    assert best["uses"] == 1 and best["weight"] == pytest.approx(1.0, rel=1e-3)

    status, done = call(base, "POST", "/v1/feedback", {"id": qid, "outcome": "correct"})
    assert status == 200 and done["example"] == best["id"]
    _, again = call(base, "GET", "/v1/context?question=Tom%20Hanks%20movies&examples=3")
    assert again["examples"][0]["weight"] > best["weight"]


def test_runs_that_are_no_examples_still_take_feedback(proxy: Proxy) -> None:
    base = proxy[0]
    unasked = ask(base, "MATCH (p:Person) RETURN p.name LIMIT 2", question=None)
    status, done = call(base, "POST", "/v1/feedback",
                        {"id": unasked["queryGuard"]["id"], "outcome": "wrong"})  # fmt: skip
    assert (status, done["example"]) == (200, None)
    status, _ = call(base, "GET", "/v1/context?question=Who%20is%20a%20person")
    assert status == 200
    status, body = call(base, "POST", "/v1/feedback", {"id": "no-such-id", "outcome": "correct"})
    assert status == 404 and "no-such-id" in body["errors"][0]["message"]
    status, body = call(base, "POST", "/v1/feedback", {"id": "x", "outcome": "meh"})
    assert status == 400
    status, text = call(base, "GET", "/v1/context")  # without a question: the text as before
    assert status == 200 and isinstance(text, str) and "ACTED_IN" in text


def test_an_empty_answer_is_no_example(proxy: Proxy) -> None:
    base = proxy[0]
    nobody = "MATCH (p:Person {name: 'Nobody Atall'})-[:DIRECTED]->(m:Movie) RETURN m.title"
    ask(base, nobody, question="Which movies did Nobody Atall direct?")
    _, context = call(base, "GET", "/v1/context?question=Nobody%20Atall%20direct")
    assert all("Nobody" not in e["question"] for e in context["examples"])


def test_the_bolt_driver_sees_the_query_id(proxy: Proxy) -> None:
    base, bolt = proxy[0], proxy[1]
    with neo4j.GraphDatabase.driver(bolt, auth=None) as driver, driver.session() as session:
        query = neo4j.Query(
            "MATCH (p:Person {name: 'Keanu Reeves'})-[:ACTED_IN]->(m:Movie) RETURN m.title",
            metadata={"question": "Which films star Keanu Reeves?"},
        )
        result = session.run(query)
        titles = [r[0] for r in result]
        summary = result.consume()
    assert "The Matrix" in titles
    qid = summary.metadata["qg_id"]
    assert isinstance(qid, str) and qid
    _, context = call(base, "GET", "/v1/context?question=films%20with%20Keanu%20Reeves")
    assert context["examples"][0]["question"] == "Which films star Keanu Reeves?"
    status, _ = call(base, "POST", "/v1/feedback", {"id": qid, "outcome": "correct"})
    assert status == 200


def test_mcp_get_context_lists_examples(proxy: Proxy) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    base = proxy[0]

    async def go() -> tuple[Any, Any]:
        async with (
            streamablehttp_client(base + "/mcp") as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            read_result = await session.call_tool("read_cypher", {
                "query": ACTED, "question": "What did Tom Hanks play in?"})  # fmt: skip
            qid = json.loads(read_result.content[0].text)["id"]
            reported = await session.call_tool("report_outcome", {"id": qid, "outcome": "correct"})
            context = await session.call_tool("get_context", {"question": "Tom Hanks films"})
            return reported, context

    reported, context = asyncio.run(go())
    assert not reported.isError
    payload = json.loads(context.content[0].text)
    assert "ACTED_IN" in payload["context"]
    assert any("Tom Hanks" in e["question"] for e in payload["examples"])


def test_the_operator_lists_pins_bans_and_exports(
    proxy: Proxy, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, data = proxy[0], proxy[2]
    ask(base, ACTED)  # written before the CLI reads
    config = tmp_path / "qg.toml"
    config.write_text(f'[server]\ndata_dir = "{data}"\n')
    assert main(["experience", "--config", str(config), "list", "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    first = next(e for e in listed if e["question"] == QUESTION)
    assert first["uses"] >= 2
    assert main(["experience", "--config", str(config), "ban", str(first["id"])]) == 0
    _, context = call(base, "GET", "/v1/context?question=movies%20of%20Tom%20Hanks")
    assert all(e["id"] != first["id"] for e in context["examples"])
    out = tmp_path / "examples.jsonl"
    assert main(["experience", "--config", str(config), "export", "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == len(listed)
    assert main(["experience", "--config", str(config), "show", "999999"]) == 1
    capsys.readouterr()
    fresh = tmp_path / "fresh.toml"
    fresh.write_text(f'[server]\ndata_dir = "{tmp_path / "fresh"}"\n')
    assert main(["experience", "--config", str(fresh), "import", str(out)]) == 0
    assert main(["experience", "--config", str(fresh), "list"]) == 0
    assert QUESTION in capsys.readouterr().out


def test_metrics_count_library_hits_and_feedback(proxy: Proxy) -> None:
    base = proxy[0]
    status, text = call(base, "GET", "/metrics")
    assert status == 200
    assert "query_guard_experience_examples" in text
    assert 'query_guard_experience_feedback_total{outcome="correct"}' in text
    assert "query_guard_experience_hits_total" in text


def test_gremlin_responses_carry_the_query_id(proxy: Proxy) -> None:
    import aiohttp

    base, port = proxy[0], proxy[3]
    body = {"gremlin": "g.V(c).hasLabel('case').out('hasReason').values('text')",
            "bindings": {"c": "case-1"}, "question": "Why was case one opened?"}  # fmt: skip

    async def post() -> tuple[int, Any]:
        address = f"http://127.0.0.1:{port}/gremlin"
        async with aiohttp.ClientSession() as session, session.post(address, json=body) as resp:
            return resp.status, json.loads(await resp.text())

    status, answer = asyncio.run(post())
    assert status == 200 and answer["result"]["data"]["@value"]
    pairs = answer["status"]["attributes"]["@value"]  # a GraphSON g:Map: key, value, …
    qid = dict(zip(pairs[::2], pairs[1::2], strict=True))["qg_id"]
    _, context = call(base, "GET", "/v1/context?question=why%20was%20a%20case%20opened")
    top = context["examples"][0]
    assert top["question"] == "Why was case one opened?" and "$s1" not in top["template"]
    status, _ = call(base, "POST", "/v1/feedback", {"id": qid, "outcome": "correct"})
    assert status == 200


def test_a_blocked_gremlin_request_carries_the_query_id_too(proxy: Proxy) -> None:
    from gremlin_python.driver.client import Client
    from gremlin_python.driver.protocol import GremlinServerError

    base, port = proxy[0], proxy[3]
    client = Client(f"ws://127.0.0.1:{port}/gremlin", "g")
    try:
        with pytest.raises(GremlinServerError) as refused:
            client.submit("g.V().drop()").all().result()
    finally:
        client.close()
    qid = refused.value.status_attributes["qg_id"]
    status, done = call(base, "POST", "/v1/feedback", {"id": qid, "outcome": "wrong"})
    assert status == 200 and done == {"id": qid, "outcome": "wrong", "example": None}


def test_the_query_api_takes_the_question(proxy: Proxy) -> None:
    base = proxy[0]
    question = "Which people directed The Matrix?"
    body = {"statement": "MATCH (p:Person)-[:DIRECTED]->(m:Movie {title: 'The Matrix'}) "
                         "RETURN p.name AS name", "question": question}  # fmt: skip
    status, answer = call(base, "POST", "/db/neo4j/query/v2", body)
    assert status == 202 and answer["data"]["values"], answer
    _, context = call(base, "GET", "/v1/context?question=who%20directed%20Top%20Gun&examples=5")
    assert question in [e["question"] for e in context["examples"]]
