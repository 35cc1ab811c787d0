"""What a web page can do to the HTTP front of a proxy on its visitor's machine (issue 19), and
what malformed bodies do: `query-guard serve` on the embedded FalkorDB with no users, one CORS
origin and `[server] http_allowed_hosts`. A foreign `Origin` gets 403, a body not sent as JSON
415, a foreign `Host` 421 (DNS rebinding), deep or broken JSON 400 — on every path that runs
or judges a query, `/mcp` included — and the proxy keeps answering."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from query_guard.config.load import parse_config
from query_guard.frontends.http_policy import allowed_hosts
from query_guard.runner import ProxyThread

APP = "https://app.example"
READ = "MATCH (p:Person {name: 'Tom Hanks'}) RETURN p.born AS born"
MCP_PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
MCP_ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("http-browser")
    config = parse_config({
        "server": {"bolt": "", "http": "127.0.0.1:0", "data_dir": str(data),
                   "http_cors_origins": [APP],
                   "http_allowed_hosts": ["proxy.example", "127.0.0.1"]},
        "audit": {"path": str(data / "audit.jsonl")},
    })  # fmt: skip
    with ProxyThread(config) as running:
        yield f"http://127.0.0.1:{running.server.http.port}", data / "audit.jsonl"


@pytest.fixture(scope="module")
def base(proxy: tuple[str, Path]) -> str:
    return proxy[0]


def send(base: str, path: str, body: bytes | None, **headers: str) -> tuple[int, Any, Any]:
    """POST raw `body` with exactly these headers (`_` in names as `-`): status, JSON, headers."""
    sent = {k.replace("_", "-"): v for k, v in headers.items()}
    sent.setdefault("Accept", MCP_ACCEPT if path == "/mcp" else "application/json")

    async def go() -> tuple[int, Any, Any]:
        async with aiohttp.ClientSession(skip_auto_headers=["Content-Type"]) as session:
            method = "POST" if body is not None else "GET"
            async with session.request(method, base + path, data=body, headers=sent) as resp:
                text = await resp.text()
                try:
                    return resp.status, json.loads(text), resp.headers
                except ValueError:
                    return resp.status, text, resp.headers

    return asyncio.run(go())


def post(base: str, path: str, payload: Any, **headers: str) -> tuple[int, Any, Any]:
    headers.setdefault("Content_Type", "application/json")
    return send(base, path, json.dumps(payload).encode(), **headers)


# every endpoint that runs or judges a query, with a body it accepts
QUERY_ENDPOINTS = [
    ("/v1/query", {"query": READ}),
    ("/v1/check", {"query": READ}),
    ("/db/neo4j/query/v2", {"statement": READ}),
    ("/db/neo4j/query/v2/tx", {"statement": READ}),
    ("/db/neo4j/tx/commit", {"statements": [{"statement": READ}]}),
    ("/mcp", MCP_PING),
]


def error_of(path: str, body: Any) -> tuple[Any, str]:
    """(code, message) of an error body in the front's shape (JSON-RPC at /mcp)."""
    if path == "/mcp":
        return body["error"]["code"], body["error"]["message"]
    return body["errors"][0]["code"], body["errors"][0]["message"]


def test_the_endpoints_answer_json_requests_without_origin(base: str) -> None:
    for path, payload in QUERY_ENDPOINTS:
        status, _, _ = post(base, path, payload)
        assert status < 300, path
    status, _, _ = post(base, "/v1/query", {"query": READ},
                        Content_Type="application/json; charset=utf-8")  # fmt: skip
    assert status == 200


@pytest.mark.parametrize("media", ["text/plain", "application/x-www-form-urlencoded",
                                   "multipart/form-data; boundary=x", None])  # fmt: skip
def test_a_body_not_sent_as_json_is_refused_with_415(
    proxy: tuple[str, Path], media: str | None
) -> None:
    base, audit = proxy
    marker = f"RETURN '{media}' AS probe"
    for path, payload in QUERY_ENDPOINTS:
        if "query" in payload:
            payload = {**payload, "query": marker}
        headers = {} if media is None else {"Content_Type": media}
        status, body, _ = send(base, path, json.dumps(payload).encode(), **headers)
        assert status == 415, (path, status, body)
        code, message = error_of(path, body)
        assert "application/json" in message
        assert code == (-32600 if path == "/mcp" else "Neo.ClientError.Request.InvalidFormat")
    assert marker not in audit.read_text(encoding="utf-8")  # nothing was judged or run


def test_a_foreign_origin_is_refused_with_403_and_a_listed_one_served(base: str) -> None:
    for path, payload in QUERY_ENDPOINTS:
        status, body, _ = post(base, path, payload, Origin="https://evil.example")
        assert status == 403, (path, body)
        code, message = error_of(path, body)
        assert code == (-32600 if path == "/mcp" else "Neo.ClientError.Security.Forbidden")
        assert "https://evil.example" in message and "http_cors_origins" in message
    for path in ("/v1/schema", "/v1/context"):
        assert send(base, path, None, Origin="null")[0] == 403
    status, body, headers = post(base, "/v1/query", {"query": READ}, Origin=APP)
    assert status == 200 and body["rows"] == [[1956]]
    assert headers["Access-Control-Allow-Origin"] == APP
    assert send(base, "/health", None, Origin="https://evil.example")[0] == 200


def test_a_foreign_host_is_refused_with_421(base: str) -> None:
    """DNS rebinding: the page's own name reaches the proxy's address."""
    port = base.rsplit(":", 1)[1]
    for path, payload in QUERY_ENDPOINTS:
        status, body, _ = post(base, path, payload, Host=f"attacker.example:{port}")
        assert status == 421, (path, body)
        assert "attacker.example" in error_of(path, body)[1]
        assert "http_allowed_hosts" in error_of(path, body)[1]
    assert send(base, "/v1/schema", None, Host="attacker.example")[0] == 421
    assert send(base, "/health", None, Host="attacker.example")[0] == 200  # probes stay open
    status, body, _ = post(base, "/v1/query", {"query": READ}, Host=f"PROXY.example:{port}")
    assert status == 200 and body["rows"] == [[1956]]
    # the list replaces the loopback default
    assert post(base, "/v1/check", {"query": READ}, Host=f"localhost:{port}")[0] == 421


def test_the_default_host_names_follow_the_listen_address() -> None:
    assert allowed_hosts("127.0.0.1", []) == {"127.0.0.1", "localhost", "::1"}
    assert allowed_hosts("::1", []) == {"127.0.0.1", "localhost", "::1"}
    assert allowed_hosts("10.1.2.3", []) == {"10.1.2.3"}
    assert allowed_hosts("0.0.0.0", []) is None and allowed_hosts("::", []) is None  # any
    assert allowed_hosts("127.0.0.1", ["Proxy.Example.", "[::1]"]) == {"proxy.example", "::1"}
    assert allowed_hosts("127.0.0.1", ["*"]) is None


def nested(depth: int, inner: bytes = b"1") -> bytes:
    return b"[" * depth + inner + b"]" * depth


def typed_list(depth: int) -> bytes:
    """A typed-JSON List of Lists `depth` deep (by hand: json.dumps would recurse)."""
    return (b'{"$type": "List", "_value": [' * depth + b'{"$type": "Integer", "_value": "1"}'
            + b"]}" * depth)  # fmt: skip


@pytest.mark.parametrize("depth", [150, 100_000])
def test_deep_json_is_a_400_and_the_proxy_keeps_answering(base: str, depth: int) -> None:
    bodies = {
        "/v1/query": b'{"query": "RETURN $a", "parameters": {"a": ' + nested(depth) + b"}}",
        "/v1/check": nested(depth),
        "/db/neo4j/query/v2": b'{"statement": "RETURN 1", "x": ' + nested(depth) + b"}",
        "/db/neo4j/query/v2/tx": b'{"parameters": {"a": ' + nested(depth) + b"}}",
        "/db/neo4j/tx/commit": b'{"statements": ' + nested(depth, b"{}") + b"}",
        "/mcp": b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": '
        + nested(depth) + b"}}",
    }
    for path, raw in bodies.items():
        status, body, _ = send(base, path, raw, Content_Type="application/json")
        assert status == 400, (path, status, body)
        code, message = error_of(path, body)
        assert "nests more than 100" in message
        assert code == (-32700 if path == "/mcp" else "Neo.ClientError.Request.Invalid")
    status, body, _ = post(base, "/v1/query", {"query": READ})
    assert status == 200 and body["rows"] == [[1956]]


def test_deep_typed_json_values_are_a_400(base: str) -> None:
    typed = "application/vnd.neo4j.query"

    def run(depth: int) -> tuple[int, Any]:
        raw = b'{"statement": "RETURN $a AS a", "parameters": {"a": ' + typed_list(depth) + b"}}"
        status, body, _ = send(base, "/db/neo4j/query/v2", raw, Content_Type=typed)
        return status, body

    status, body = run(3000)
    assert status == 400 and "nests more than 100" in body["errors"][0]["message"]
    status, body = run(40)  # within the JSON bound: the parameter limit answers
    assert status == 400 and "max_parameter_depth" in body["errors"][0]["message"]
    status, body = run(3)
    assert status == 202 and body["data"]["values"] == [[[[[1]]]]]


def test_bodies_that_are_no_utf8_json_are_a_400(base: str) -> None:
    for raw in (b"\xff\xfe{}", b'{"query": "RETURN 1"', b"[]", b'{"query": "\xc3\x28"}'):
        for path in ("/v1/query", "/db/neo4j/query/v2", "/db/neo4j/tx/commit", "/mcp"):
            status, body, _ = send(base, path, raw, Content_Type="application/json")
            assert status == 400, (path, raw, status, body)
    assert post(base, "/v1/check", {"query": READ})[0] == 200
