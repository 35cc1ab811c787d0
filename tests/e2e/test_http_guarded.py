"""The HTTP front with `[server] users`, writes allowed by the operator, tight `[limits]` and a
slow third-party rule, on the embedded FalkorDB (movie graph) beside a Bolt front on the same
graph: Basic auth (401 with Neo4j's code and a challenge; `/health` open; `/v1/*` and `/mcp`
checked), `accessMode: Read`, typed JSON equal to what the Bolt front returns, parameter
limits and the guard's time budget, sample values."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Iterator
from typing import Any

import aiohttp
import neo4j
import pytest
from neo4j.graph import Node, Path, Relationship
from neo4j.spatial import Point
from neo4j.time import Date, DateTime, Duration, Time

from query_guard.config.auth import hash_password
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from tests.e2e.test_resource_limits import SLOW_MARKER, SlowRule

TYPED = "application/vnd.neo4j.query"
ALICE = "Basic " + base64.b64encode(b"alice:wonderland").decode()
WRONG = "Basic " + base64.b64encode(b"alice:guess").decode()


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyThread]:
    data = tmp_path_factory.mktemp("http-guarded")
    config = parse_config(
        {
            "server": {"bolt": "127.0.0.1:0", "http": "127.0.0.1:0", "data_dir": str(data),
                       "users": {"alice": hash_password("wonderland", n=2**10)}},
            "guard": {"read_only": False},
            "limits": {"max_parameters": 2, "guard_timeout_ms": 500},
            "audit": {"path": str(data / "audit.jsonl")},
        }
    )  # fmt: skip
    with ProxyThread(config, extra_plugins=(SlowRule(),)) as running:
        yield running


@pytest.fixture(scope="module")
def base(proxy: ProxyThread) -> str:
    return f"http://127.0.0.1:{proxy.server.http.port}"


def call(
    base: str, method: str, path: str, body: Any = None, auth: str | None = ALICE, **headers: str
) -> tuple[int, Any, Any]:
    async def go() -> tuple[int, Any, Any]:
        sent = {k.replace("_", "-"): v for k, v in headers.items()}
        if auth is not None:
            sent["Authorization"] = auth
        async with aiohttp.ClientSession() as session, session.request(
            method, base + path, json=body, headers=sent
        ) as resp:
            text = await resp.text()
            try:
                return resp.status, json.loads(text), resp.headers
            except ValueError:
                return resp.status, text, resp.headers

    return asyncio.run(go())


# ---------------------------------------------------------------------- auth


def test_requests_without_valid_credentials_get_401_with_a_challenge(base: str) -> None:
    query = {"statement": "RETURN 1 AS one"}
    for auth in (None, WRONG, "Basic !!notbase64", "Digest x"):
        status, body, headers = call(base, "POST", "/db/neo4j/query/v2", query, auth=auth)
        assert status == 401, auth
        assert body["errors"][0]["code"] == "Neo.ClientError.Security.Unauthorized"
        assert headers["WWW-Authenticate"].startswith("Basic ")
    for path in ("/v1/check", "/v1/query"):
        assert call(base, "POST", path, {"query": "RETURN 1"}, auth=None)[0] == 401
    assert call(base, "GET", "/v1/context", auth=WRONG)[0] == 401
    status, body, _ = call(base, "POST", "/db/neo4j/query/v2", query)
    assert status == 202 and body["data"]["values"] == [[1]]


def test_health_stays_open(base: str) -> None:
    assert call(base, "GET", "/health", auth=None)[:2] == (200, {"status": "ok"})


def test_mcp_is_behind_the_same_credentials(base: str) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async def rows(auth: str | None) -> Any:
        headers = {"Authorization": auth} if auth else None
        async with streamablehttp_client(base + "/mcp", headers=headers) as (r, w, _), \
                ClientSession(r, w) as session:  # fmt: skip
            await session.initialize()
            result = await session.call_tool(
                "read_cypher", {"query": "MATCH (p:Person {name: 'Tom Hanks'}) RETURN p.born"}
            )
            return json.loads(result.content[0].text)["rows"]

    assert asyncio.run(rows(ALICE)) == [[1956]]
    with pytest.raises(BaseException) as refused:  # the SDK wraps the 401 in exception groups
        asyncio.run(asyncio.wait_for(rows(None), 30))
    assert "401" in repr(refused.value) or "Unauthorized" in repr(refused.value)


# ---------------------------------------------------------------------- access mode


def count_probes(base: str) -> int:
    status, body, _ = call(base, "POST", "/db/neo4j/query/v2",
                           {"statement": "MATCH (n:QgAccess) RETURN count(n) AS n"})  # fmt: skip
    assert status == 202
    return int(body["data"]["values"][0][0])


def test_a_write_with_access_mode_read_is_refused_even_when_writes_are_allowed(base: str) -> None:
    before = count_probes(base)
    create = {"statement": "CREATE (:QgAccess {n: 1})", "accessMode": "Read"}
    status, body, _ = call(base, "POST", "/db/neo4j/query/v2", create)
    assert status == 400
    assert body["errors"][0]["code"] == "Neo.ClientError.Statement.AccessMode"
    assert "SEC.WRITE" in [f["code"] for f in body["queryGuard"]["findings"]]
    assert count_probes(base) == before
    status, _, _ = call(base, "POST", "/db/neo4j/query/v2", {**create, "accessMode": "Write"})
    assert status == 202 and count_probes(base) == before + 1
    status, body, _ = call(base, "POST", "/db/neo4j/query/v2", {**create, "accessMode": "Sideways"})
    assert status == 400 and body["errors"][0]["code"] == "Neo.ClientError.Request.Invalid"


def test_a_read_transaction_refuses_writes(base: str) -> None:
    before = count_probes(base)
    status, body, _ = call(base, "POST", "/db/neo4j/query/v2/tx", {
        "statement": "MATCH (m:Movie {title: 'Cast Away'}) RETURN m.released", "accessMode": "Read"
    })  # fmt: skip
    assert status == 202 and body["data"]["values"] == [[2000]]
    tx = body["transaction"]["id"]
    status, body, _ = call(base, "POST", f"/db/neo4j/query/v2/tx/{tx}",
                           {"statement": "CREATE (:QgAccess {n: 2})"})  # fmt: skip
    assert status == 400
    assert body["errors"][0]["code"] == "Neo.ClientError.Statement.AccessMode"
    assert call(base, "POST", f"/db/neo4j/query/v2/tx/{tx}/commit", {})[0] == 404
    assert count_probes(base) == before


def test_legacy_tx_commit_runs_its_statements_in_one_transaction(base: str) -> None:
    before = count_probes(base)
    status, body, _ = call(base, "POST", "/db/neo4j/tx/commit", {"statements": [
        {"statement": "CREATE (:QgAccess {n: 3})"},
        {"statement": "MATCH (n:QgAccess) RETURN count(n) AS n"},
    ]})  # fmt: skip
    assert status == 200 and body["errors"] == []
    assert body["results"][1]["data"][0]["row"] == [before + 1]  # sees its own write


def test_legacy_tx_commit_says_when_a_failed_transaction_cannot_be_rolled_back(base: str) -> None:
    before = count_probes(base)
    status, body, _ = call(base, "POST", "/db/neo4j/tx/commit", {"statements": [
        {"statement": "CREATE (:QgAccess {n: 4})"}, {"statement": "MATCH (n RETURN n"},
    ]})  # fmt: skip
    assert status == 200
    codes = [e["code"] for e in body["errors"]]
    assert codes[0] == "Neo.ClientError.Statement.SyntaxError"
    # FalkorDB has no multi-statement transactions: the first CREATE stays, and the answer
    # says so instead of pretending it was rolled back
    assert len(codes) == 2 and "cannot be rolled back" in body["errors"][1]["message"]
    assert count_probes(base) == before + 1


def test_legacy_tx_commit_honours_access_mode_read(base: str) -> None:
    before = count_probes(base)
    status, body, _ = call(base, "POST", "/db/neo4j/tx/commit", {"statements": [
        {"statement": "MATCH (n:QgAccess) RETURN count(n) AS n"},
        {"statement": "CREATE (:QgAccess {n: 5})"},
    ]}, Access_Mode="READ")  # fmt: skip
    assert status == 200
    assert body["results"][0]["data"][0]["row"] == [before]
    assert body["errors"][0]["code"] == "Neo.ClientError.Statement.AccessMode"
    assert count_probes(base) == before


# ---------------------------------------------------------------------- typed JSON

TYPED_QUERIES = (
    "MATCH (a:Person {name: 'Tom Hanks'})-[r:ACTED_IN]->(m:Movie {title: 'Cast Away'}) "
    "RETURN a, r, m",
    "MATCH p = (:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(:Movie {title: 'Cast Away'}) RETURN p",
    "RETURN date('2024-01-02') AS d, localdatetime('2024-01-02T03:04:05') AS ldt, "
    "localtime('03:04:05') AS lt, duration({days: 14, hours: 16, minutes: 12}) AS du",
    "RETURN point({latitude: 1.5, longitude: 2.5}) AS p, 1.5 AS f, 7 AS i, true AS b, "
    "null AS z, [1, 'a'] AS l, {a: 1, b: ['x']} AS m",
)
_DURATION = re.compile(
    r"P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?)?$"
)
_POINT = re.compile(r"SRID=(\d+);POINT \(([-\d.e]+) ([-\d.e]+)\)$")


def from_http(typed: dict[str, Any]) -> Any:
    """A typed-JSON value as a comparable structure (read with regular expressions and the
    standard library, independent of the proxy's writer)."""
    kind, value = typed["$type"], typed["_value"]
    if kind == "Node":
        return ("node", value["_element_id"], sorted(value["_labels"]),
                {k: from_http(v) for k, v in value["_properties"].items()})  # fmt: skip
    if kind == "Relationship":
        return ("rel", value["_element_id"], value["_type"], value["_start_node_element_id"],
                value["_end_node_element_id"],
                {k: from_http(v) for k, v in value["_properties"].items()})  # fmt: skip
    if kind == "Path":
        return ("path", [from_http(v) for v in value])
    if kind in ("List",):
        return [from_http(v) for v in value]
    if kind == "Map":
        return {k: from_http(v) for k, v in value.items()}
    if kind == "Duration":
        y, mo, d, h, mi, s = _DURATION.match(value).groups()  # type: ignore[union-attr]
        return Duration(years=int(y or 0), months=int(mo or 0), days=int(d or 0),
                        hours=int(h or 0), minutes=int(mi or 0), seconds=float(s or 0))  # fmt: skip
    if kind == "Point":
        srid, x, y = _POINT.match(value).groups()  # type: ignore[union-attr]
        return ("point", int(srid), float(x), float(y))
    scalar = {"Integer": int, "Float": float, "String": str, "Boolean": bool}
    if kind in scalar:
        return scalar[kind](value)
    if kind == "Null":
        return None
    return (kind, value)  # temporal: type name and ISO text


def from_bolt(value: Any) -> Any:
    """What the neo4j driver read through the Bolt front, as the same structure."""
    if isinstance(value, Node):
        return ("node", value.element_id, sorted(value.labels),
                {k: from_bolt(v) for k, v in value.items()})  # fmt: skip
    if isinstance(value, Relationship):
        assert value.start_node is not None and value.end_node is not None
        return ("rel", value.element_id, value.type, value.start_node.element_id,
                value.end_node.element_id, {k: from_bolt(v) for k, v in value.items()})  # fmt: skip
    if isinstance(value, Path):
        items: list[Any] = [value.nodes[0]]
        for rel, node in zip(value.relationships, value.nodes[1:], strict=True):
            items += [rel, node]
        return ("path", [from_bolt(v) for v in items])
    if isinstance(value, list):
        return [from_bolt(v) for v in value]
    if isinstance(value, dict):
        return {k: from_bolt(v) for k, v in value.items()}
    if isinstance(value, Point):
        return ("point", value.srid, value.x, value.y)
    if isinstance(value, DateTime):
        kind = "LocalDateTime" if value.tzinfo is None else "OffsetDateTime"
        return (kind, value.to_native().isoformat())
    if isinstance(value, Date):
        return ("Date", value.to_native().isoformat())
    if isinstance(value, Time):
        return ("LocalTime" if value.tzinfo is None else "Time", value.to_native().isoformat())
    return value


def test_typed_json_equals_the_bolt_fronts_values(proxy: ProxyThread, base: str) -> None:
    with neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=("alice", "wonderland")) \
            as driver:  # fmt: skip
        for query in TYPED_QUERIES:
            records, _, _ = driver.execute_query(query)
            status, body, headers = call(base, "POST", "/db/neo4j/query/v2",
                                         {"statement": query}, Accept=TYPED)  # fmt: skip
            assert status == 202 and headers["Content-Type"].startswith(TYPED)
            http = [[from_http(v) for v in row] for row in body["data"]["values"]]
            bolt = [[from_bolt(v) for v in record.values()] for record in records]
            assert http == bolt and bolt, query


def test_plain_json_unless_typed_is_asked_for(base: str) -> None:
    status, body, headers = call(base, "POST", "/db/neo4j/query/v2", {"statement": "RETURN 7"})
    assert status == 202
    assert headers["Content-Type"].startswith("application/json")
    assert body["data"]["values"] == [[7]]


def test_typed_parameters_are_read(base: str) -> None:
    status, body, _ = call(base, "POST", "/db/neo4j/query/v2", {
        "statement": "MATCH (p:Person {name: $n}) RETURN p.born AS born",
        "parameters": {"n": {"$type": "String", "_value": "Tom Hanks"}},
    }, Accept=TYPED, Content_Type=TYPED)  # fmt: skip
    assert status == 202
    assert body["data"]["values"] == [[{"$type": "Integer", "_value": "1956"}]]
    status, body, _ = call(base, "POST", "/db/neo4j/query/v2", {
        "statement": "RETURN $n", "parameters": {"n": "untyped"}}, Content_Type=TYPED)
    assert status == 400 and body["errors"][0]["code"] == "Neo.ClientError.Request.Invalid"


# ---------------------------------------------------------------------- limits, samples


def test_parameter_limits_apply_as_on_the_bolt_front(proxy: ProxyThread, base: str) -> None:
    query = "RETURN $a + $b + $c AS s"
    params = {"a": 1, "b": 2, "c": 3}
    status, body, _ = call(base, "POST", "/db/neo4j/query/v2",
                           {"statement": query, "parameters": params})  # fmt: skip
    assert status == 400 and "LIM.PARAMETERS" in body["errors"][0]["message"]
    status, body, _ = call(base, "POST", "/v1/check", {"query": query, "parameters": params})
    assert body["action"] == "block" and body["findings"][0]["code"] == "LIM.PARAMETERS"
    with neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=("alice", "wonderland")) \
            as driver, pytest.raises(neo4j.exceptions.ClientError) as bolt:  # fmt: skip
        driver.execute_query(query, params)
    assert bolt.value.code == body_code(base, query, params)


def test_the_guard_time_budget_applies_as_on_the_bolt_front(base: str) -> None:
    status, body, _ = call(base, "POST", "/db/neo4j/query/v2",
                           {"statement": f"RETURN 1 AS {SLOW_MARKER}"})  # fmt: skip
    assert status == 400
    assert body["errors"][0]["message"].startswith("LIM.TIMEOUT")
    assert "guard_timeout_ms" in body["errors"][0]["message"]


def body_code(base: str, query: str, params: dict[str, Any]) -> str:
    _, body, _ = call(base, "POST", "/db/neo4j/query/v2",
                      {"statement": query, "parameters": params})  # fmt: skip
    return str(body["errors"][0]["code"])


def test_context_with_sample_values(base: str) -> None:
    status, plain, _ = call(base, "GET", "/v1/context")
    assert status == 200 and "Sample values" not in plain
    status, text, _ = call(base, "GET", "/v1/context?samples=2")
    assert status == 200
    lines = {line.split(":", 1)[0]: line for line in text.splitlines() if line.startswith("- ")}
    born = lines["- Person.born"].split(": ", 1)[1].split(", ")
    assert len(born) == 2 and all(v.isdigit() for v in born)
    assert lines["- Person.name"].count("'") == 4  # two quoted names
    assert len(lines["- Movie.tagline"]) < 160  # long strings are cut
    assert call(base, "GET", "/v1/context?samples=many")[0] == 400


# ---------------------------------------------------------------------- no schema yet


def test_without_a_schema_verdicts_say_so_and_ready_is_503(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    data = tmp_path_factory.mktemp("http-no-schema")
    config = parse_config({
        "server": {"bolt": "", "http": "127.0.0.1:0", "data_dir": str(data)},
        "guard": {"discover_schema": False},
        "audit": {"path": str(data / "audit.jsonl")},
    })  # fmt: skip
    with ProxyThread(config) as running:
        url = f"http://127.0.0.1:{running.server.http.port}"
        status, body, _ = call(url, "GET", "/ready", auth=None)
        assert status == 503 and body["backend"] and not body["schema"]
        assert "discover_schema = false" in body["reason"]
        _, verdict, _ = call(url, "POST", "/v1/check", {"query": "MATCH (n:Person) RETURN n"})
        assert "SCH.NO_SCHEMA" in [f["code"] for f in verdict["findings"]]
        _, answer, _ = call(url, "POST", "/db/neo4j/query/v2", {"statement": "RETURN 1 AS x"})
        assert "SCH.NO_SCHEMA" in [f["code"] for f in answer["queryGuard"]["findings"]]
        _, refused, _ = call(url, "POST", "/v1/check", {"query": "MATCH (n) DETACH DELETE n"})
        assert refused["action"] == "block"
        assert "SCH.NO_SCHEMA" not in [f["code"] for f in refused["findings"]]
