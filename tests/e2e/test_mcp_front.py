"""`query-guard mcp` as an MCP agent sees it: the real `mcp` SDK client over stdio, the
proxy on the embedded FalkorDB (movie graph) and graphersal (IT-support demo graph)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.corpora import ROOT


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.toml"
    path.write_text(
        f'[server]\nbolt = ""\ndata_dir = "{tmp_path / "data"}"\ngremlin = "127.0.0.1:0"\n'
        f'[audit]\npath = "{tmp_path / "audit.jsonl"}"\n'
        "[limits]\nquery_timeout_ms = 2000\n"
    )
    return path


def run(tmp_path: Path, body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "query_guard", "mcp", "--config", str(_config(tmp_path))],
        cwd=str(ROOT),
    )  # fmt: skip

    async def go() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            info = await session.initialize()
            return {"server": info.serverInfo, **await body(session)}

    return asyncio.run(asyncio.wait_for(go(), 120))


def _json(result: Any) -> Any:
    """A tool result as the agent reads it; a JSON object gains `isError` (a refused or failed
    call is an error result) after checking that `structuredContent` says the same as the text."""
    text = result.content[0].text
    try:
        payload = json.loads(text)
    except ValueError:
        assert not result.isError, text
        return text
    if isinstance(payload, dict):
        assert result.structuredContent == payload
        payload["isError"] = result.isError
    return payload


NEAR_LITERAL = "SELECT contactName FROM customers WHERE contactName = 'Anders'"


@pytest.fixture(scope="module")
def session_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One server, every tool call the tests look at (starting it costs seconds)."""

    async def body(session: ClientSession) -> dict[str, Any]:
        tools = await session.list_tools()
        calls = {
            "context": ("get_context", {}),
            "samples": ("get_context", {"samples": 2}),
            "schema": ("get_schema", {}),
            "reversed": ("read_cypher", {
                "query": "MATCH (m:Movie {title: $t})-[:ACTED_IN]->(p:Person) RETURN p.name",
                "params": {"t": "The Matrix"}}),
            "write": ("read_cypher", {"query": "MATCH (n) DETACH DELETE n"}),
            "many": ("read_cypher", {"query": "MATCH (p:Person) RETURN p.name"}),
            "check": ("check_query", {"query": "CALL apoc.load.json('file:///etc/passwd')"}),
            "gremlin": ("read_gremlin", {
                "query": "g.V(c).hasLabel('case').out('hasReason').values('text')",
                "bindings": {"c": "case-1"}}),
            "gremlin_write": ("read_gremlin", {"query": "g.V().hasLabel('case').drop()"}),
            "sql": ("read_sql", {
                "query": "SELECT compnyName FROM customers WHERE country = :c ORDER BY 1",
                "params": {"c": "Norway"}}),
            "sql_write": ("read_sql", {"query": "DELETE FROM customers"}),
            "sql_endless": ("read_sql", {"query": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                                         "SELECT x + 1 FROM c) SELECT count(*) FROM c"}),
            "plan": ("validate_plan", {"plan": {"branches": [
                {"id": "a", "route": "cypher", "depends_on": ["b"],
                 "query": "MATCH (m:Movie)-[:ACTED_IN]->(p:Person) RETURN p.name"},
                {"id": "b", "route": "gremlin", "depends_on": ["a", "z"],
                 "query": "g.V().hasLabel('case').drop()"}]}}),
            "plan_ok": ("validate_plan", {"plan": {"branches": [
                {"id": "a", "route": "sql", "query": "SELECT 1 AS one"}]}}),
            "plan_shape": ("validate_plan", {"plan": {"branches": "a"}}),
            "sql_near": ("read_sql", {"query": NEAR_LITERAL}),
            "sql_near_asked": ("read_sql", {"query": NEAR_LITERAL,
                                            "question": "Who is the contact Anders?"}),
        }  # fmt: skip
        out: dict[str, Any] = {"tools": {t.name: t for t in tools.tools}, "structured": {}}
        for key, (name, args) in calls.items():
            result = await session.call_tool(name, args)  # the SDK checks it against its schema
            out["structured"][key] = (name, result.structuredContent, result.isError)
            out[key] = _json(result)
        return out

    return run(tmp_path_factory.mktemp("mcp"), body)  # type: ignore[no-any-return]


def test_tools_say_what_is_enforced(session_results: dict[str, Any]) -> None:
    tools = session_results["tools"]
    assert set(tools) == {"get_schema", "get_context", "read_cypher", "read_gremlin",
                          "read_sql", "check_query", "report_outcome",
                          "validate_plan"}  # fmt: skip
    assert "read-only" in tools["read_cypher"].description
    assert "params" in tools["read_cypher"].inputSchema["properties"]
    feedback = tools.pop("report_outcome")  # changes the proxy's weights, never the database
    assert not feedback.annotations.readOnlyHint and feedback.annotations.openWorldHint is False
    for tool in tools.values():  # reads of a closed world: hints an agent host can act on
        assert tool.annotations.readOnlyHint and tool.annotations.openWorldHint is False


def test_every_result_follows_its_tools_output_schema(session_results: dict[str, Any]) -> None:
    """Typed results: every tool declares an output schema (an object), and every result's
    `structuredContent` is valid against it — refused and failed calls too, which the SDK's
    client does not check itself."""
    tools = session_results["tools"]
    for tool in tools.values():
        assert tool.outputSchema is not None and tool.outputSchema["type"] == "object", tool.name
    errors = 0
    for key, (name, structured, is_error) in session_results["structured"].items():
        assert structured is not None, key
        jsonschema.validate(structured, tools[name].outputSchema)
        errors += bool(is_error)
    assert errors >= 5  # the refusals and failures above were checked too
    read = tools["read_cypher"].outputSchema
    assert {"id", "query", "findings", "codes"} <= set(read["required"])
    assert tools["check_query"].inputSchema["properties"]["language"]["enum"] == [
        "cypher", "gremlin", "sql"]


def test_validate_plan_reports_each_error_for_the_agent(session_results: dict[str, Any]) -> None:
    plan = session_results["plan"]
    assert plan["valid"] is False and plan["isError"] is False  # an answer, not a failure
    assert [(e["branch"], e["code"]) for e in plan["errors"]] == [
        ("b", "PLAN.UNKNOWN_DEPENDENCY"), ("a", "PLAN.CYCLE"), ("b", "SEC.WRITE")]
    assert "a -> b -> a" in plan["errors"][1]["message"]
    rows = {b["id"]: b for b in plan["branches"]}
    assert rows["a"]["action"] == "rewrite" and "<-[:ACTED_IN]-" in rows["a"]["query"]
    assert rows["b"]["action"] == "block"
    ok = session_results["plan_ok"]
    assert ok["valid"] is True and ok["branches"][0]["action"] == "rewrite"
    shape = session_results["plan_shape"]
    assert shape["isError"] and "branches" in shape["error"]


def test_server_info_names_query_guard_and_its_version(session_results: dict[str, Any]) -> None:
    from importlib.metadata import version

    server = session_results["server"]
    assert (server.name, server.version) == ("query-guard", version("query-guard"))


def test_context_and_schema(session_results: dict[str, Any]) -> None:
    assert "(:Person)-[:ACTED_IN" in session_results["context"]
    assert "Rules:" in session_results["context"]
    assert "Movie" in session_results["schema"]
    assert "Sample values" not in session_results["context"]
    names = next(line for line in session_results["samples"].splitlines()
                 if line.startswith("- Person.name: "))  # fmt: skip
    assert names.count("'") == 4  # two quoted sample names


def test_reads_are_guarded_and_fixed(session_results: dict[str, Any]) -> None:
    result = session_results["reversed"]
    assert not result["isError"] and len(result["rows"]) == 5
    assert "DIR.REVERSED" in result["codes"]
    assert "<-[:ACTED_IN]-" in result["query"]


def test_writes_and_file_reads_are_refused_with_findings(session_results: dict[str, Any]) -> None:
    write = session_results["write"]  # a failed tool call, with what to fix in its content
    assert write["isError"] and write["refused"] and write["findings"][0]["code"] == "SEC.WRITE"
    check = session_results["check"]  # checking is what was asked: the call itself succeeded
    assert not check["isError"] and check["action"] == "block" and check["query"] is None


def test_results_are_cut_to_the_row_budget_with_a_note(session_results: dict[str, Any]) -> None:
    many = session_results["many"]
    assert len(many["rows"]) == 100 and "LIMIT" in many["note"]


def test_gremlin_tool(session_results: dict[str, Any]) -> None:
    assert session_results["gremlin"]["rows"] and not session_results["gremlin"]["isError"]
    write = session_results["gremlin_write"]
    assert write["refused"] and write["isError"]


def test_sql_tool_on_the_embedded_northwind(session_results: dict[str, Any]) -> None:
    sql = session_results["sql"]
    assert sql["rows"] == [["Santé Gourmet"]]  # the one Norwegian customer
    assert "SCH.UNKNOWN_COLUMN" in sql["codes"] and "companyName" in sql["query"]
    assert session_results["sql_write"]["refused"] and session_results["sql_write"]["isError"]


def test_a_speculative_repair_needs_the_question(session_results: dict[str, Any]) -> None:
    assert "question" in session_results["tools"]["read_sql"].inputSchema["properties"]
    assert "question" in session_results["tools"]["read_cypher"].inputSchema["properties"]
    near = session_results["sql_near"]  # nobody is called just 'Anders': offered, not applied
    assert near["rows"] == [] and "REPAIR.SUGGESTED" in near["codes"]
    asked = session_results["sql_near_asked"]
    assert asked["rows"] == [["Maria Anders"]] and "Maria Anders" in asked["query"]


def test_an_endless_sql_query_ends_at_the_query_timeout(session_results: dict[str, Any]) -> None:
    assert session_results["sql_endless"]["isError"]
    error = session_results["sql_endless"]["error"]
    assert error["code"] == "Neo.ClientError.Transaction.TransactionTimedOut"
    assert error["message"].startswith("LIM.TIMEOUT: the query ran longer than the 2000 ms")


def _raw_session(tmp_path: Path, lines: list[bytes], answers: int) -> list[dict[str, Any]]:
    """`query-guard mcp` fed `lines` as raw bytes on stdin: the first `answers` lines it
    writes on stdout, parsed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "query_guard", "mcp", "--config", str(_config(tmp_path))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=str(ROOT),
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(b"".join(lines))
        proc.stdin.flush()
        out = [json.loads(proc.stdout.readline()) for _ in range(answers)]
        assert proc.poll() is None, "the server ended"
    finally:
        proc.stdin.close()
        proc.wait(60)
    return out


def test_stdio_answers_bytes_that_are_no_message_and_keeps_serving(tmp_path: Path) -> None:
    hello = {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "raw", "version": "0"}}  # fmt: skip
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "check_query", "arguments": {"query": "MATCH (n) RETURN n"}}},
    ]  # fmt: skip
    deep = b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"x": ' + b"[" * 50_000
    lines = [
        b"\xff\xfe not UTF-8 \xc3\x28\n",
        b"{not json\n",
        deep + b"]" * 50_000 + b"}}\n",
        b'{"id": 7, "hello": "no JSON-RPC"}\n',
        *(json.dumps(m).encode() + b"\n" for m in messages),
    ]
    out = _raw_session(tmp_path, lines, 6)
    assert [a["error"]["code"] for a in out[:4]] == [-32700, -32700, -32700, -32600]
    assert "utf-8" in out[0]["error"]["message"] and "deep" in out[2]["error"]["message"]
    assert out[3]["id"] == 7
    assert out[4]["id"] == 1 and out[4]["result"]["serverInfo"]["name"] == "query-guard"
    verdict = json.loads(out[5]["result"]["content"][0]["text"])
    assert out[5]["id"] == 2 and verdict["action"] in ("allow", "rewrite")
