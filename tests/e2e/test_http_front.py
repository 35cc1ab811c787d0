"""The HTTP front as an HTTP client sees it, against `query-guard serve` with `[server] http`
on the embedded FalkorDB (movie graph): Neo4j's Query API v2 and tx/commit, the guard API,
health, the OpenAPI document."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread

MATRIX_CAST = {"Keanu Reeves", "Carrie-Anne Moss", "Laurence Fishburne", "Hugo Weaving",
               "Emil Eifrem"}  # fmt: skip


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("http-front")
    config = parse_config(
        {
            "server": {"bolt": "", "http": "127.0.0.1:0", "data_dir": str(data)},
            "audit": {"path": str(data / "audit.jsonl")},
        }
    )
    with ProxyThread(config) as proxy:
        yield f"http://127.0.0.1:{proxy.server.http.port}"


def call(base: str, method: str, path: str, body: Any = None, raw: bytes | None = None
         ) -> tuple[int, Any]:  # fmt: skip
    async def go() -> tuple[int, Any]:
        async with aiohttp.ClientSession() as session:
            kwargs: dict[str, Any] = {"json": body}
            if raw is not None:
                kwargs = {"data": raw, "headers": {"Content-Type": "application/json"}}
            async with session.request(method, base + path, **kwargs) as resp:
                text = await resp.text()
                try:
                    return resp.status, json.loads(text)
                except ValueError:
                    return resp.status, text

    return asyncio.run(go())


def test_query_api_v2_runs_the_guarded_query(base: str) -> None:
    status, body = call(base, "POST", "/db/neo4j/query/v2", {
        "statement": "MATCH (m:Movie {title: $t})-[:ACTED_IN]->(p:Person) RETURN p.name AS name",
        "parameters": {"t": "The Matrix"},
    })  # fmt: skip
    assert status == 202
    assert body["data"]["fields"] == ["name"]
    assert {row[0] for row in body["data"]["values"]} == MATRIX_CAST
    codes = [f["code"] for f in body["queryGuard"]["findings"]]
    assert "DIR.REVERSED" in codes  # the arrow was reversed before it ran


def test_blocked_queries_answer_with_neo4j_codes_and_the_findings(base: str) -> None:
    delete = {"statement": "MATCH (n) DETACH DELETE n"}
    status, body = call(base, "POST", "/db/neo4j/query/v2", delete)
    assert status == 400
    assert body["errors"][0]["code"] == "Neo.ClientError.Security.Forbidden"
    assert "SEC.WRITE" in body["errors"][0]["message"]
    assert "LIM.INJECTED" not in body["errors"][0]["message"]
    assert body["queryGuard"]["action"] == "block" and body["queryGuard"]["forward"] is None
    status, body = call(base, "POST", "/db/neo4j/query/v2", {"statement": "MATCH (n RETURN n"})
    assert body["errors"][0]["code"] == "Neo.ClientError.Statement.SyntaxError"


def test_only_the_configured_graph_is_reachable(base: str) -> None:
    status, body = call(base, "POST", "/db/other/query/v2", {"statement": "RETURN 1 AS x"})
    assert status == 404
    assert body["errors"][0]["code"] == "Neo.ClientError.Database.DatabaseNotFound"


def test_legacy_tx_commit(base: str) -> None:
    status, body = call(base, "POST", "/db/neo4j/tx/commit", {"statements": [
        {"statement": "MATCH (p:Person {name: $n}) RETURN p.born AS born",
         "parameters": {"n": "Keanu Reeves"}},
        {"statement": "RETURN 1 AS one"},
    ]})  # fmt: skip
    assert status == 200 and body["errors"] == []
    assert body["results"][0]["columns"] == ["born"]
    assert body["results"][0]["data"][0]["row"] == [1964]
    assert body["results"][1]["data"][0]["row"] == [1]
    status, body = call(base, "POST", "/db/neo4j/tx/commit", {"statements": [
        {"statement": "CREATE (:Person {name: 'mallory'})"}, {"statement": "RETURN 1"},
    ]})  # fmt: skip
    assert body["results"] == [] and body["errors"][0]["code"].endswith("Forbidden")


def test_check_without_executing(base: str) -> None:
    status, body = call(base, "POST", "/v1/check", {
        "query": "```cypher\nMATCH (m:Movie)-[:ACTED_IN]->(p:Person) RETURN p.name\n```"})
    assert status == 200 and body["action"] == "rewrite"
    assert "<-[:ACTED_IN]-" in body["forward"] and "```" not in body["forward"]
    status, body = call(base, "POST", "/v1/check", {
        "query": "g.V().hasLabel('x').drop()", "language": "gremlin"})
    assert body["action"] == "block"
    status, _ = call(base, "POST", "/v1/check", {"query": "x", "language": "sparql"})
    assert status == 400


def test_query_returns_rows_and_findings(base: str) -> None:
    status, body = call(base, "POST", "/v1/query", {
        "query": "MATCH (p:Person)-[:DIRECTED]->(m:Movie {title: $t}) RETURN p.name AS d",
        "parameters": {"t": "The Matrix"}})  # fmt: skip
    assert status == 200 and body["fields"] == ["d"]
    assert sorted(r[0] for r in body["rows"]) == ["Lana Wachowski", "Lilly Wachowski"]
    status, body = call(base, "POST", "/v1/query", {"query": "MATCH (m:Movie) RETURN m LIMIT 1"})
    node = body["rows"][0][0]
    assert node["labels"] == ["Movie"] and "title" in node["properties"]


def test_schema_and_grounding_context(base: str) -> None:
    status, body = call(base, "GET", "/v1/schema")
    assert status == 200
    assert {"Movie", "Person"} <= set(body["schema"]["nodes"])
    status, text = call(base, "GET", "/v1/context")
    assert "(:Person)-[:ACTED_IN" in text and "Rules:" in text


def test_health_ready_and_openapi(base: str) -> None:
    assert call(base, "GET", "/health") == (200, {"status": "ok"})
    status, body = call(base, "GET", "/ready")
    assert status == 200 and body["backend"] and body["schema"]
    status, doc = call(base, "GET", "/openapi.json")
    assert doc["openapi"].startswith("3.1")
    for path in ("/v1/check", "/v1/query", "/v1/schema", "/v1/context", "/db/{db}/query/v2"):
        assert path in doc["paths"]


def test_bad_bodies_are_refused_clearly(base: str) -> None:
    status, body = call(base, "POST", "/v1/query", raw=b"not json")
    assert status == 400 and body["errors"][0]["code"] == "Neo.ClientError.Request.Invalid"
    status, _ = call(base, "POST", "/v1/query", {"query": 42})
    assert status == 400
    status, _ = call(base, "POST", "/v1/query", raw=b"x" * (2 * 1024 * 1024))
    assert status == 413


def test_metrics_count_queries_by_front_verdict_and_code(base: str) -> None:
    call(base, "POST", "/v1/query", {"query": "MATCH (n) DETACH DELETE n"})
    call(base, "POST", "/db/neo4j/query/v2", {"statement": "MATCH (m:Movie) RETURN m.title"})
    status, text = call(base, "GET", "/metrics")
    assert status == 200
    lines = text.splitlines()

    def value(prefix: str) -> float:
        return sum(float(x.rsplit(" ", 1)[1]) for x in lines if x.startswith(prefix))

    assert value('query_guard_queries_total{front="http",language="cypher",verdict="block"}') >= 1
    assert value('query_guard_findings_total{code="SEC.WRITE",front="http"}') >= 1
    assert value('query_guard_queries_total{front="http-query-v2"') >= 1
    assert value('query_guard_backend_seconds_count{front="http-query-v2"}') >= 1
    # this scrape's own connection is open while it is answered
    assert value('query_guard_open_connections{front="http"}') >= 1
    assert 'query_guard_open_connections{front="bolt"}' not in text  # no Bolt listener here


def test_query_api_explicit_transactions(base: str) -> None:
    status, body = call(base, "POST", "/db/neo4j/query/v2/tx", {
        "statement": "MATCH (p:Person {name: $n}) RETURN p.born AS born",
        "parameters": {"n": "Tom Hanks"}})  # fmt: skip
    assert status == 202 and body["data"]["values"] == [[1956]]
    tx = body["transaction"]["id"]
    assert body["transaction"]["expires"]
    status, body = call(base, "POST", f"/db/neo4j/query/v2/tx/{tx}", {
        "statement": "MATCH (m:Movie {title: 'Cast Away'}) RETURN m.released AS r"})
    assert status == 202 and body["data"]["values"] == [[2000]]
    status, body = call(base, "POST", f"/db/neo4j/query/v2/tx/{tx}/commit", {})
    assert status == 202 and "bookmarks" in body
    status, body = call(base, "POST", f"/db/neo4j/query/v2/tx/{tx}", {"statement": "RETURN 1"})
    assert status == 404
    assert body["errors"][0]["code"] == "Neo.ClientError.Transaction.TransactionNotFound"


def test_a_blocked_statement_rolls_its_transaction_back(base: str) -> None:
    status, body = call(base, "POST", "/db/neo4j/query/v2/tx", {})
    tx = body["transaction"]["id"]
    status, body = call(base, "POST", f"/db/neo4j/query/v2/tx/{tx}", {
        "statement": "CREATE (:Person {name: 'mallory'})"})
    assert status == 400 and body["errors"][0]["code"].endswith("Forbidden")
    status, _ = call(base, "POST", f"/db/neo4j/query/v2/tx/{tx}/commit", {})
    assert status == 404
    status, body = call(base, "POST", "/db/neo4j/query/v2/tx", {})
    tx = body["transaction"]["id"]
    assert call(base, "DELETE", f"/db/neo4j/query/v2/tx/{tx}")[0] == 200


def test_mcp_over_streamable_http(base: str) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async def go() -> Any:
        async with streamablehttp_client(base + "/mcp") as (read, write, _), ClientSession(
            read, write
        ) as session:
            await session.initialize()
            names = {t.name for t in (await session.list_tools()).tools}
            result = await session.call_tool(
                "read_cypher", {"query": "MATCH (p:Person {name: 'Tom Hanks'}) RETURN p.born"}
            )
            return names, json.loads(result.content[0].text)

    names, result = asyncio.run(go())
    assert {"read_cypher", "get_context", "check_query"} <= names
    assert result["rows"] == [[1956]]


def test_explain_is_answered_without_rows_and_never_executed(base: str) -> None:
    query = "/db/neo4j/query/v2"
    status, body = call(base, "POST", query, {"statement": "EXPLAIN CREATE (:QgProbe {n: 1})"})
    assert status == 202 and body["data"]["values"] == []
    status, body = call(base, "POST", query, {"statement": "MATCH (n:QgProbe) RETURN count(n)"})
    assert body["data"]["values"] == [[0]]


def test_a_loopback_listener_answers_loopback_host_names_only(base: str) -> None:
    """DNS rebinding: a page whose name now points at 127.0.0.1 sends its own name as Host."""
    port = base.rsplit(":", 1)[1]

    async def status(host: str, path: str = "/v1/check") -> int:
        async with aiohttp.ClientSession() as session, session.post(
            base + path, json={"query": "RETURN 1"}, headers={"Host": host}
        ) as resp:
            return resp.status

    async def statuses() -> list[int]:
        hosts = (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "localhost",
                 f"rebound.example:{port}", "127.0.0.1.nip.io")  # fmt: skip
        return [await status(h) for h in hosts]

    assert asyncio.run(statuses()) == [200, 200, 200, 200, 421, 421]


def test_cors_is_off_unless_configured(base: str) -> None:
    async def preflight() -> tuple[int, str | None]:
        headers = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
        async with aiohttp.ClientSession() as session, session.options(
            base + "/v1/query", headers=headers
        ) as resp:
            return resp.status, resp.headers.get("Access-Control-Allow-Origin")

    status, allowed = asyncio.run(preflight())
    assert allowed is None and status != 204


def test_cors_for_a_configured_origin() -> None:
    from query_guard.build import build_guard
    from query_guard.frontends.http import HttpFrontend
    from query_guard.run.service import QueryService

    async def go() -> tuple[Any, ...]:
        front = HttpFrontend("127.0.0.1", 0, QueryService(build_guard(), None),
                             cors_origins=("https://app.example",))  # fmt: skip
        await front.start()
        url = f"http://127.0.0.1:{front.port}"
        try:
            async with aiohttp.ClientSession() as session:
                headers = {"Origin": "https://app.example",
                           "Access-Control-Request-Method": "POST"}  # fmt: skip
                async with session.options(url + "/v1/check", headers=headers) as pre:
                    preflight = (pre.status, pre.headers.get("Access-Control-Allow-Origin"))
                async with session.get(url + "/health", headers=headers) as get:
                    simple = get.headers.get("Access-Control-Allow-Origin")
                other = {"Origin": "https://other.example"}
                async with session.get(url + "/health", headers=other) as get:
                    refused = get.headers.get("Access-Control-Allow-Origin")
        finally:
            await front.close()
        return preflight, simple, refused

    preflight, simple, refused = asyncio.run(go())
    assert preflight == (204, "https://app.example")
    assert simple == "https://app.example" and refused is None
