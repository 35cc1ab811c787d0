"""The HTTP front in front of an authenticated ArcadeDB with pass-through credentials (the
default `[backend] credentials`): each request's HTTP Basic credentials are the backend
session's; the schema waits for the first authenticated request, which discovers it before its
own query runs; the database's refusal of credentials is a 401, as on Neo4j."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread

REVERSED = "MATCH (m:Movie {title: 'The Matrix'})-[:ACTED_IN]->(p:Person) RETURN p.name AS name"
ACTORS = ["Carrie-Anne Moss", "Emil Eifrem", "Hugo Weaving", "Keanu Reeves", "Laurence Fishburne"]


@pytest.fixture(scope="module")
def base(arcadedb_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("http-passthrough")
    config = parse_config({
        "server": {"bolt": "", "http": "127.0.0.1:0", "data_dir": str(tmp)},
        "backend": {"cypher": arcadedb_server.url, "database": arcadedb_server.database,
                    "credentials": "passthrough"},
        "repair": {"enabled": False},
        "audit": {"path": str(tmp / "audit.jsonl")},
    })  # fmt: skip
    with ProxyThread(config) as running:
        yield f"http://127.0.0.1:{running.server.http.port}"


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def call(base: str, method: str, path: str, body: Any = None, auth: str | None = None
         ) -> tuple[int, Any, Any]:  # fmt: skip
    async def go() -> tuple[int, Any, Any]:
        headers = {"Authorization": auth} if auth else {}
        async with aiohttp.ClientSession() as session, session.request(
            method, base + path, json=body, headers=headers
        ) as resp:
            return resp.status, json.loads(await resp.text()), resp.headers

    return asyncio.run(go())


def test_the_first_authenticated_request_discovers_the_schema_before_its_query(
    base: str, arcadedb_server: Any
) -> None:
    status, ready, _ = call(base, "GET", "/ready")
    assert status == 503 and "first authenticated client session" in ready["reason"]
    status, body, _ = call(base, "POST", "/db/neo4j/query/v2", {"statement": REVERSED},
                           auth=basic(*arcadedb_server.auth))  # fmt: skip
    assert status == 202
    assert sorted(row[0] for row in body["data"]["values"]) == ACTORS
    codes = [f["code"] for f in body["queryGuard"]["findings"]]
    assert "DIR.REVERSED" in codes and "SCH.NO_SCHEMA" not in codes
    status, ready, _ = call(base, "GET", "/ready")
    assert status == 200 and ready["schema"]


def test_credentials_the_database_refuses_get_401(base: str, arcadedb_server: Any) -> None:
    user, _ = arcadedb_server.auth
    status, body, headers = call(base, "POST", "/db/neo4j/query/v2",
                                 {"statement": "RETURN 1 AS x"}, auth=basic(user, "wrong"))
    assert status == 401
    assert body["errors"][0]["code"] == "Neo.ClientError.Security.Unauthorized"
    assert "Basic" in headers["WWW-Authenticate"]
    status, _, headers = call(base, "POST", "/v1/query", {"query": "RETURN 1 AS x"})
    assert status == 401 and "Bearer" in headers["WWW-Authenticate"]
    status, body, _ = call(base, "POST", "/v1/query", {"query": "RETURN 1 AS x"},
                           auth=basic(*arcadedb_server.auth))  # fmt: skip
    assert status == 200 and body["rows"] == [[1]]


def test_mcp_tool_calls_run_with_the_requests_credentials(base: str, arcadedb_server: Any) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async def go() -> Any:
        headers = {"Authorization": basic(*arcadedb_server.auth)}
        async with streamablehttp_client(base + "/mcp", headers=headers) as (r, w, _), \
                ClientSession(r, w) as session:  # fmt: skip
            await session.initialize()
            result = await session.call_tool("read_cypher", {"query": REVERSED})
            return json.loads(result.content[0].text)

    result = asyncio.run(go())
    assert sorted(row[0] for row in result["rows"]) == ACTORS


def test_a_backend_account_serves_requests_without_credentials(
    arcadedb_server: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QG_TEST_BACKEND_PASSWORD", arcadedb_server.root_password)
    config = parse_config({
        "server": {"bolt": "", "http": "127.0.0.1:0", "data_dir": str(tmp_path)},
        "backend": {"cypher": arcadedb_server.url, "database": arcadedb_server.database,
                    "credentials": "passthrough", "user": "root",
                    "password_env": "QG_TEST_BACKEND_PASSWORD"},
        "audit": {"path": str(tmp_path / "audit.jsonl")},
    })  # fmt: skip
    with ProxyThread(config) as running:
        url = f"http://127.0.0.1:{running.server.http.port}"
        status, body, _ = call(url, "POST", "/db/neo4j/query/v2", {"statement": REVERSED})
        assert status == 202 and sorted(r[0] for r in body["data"]["values"]) == ACTORS
        user, _ = arcadedb_server.auth
        status, _, _ = call(url, "POST", "/db/neo4j/query/v2", {"statement": REVERSED},
                            auth=basic(user, "wrong"))  # fmt: skip
        assert status == 401
