"""The SQL backend's `[limits]` as a client of the proxy sees them (issue 20): an endless
recursive CTE on the embedded SQLite ends with `LIM.TIMEOUT` at `query_timeout_ms`; while
several run, logins (`[server] users`, HTTP Basic and Bolt) and other queries still answer; a
400 MB `zeroblob` is refused with `LIM.RESULT_SIZE` without the proxy holding it in memory;
and `query-guard serve` stops on SIGTERM while endless queries run."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import neo4j
import pytest

from query_guard.config.auth import hash_password
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread

ROOT = Path(__file__).resolve().parents[2]
# long enough that the answers under load (scrypt checks, a driver's first connection) come
# while every endless CTE still runs, on a busy 2-core machine too
TIMEOUT_MS = 5000
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
# one 400 MB value from allowed functions (zeroblob is not on the allow-list; printf past
# SQLite's length limit is null, replace's is an error)
HUGE_VALUE = (
    "SELECT replace(replace(printf('%.1000c', 'x'), 'x', printf('%.1000c', 'x')), 'x', "
    "printf('%.400c', 'y')) AS b"
)

USERS = {"alice": "wonderland", "bob": "builder", "carol": "christmas"}


def basic(user: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()


async def post(
    session: aiohttp.ClientSession, base: str, query: str, user: str, language: str = "sql"
) -> tuple[int, Any]:
    body = {"language": language, "query": query}
    headers = {"Authorization": basic(user)}
    async with session.post(base + "/v1/query", json=body, headers=headers) as resp:
        return resp.status, json.loads(await resp.text())


def vm_kib(pid: int | str, key: str) -> int:
    """A /proc/<pid>/status value in KiB (VmRSS, VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyThread]:
    data = tmp_path_factory.mktemp("sql-limits")
    config = parse_config({
        "server": {"bolt": "127.0.0.1:0", "http": "127.0.0.1:0", "data_dir": str(data),
                   "users": {name: hash_password(pw) for name, pw in USERS.items()}},
        "limits": {"query_timeout_ms": TIMEOUT_MS, "max_result_bytes": 16 * 1024 * 1024},
        "audit": {"path": str(data / "audit.jsonl")},
    })  # fmt: skip
    with ProxyThread(config) as running:
        yield running


@pytest.fixture(scope="module")
def base(proxy: ProxyThread) -> str:
    return f"http://127.0.0.1:{proxy.server.http.port}"


def test_an_endless_cte_ends_with_lim_timeout(base: str) -> None:
    async def go() -> tuple[int, Any, float]:
        async with aiohttp.ClientSession() as session:
            started = time.monotonic()
            status, body = await post(session, base, ENDLESS, "alice")
            return status, body, time.monotonic() - started

    status, body, waited = asyncio.run(go())
    assert status == 400, body
    error = body["errors"][0]
    assert error["code"] == "Neo.ClientError.Transaction.TransactionTimedOut"
    message = error["message"]
    assert message.startswith(f"LIM.TIMEOUT: the query ran longer than the {TIMEOUT_MS} ms")
    assert "[limits] query_timeout_ms" in message
    assert waited < 3 * TIMEOUT_MS / 1000, waited
    print(f"\nLIM.TIMEOUT after {waited:.2f} s (query_timeout_ms = {TIMEOUT_MS})")


def test_logins_and_other_queries_answer_while_endless_ctes_run(
    proxy: ProxyThread, base: str
) -> None:
    """Six endless CTEs (the red team's load); meanwhile a first login on HTTP (bob) and on
    Bolt (carol) with a scrypt check each, an ordinary SQL query and a Cypher query answer —
    before the CTEs time out — and the CTEs then end with LIM.TIMEOUT."""

    def bolt_login() -> int:
        uri = f"bolt://{proxy.address}"
        with neo4j.GraphDatabase.driver(uri, auth=("carol", USERS["carol"])) as driver:
            records, _, _ = driver.execute_query("MATCH (m:Movie) RETURN count(m) AS n")
            return int(records[0]["n"])

    async def go() -> None:
        async with aiohttp.ClientSession() as session:
            ctes = [asyncio.create_task(post(session, base, ENDLESS, "alice")) for _ in range(6)]
            await asyncio.sleep(0.3)  # sent, and running on the backend
            started = time.monotonic()
            sql = await post(session, base, "SELECT count(*) AS n FROM orders", "bob")
            login_s = time.monotonic() - started
            cypher = await post(
                session, base, "MATCH (m:Movie) RETURN count(m) AS n", "bob", "cypher"
            )
            movies = await asyncio.to_thread(bolt_login)
            answered_s = time.monotonic() - started
            pending = sum(not task.done() for task in ctes)
            outcomes = await asyncio.gather(*ctes)
        print(f"\nHTTP login + SQL under load: {login_s:.3f} s; all answers: {answered_s:.3f} s")
        assert sql == (200, sql[1]) and sql[1]["rows"] == [[830]], sql
        assert cypher[0] == 200 and cypher[1]["rows"] == [[38]], cypher
        assert movies == 38
        assert pending == 6  # all of it answered while every endless CTE still ran
        for status, body in outcomes:
            assert status == 400 and body["errors"][0]["message"].startswith("LIM.TIMEOUT")

    asyncio.run(go())


def test_a_400_mb_value_is_refused_without_growing_the_proxy(base: str) -> None:
    async def go() -> tuple[int, Any]:
        async with aiohttp.ClientSession() as session:
            huge = HUGE_VALUE
            return await post(session, base, huge, "alice")

    peak = vm_kib("self", "VmHWM")
    status, body = asyncio.run(go())
    grown_mb = (vm_kib("self", "VmHWM") - peak) / 1024
    assert status == 400, str(body)[:300]
    message = body["errors"][0]["message"]
    assert message.startswith("LIM.RESULT_SIZE") and "[limits] max_result_bytes" in message
    assert grown_mb < 100, grown_mb  # the 400 MB never existed in the proxy
    print(f"\npeak RSS growth for a 400 MB value: {grown_mb:.1f} MB")


def test_serve_stops_on_sigterm_while_endless_ctes_run(tmp_path: Path) -> None:
    config = tmp_path / "query-guard.toml"
    config.write_text(
        f'[server]\nbolt = ""\nhttp = "127.0.0.1:0"\ndata_dir = "{tmp_path / "data"}"\n'
        f'users = {{ alice = "{hash_password(USERS["alice"], n=2**10)}" }}\n'
        "[limits]\nquery_timeout_ms = 600000\n",  # the timeout is not what ends them
        "utf-8",
    )
    stderr = (tmp_path / "serve.stderr").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "query_guard", "serve", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        base = ""
        while not base:
            line = proc.stdout.readline()
            assert line, (tmp_path / "serve.stderr").read_text()
            if "listening on http://" in line:
                base = line.split("listening on ", 1)[1].strip()

        async def load() -> None:
            async with aiohttp.ClientSession() as session:
                status, body = await post(session, base, "SELECT 1 AS one", "alice")
                assert status == 200 and body["rows"] == [[1]], body
                ctes = [asyncio.create_task(post(session, base, ENDLESS, "alice"))
                        for _ in range(6)]  # fmt: skip
                await asyncio.sleep(1.0)  # running
                assert not any(task.done() for task in ctes)
                started = time.monotonic()
                proc.send_signal(signal.SIGTERM)
                status = await asyncio.to_thread(proc.wait, 10)  # raises after 10 s
                print(f"\nserve exited {time.monotonic() - started:.2f} s after SIGTERM")
                assert status == 0
                await asyncio.gather(*ctes, return_exceptions=True)

        asyncio.run(load())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        stderr.close()
    assert "Traceback" not in (tmp_path / "serve.stderr").read_text()
