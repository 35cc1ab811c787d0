"""Smoke test of what a stranger gets from `pip install .`: no extras, no pins, the newest
release of every dependency. Run with that venv's interpreter from a directory outside the
checkout (so `import proxy` can only come from the installed distribution):

    python smoke_fresh_install.py

It starts `query-guard serve` on the embedded defaults (FalkorDB, graphersal, SQLite) with
Bolt, HTTP and Gremlin listeners on free ports, and `query-guard mcp` over stdio, and drives
every front with the clients the distribution installs (the neo4j driver, aiohttp,
gremlinpython) and raw JSON-RPC for MCP (so the check does not depend on the SDK's client API,
which changed between its majors). Each front must answer a guarded read and refuse a write;
MCP results must follow their tools' output schemas, and the operator console (`/ui`, whose
templates are package data) must show the refused write.
Exits 0 when all hold; prints what failed otherwise.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REVERSED = "MATCH (m:Movie {title: 'The Matrix'})-[:ACTED_IN]->(p:Person) RETURN p.name AS name"
WRITE = "MATCH (n) DETACH DELETE n"
SQL = "SELECT companyName FROM customers WHERE country = 'Norway'"
GREMLIN = "g.V('case-1').hasLabel('case').out('hasReason').values('text')"


def cli() -> str:
    found = shutil.which("query-guard", path=str(Path(sys.executable).parent))
    if found is None:
        sys.exit("query-guard is not installed beside this interpreter")
    return found


def start_serve(data: Path) -> tuple[subprocess.Popen[str], dict[str, str]]:
    config = data / "serve.toml"
    config.write_text(
        f'[server]\nbolt = "127.0.0.1:0"\nhttp = "127.0.0.1:0"\ngremlin = "127.0.0.1:0"\n'
        f'data_dir = "{data}"\n[audit]\npath = "{data / "audit.jsonl"}"\n'
    )
    proc = subprocess.Popen([cli(), "serve", "--config", str(config)], stdout=subprocess.PIPE,
                            text=True)  # fmt: skip
    assert proc.stdout is not None
    urls: dict[str, str] = {}
    deadline = time.monotonic() + 180
    while len(urls) < 3 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        match = re.search(r"listening on (\w+)://([\d.]+:\d+)", line)
        if match:
            urls[match.group(1)] = match.group(2)
    if len(urls) < 3:
        proc.kill()
        sys.exit(f"serve did not report its three listeners: {urls}")
    return proc, urls


def post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", **(headers or {})},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def check_bolt(address: str) -> None:
    import neo4j

    with neo4j.GraphDatabase.driver(f"bolt://{address}", auth=None) as driver:
        names = {r["name"] for r in driver.execute_query(REVERSED, routing_="r").records}
        assert "Keanu Reeves" in names, names
        try:
            driver.execute_query(WRITE)
        except neo4j.exceptions.ClientError as exc:
            assert "SEC.WRITE" in str(exc) or "read-only" in str(exc), exc
        else:
            raise AssertionError("a write ran through Bolt")


def check_http(address: str) -> None:
    base = f"http://{address}"
    status, body = post(f"{base}/db/neo4j/query/v2", {"statement": REVERSED})
    assert status == 202 and ["Keanu Reeves"] in body["data"]["values"], (status, body)
    status, body = post(f"{base}/db/neo4j/query/v2", {"statement": WRITE})
    assert status >= 400, (status, body)
    status, body = post(f"{base}/v1/query", {"query": SQL, "language": "sql"})
    assert status == 200 and body["rows"] == [["Santé Gourmet"]], (status, body)
    status, body = post(f"{base}/v1/query", {"query": "DELETE FROM customers", "language": "sql"})
    assert body.get("action") == "block" or status >= 400, (status, body)
    # what a web page could send: refused before anything is read
    status, body = post(f"{base}/v1/query", {"query": SQL}, {"Content-Type": "text/plain"})
    assert status == 415, (status, body)
    status, body = post(f"{base}/v1/query", {"query": SQL}, {"Origin": "https://evil.example"})
    assert status == 403, (status, body)
    status, body = post(f"{base}/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                        {"Host": "rebound.example", "Accept": "application/json"})
    assert status == 421, (status, body)


def mcp_calls() -> list[dict[str, Any]]:
    """initialize, then the read and the write as MCP tool calls (ids 1, 2, 3)."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "smoke", "version": "0"}}  # fmt: skip
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "read_cypher", "arguments": {"query": REVERSED}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "read_cypher", "arguments": {"query": WRITE}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
    ]  # fmt: skip


def check_mcp_answers(answers: dict[Any, Any], where: str) -> None:
    assert answers[1]["result"]["serverInfo"]["name"] == "query-guard", (where, answers[1])
    read = answers[2]["result"]
    assert not read.get("isError") and "Keanu Reeves" in read["content"][0]["text"], (where, read)
    write = answers[3]["result"]
    assert write["isError"] and "SEC.WRITE" in write["content"][0]["text"], (where, write)
    import jsonschema  # the mcp SDK's own dependency

    tools = {t["name"]: t for t in answers[4]["result"]["tools"]}
    schema = tools["read_cypher"].get("outputSchema")
    assert schema is not None, (where, tools["read_cypher"])
    for result in (read, write):  # typed results, the refusal too
        jsonschema.validate(result["structuredContent"], schema)


def check_console(address: str) -> None:
    """`/ui` renders (its templates were installed) with its policy, and lists the write the
    HTTP check sent as refused."""
    base = f"http://{address}"
    with urllib.request.urlopen(f"{base}/ui", timeout=60) as response:
        page = response.read().decode()
        assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    assert "/ui/static/console.js" in page and "DETACH DELETE" in page, page[:500]
    with urllib.request.urlopen(f"{base}/ui/static/console.js", timeout=60) as response:
        assert b"/ui/state.json" in response.read()


def check_mcp_http(address: str) -> None:
    accept = {"Accept": "application/json, text/event-stream"}
    answers: dict[int, Any] = {}
    for message in mcp_calls():
        status, body = post(f"http://{address}/mcp", message, accept)
        assert status < 300, (status, body)
        if "id" in message:
            answers[message["id"]] = body
    check_mcp_answers(answers, "/mcp")


def check_mcp_stdio(data: Path) -> None:
    config = data / "mcp.toml"
    config.write_text(f'[server]\nbolt = ""\ndata_dir = "{data / "mcp"}"\n'
                      f'[audit]\npath = "{data / "mcp-audit.jsonl"}"\n')  # fmt: skip
    proc = subprocess.Popen([cli(), "mcp", "--config", str(config)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    answers: dict[int | None, Any] = {}
    try:
        proc.stdin.buffer.write(b"\xff\xfe not UTF-8\n")  # answered, and the server goes on
        for message in mcp_calls():
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            while "id" in message and message["id"] not in answers:
                line = proc.stdout.readline()
                if not line:
                    raise AssertionError("query-guard mcp ended")
                reply = json.loads(line)
                if "id" in reply:
                    answers[reply["id"]] = reply
    finally:
        proc.stdin.close()
        proc.wait(30)
    assert answers[None]["error"]["code"] == -32700, answers.get(None)
    check_mcp_answers(answers, "stdio")


def check_gremlin(address: str) -> None:
    from gremlin_python.driver.client import Client
    from gremlin_python.driver.protocol import GremlinServerError

    client = Client(f"ws://{address}/gremlin", "g")
    try:
        assert client.submit(GREMLIN).all().result(), "no rows from the Gremlin front"
        try:
            client.submit("g.V().hasLabel('case').drop()").all().result()
        except GremlinServerError as exc:
            assert "SEC.WRITE" in str(exc) or "not allowed" in str(exc), exc
        else:
            raise AssertionError("a drop() ran through the Gremlin front")
    finally:
        client.close()


def main() -> int:
    data = Path(tempfile.mkdtemp(prefix="qg-smoke-"))
    os.chdir(data)  # never the checkout: the installed distribution only
    sys.path[:] = [p for p in sys.path if p and Path(p).resolve() != Path(__file__).parent.parent]
    import importlib.util

    generic = [n for n in ("proxy", "plugins", "conf", "grammars") if importlib.util.find_spec(n)]
    if generic or importlib.util.find_spec("query_guard") is None:
        sys.exit(f"the distribution must install query_guard only; also found: {generic}")
    proc, urls = start_serve(data)
    failed: list[str] = []
    checks = [("bolt", lambda: check_bolt(urls["bolt"])),
              ("http", lambda: check_http(urls["http"])),
              ("console", lambda: check_console(urls["http"])),
              ("mcp over http", lambda: check_mcp_http(urls["http"])),
              ("mcp over stdio", lambda: check_mcp_stdio(data)),
              ("gremlin", lambda: check_gremlin(urls["ws"]))]  # fmt: skip
    try:
        for name, check in checks:
            try:
                check()
                print(f"ok    {name}", flush=True)
            except Exception as exc:  # report every front, then fail
                failed.append(name)
                print(f"FAIL  {name}: {exc!r}", flush=True)
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(data, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
