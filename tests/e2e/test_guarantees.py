"""The guarantee-by-front table of SECURITY.md, held against one `query-guard serve` (embedded
FalkorDB, graphersal and SQLite; Bolt, HTTP and Gremlin listeners), each front driven as its
clients drive it: the neo4j driver (auto-commit and explicit transactions), the Query API v2
(and its transactions), the legacy tx/commit endpoint, `/v1/query` for Cypher, Gremlin and
SQL, the MCP tools over `/mcp`, and gremlinpython on the Gremlin WebSocket.

For every front: too many parameters -> LIM.PARAMETERS; a result over `max_result_bytes` ->
LIM.RESULT_SIZE; a query past `query_timeout_ms` -> LIM.TIMEOUT within 3x the timeout while
another client is served; a write -> SEC.WRITE; exactly one audit record, with the same keys,
per query; the front's query metric moves. HTTP transactions are capped per client as Bolt
connections are."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import neo4j
import pytest
from gremlin_python.driver.client import Client

from query_guard.config.load import parse_config
from query_guard.run.record import KEYS
from query_guard.runner import ProxyThread

TIMEOUT_MS = 1000
AUDIT_KEYS = {"event", "timestamp", *({"query": "original", "action": "verdict"}.get(k, k)
                                      for k in KEYS if k != "parameters")}  # fmt: skip

# per language: (too many parameters, a big result, a slow query, a write)
CASES = {
    "cypher": {
        "parameters": ("RETURN $a + $b + $c + $d AS n", {"a": 1, "b": 2, "c": 3, "d": 4}),
        "result": ("MATCH (p:Person), (m:Movie) RETURN p.name AS p, m.title AS m LIMIT 500", {}),
        "timeout": ("MATCH (a:Person), (b:Person), (c:Person), (d:Person) "
                    "WHERE a.born + b.born + c.born + d.born < 0 RETURN count(*) AS n", {}),
        "write": ("MATCH (n:Movie) DETACH DELETE n", {}),
    },
    "gremlin": {
        "parameters": ("g.V(a).has('title', b).has('status', c).has('category', d)",
                       {"a": "case-1", "b": "x", "c": "open", "d": "network"}),
        "result": ("g.V().hasLabel('case').valueMap()", {}),
        "timeout": ("g.V('case-1').repeat(both().simplePath()).times(12).path().count()", {}),
        "write": ("g.V('case-1').drop()", {}),
    },
    "sql": {
        "parameters": ("SELECT :a, :b, :c, :d", {"a": 1, "b": 2, "c": 3, "d": 4}),
        "result": ("SELECT * FROM orders", {}),
        "timeout": ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                    "SELECT count(*) FROM c", {}),
        "write": ("DELETE FROM customers", {}),
    },
}  # fmt: skip
QUICK = "MATCH (m:Movie {title: 'The Matrix'}) RETURN m.released AS year"


@dataclass
class Served:
    proxy: ProxyThread
    bolt: str
    http: str
    ws: str
    audit: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data = tmp_path_factory.mktemp("guarantees")
    config = parse_config({
        "server": {"bolt": "127.0.0.1:0", "http": "127.0.0.1:0", "gremlin": "127.0.0.1:0",
                   "data_dir": str(data)},
        "limits": {"max_parameters": 3, "max_result_bytes": 4096,
                   "query_timeout_ms": TIMEOUT_MS},
        "audit": {"path": str(data / "audit.jsonl")},
    })  # fmt: skip
    with ProxyThread(config) as proxy:
        server = proxy.server
        yield Served(proxy, f"bolt://{proxy.address}",
                     f"http://127.0.0.1:{server.http.port}",
                     f"ws://127.0.0.1:{server.gremlin.port}/gremlin",
                     data / "audit.jsonl")  # fmt: skip


# ---------------------------------------------------------------------- the fronts


def _post(url: str, body: Any, headers: dict[str, str] | None = None) -> str:
    async def go() -> str:
        async with aiohttp.ClientSession() as session, \
                session.post(url, json=body, headers=headers) as response:  # fmt: skip
            return await response.text()

    return asyncio.run(go())


def _bolt(s: Served, text: str, params: dict[str, Any], in_tx: bool) -> str:
    seen: list[str] = []
    with neo4j.GraphDatabase.driver(s.bolt, auth=None) as driver, driver.session() as session:
        try:
            if in_tx:
                with session.begin_transaction() as tx:
                    result = tx.run(text, params)
                    list(result)
                    summary = result.consume()
                    tx.commit()
            else:
                result = session.run(text, params)
                list(result)
                summary = result.consume()
            seen += [str(n.get("code")) + str(n.get("description")) for n in
                     summary.notifications or []]  # fmt: skip
        except neo4j.exceptions.Neo4jError as exc:
            seen.append(str(exc))
    return "\n".join(seen)


def _mcp(s: Served, tool: str, args: dict[str, Any]) -> str:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}  # fmt: skip
    accept = {"Accept": "application/json, text/event-stream"}
    return _post(s.http + "/mcp", call, accept)


def _gremlin(s: Served, text: str, params: dict[str, Any]) -> str:
    client = Client(s.ws, "g")
    try:
        result_set = client.submit(text, params)
        rows = result_set.all().result()
        return json.dumps(result_set.status_attributes, default=str) + str(len(rows))
    except Exception as exc:  # GremlinServerError: the status message
        return str(exc)
    finally:
        client.close()


Front = Callable[[Served, str, dict[str, Any]], str]
FRONTS: dict[tuple[str, str], Front] = {
    ("bolt", "cypher"): lambda s, q, p: _bolt(s, q, p, in_tx=False),
    ("bolt-tx", "cypher"): lambda s, q, p: _bolt(s, q, p, in_tx=True),
    ("query-v2", "cypher"): lambda s, q, p: _post(
        s.http + "/db/neo4j/query/v2", {"statement": q, "parameters": p}),
    ("query-v2-tx", "cypher"): lambda s, q, p: _post(
        s.http + "/db/neo4j/query/v2/tx", {"statement": q, "parameters": p}),
    ("tx-commit", "cypher"): lambda s, q, p: _post(
        s.http + "/db/neo4j/tx/commit", {"statements": [{"statement": q, "parameters": p}]}),
    ("v1-query", "cypher"): lambda s, q, p: _post(
        s.http + "/v1/query", {"query": q, "parameters": p, "language": "cypher"}),
    ("v1-query", "gremlin"): lambda s, q, p: _post(
        s.http + "/v1/query", {"query": q, "parameters": p, "language": "gremlin"}),
    ("v1-query", "sql"): lambda s, q, p: _post(
        s.http + "/v1/query", {"query": q, "parameters": p, "language": "sql"}),
    ("mcp", "cypher"): lambda s, q, p: _mcp(s, "read_cypher", {"query": q, "params": p}),
    ("mcp", "gremlin"): lambda s, q, p: _mcp(s, "read_gremlin", {"query": q, "bindings": p}),
    ("mcp", "sql"): lambda s, q, p: _mcp(s, "read_sql", {"query": q, "params": p}),
    ("gremlin-ws", "gremlin"): _gremlin,
}  # fmt: skip
CODES = {"parameters": "LIM.PARAMETERS", "result": "LIM.RESULT_SIZE", "timeout": "LIM.TIMEOUT",
         "write": "SEC.WRITE"}  # fmt: skip


# ---------------------------------------------------------------------- observations


def _records(s: Served) -> list[dict[str, Any]]:
    s.proxy.call(asyncio.sleep(0.05))  # the audit log writes its lines every 10 ms
    assert s.proxy.server.audit is not None
    s.proxy.server.audit.flush()
    return [json.loads(x) for x in s.audit.read_text("utf-8").splitlines() if x.strip()]


def _queries_metric(s: Served) -> float:
    async def go() -> str:
        async with aiohttp.ClientSession() as session, \
                session.get(s.http + "/metrics") as response:  # fmt: skip
            return await response.text()

    text = asyncio.run(go())
    return sum(float(v) for v in re.findall(r"^query_guard_queries_total\{[^}]*\} (\S+)$",
                                            text, re.M))  # fmt: skip


@pytest.mark.parametrize("guarantee", list(CODES))
@pytest.mark.parametrize(("front", "language"), list(FRONTS), ids=[f"{f}-{lang}"
                                                                    for f, lang in FRONTS])
def test_every_front_keeps_every_guarantee(
    served: Served, front: str, language: str, guarantee: str
) -> None:
    text, params = CASES[language][guarantee]
    before, metric = len(_records(served)), _queries_metric(served)
    started = time.perf_counter()
    if guarantee == "timeout":  # another client is served while the slow query runs
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            slow = pool.submit(FRONTS[front, language], served, text, params)
            time.sleep(0.2)
            quick_started = time.perf_counter()
            quick = _post(served.http + "/v1/query", {"query": QUICK})
            quick_s = time.perf_counter() - quick_started
            answer = slow.result()
        assert '"rows": [[1999]]' in quick and quick_s < TIMEOUT_MS / 1000, (quick, quick_s)
        assert time.perf_counter() - started < 3 * TIMEOUT_MS / 1000 + 1
    else:
        answer = FRONTS[front, language](served, text, params)
    assert CODES[guarantee] in answer, answer[:600]
    records = _records(served)[before:]
    if guarantee == "timeout":  # the quick read's record is there too
        records = [r for r in records if r["original"] != QUICK]
    assert len(records) == 1, [r["original"] for r in records]
    assert set(records[0]) == AUDIT_KEYS, set(records[0]) ^ AUDIT_KEYS
    assert records[0]["language"] == language and records[0]["original"] == text
    assert _queries_metric(served) >= metric + 1


def test_http_transactions_are_capped_per_client(tmp_path: Path) -> None:
    config = parse_config({
        "server": {"bolt": "", "http": "127.0.0.1:0", "data_dir": str(tmp_path / "data")},
        "limits": {"max_connections_per_client": 3},
    })  # fmt: skip
    with ProxyThread(config) as proxy:
        base = f"http://127.0.0.1:{proxy.server.http.port}/db/neo4j/query/v2/tx"
        opened = [json.loads(_post(base, {})) for _ in range(3)]
        refused = json.loads(_post(base, {}))
        assert all("transaction" in o for o in opened), opened
        error = refused["errors"][0]
        assert error["code"] == "Neo.TransientError.Transaction.MaximumTransactionLimitReached"
        assert "[limits] max_connections_per_client" in error["message"]

        async def rollback(tx_id: str) -> int:
            async with aiohttp.ClientSession() as session, \
                    session.delete(f"{base}/{tx_id}") as response:  # fmt: skip
                return response.status

        assert asyncio.run(rollback(opened[0]["transaction"]["id"])) == 200
        assert "transaction" in json.loads(_post(base, {}))  # room again


def test_a_bolt_upstream_that_ignores_tx_timeout_is_cut_off(
    arcadedb_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ArcadeDB ignores Bolt's `tx_timeout`: the proxy's watchdog ends the wait with
    LIM.TIMEOUT within 3x the timeout, and the next query is served."""
    monkeypatch.setenv("QG_TEST_ARCADEDB_PASSWORD", arcadedb_server.root_password)
    config = parse_config({
        "server": {"bolt": "127.0.0.1:0", "http": "127.0.0.1:0", "data_dir": str(tmp_path)},
        "backend": {"cypher": arcadedb_server.url, "database": arcadedb_server.database,
                    "credentials": "configured", "user": "root",
                    "password_env": "QG_TEST_ARCADEDB_PASSWORD"},
        "limits": {"query_timeout_ms": TIMEOUT_MS},
    })  # fmt: skip
    slow = ("MATCH (a:Person), (b:Person), (c:Person), (d:Person) "
            "WHERE a.born + b.born + c.born + d.born < 0 RETURN count(*) AS n")  # fmt: skip
    with ProxyThread(config) as proxy:
        http = f"http://127.0.0.1:{proxy.server.http.port}"
        started = time.perf_counter()
        answer = _post(http + "/v1/query", {"query": slow})
        took = time.perf_counter() - started
        assert "LIM.TIMEOUT" in answer and took < 3 * TIMEOUT_MS / 1000, (answer[:300], took)
        assert '"rows": [[1999]]' in _post(http + "/v1/query", {"query": QUICK})
