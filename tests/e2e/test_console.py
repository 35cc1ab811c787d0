"""The operator console over HTTP, without a browser: `query-guard serve` with `[server]
users` on the embedded FalkorDB (movie graph). `/ui` needs the same credentials and passes the
same Host/Origin checks as every other path, answers with a strict Content-Security-Policy,
serves only its own static files, and shows queries from every front — escaped. With
`[server] console = false` there is no `/ui`."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import neo4j
import pytest

from query_guard.config.auth import hash_password
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread

ALICE = "Basic " + base64.b64encode(b"alice:wonderland").decode()
HOSTILE = "RETURN '<script>alert(1)</script>' AS x"


def serve(data: Path, **server: Any) -> ProxyThread:
    config = parse_config({
        "server": {"bolt": "127.0.0.1:0", "http": "127.0.0.1:0", "data_dir": str(data),
                   "users": {"alice": hash_password("wonderland", n=2**10)}, **server},
        "audit": {"path": str(data / "audit.jsonl")},
    })  # fmt: skip
    return ProxyThread(config)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyThread]:
    with serve(tmp_path_factory.mktemp("console")) as running:
        yield running


@pytest.fixture(scope="module")
def base(proxy: ProxyThread) -> str:
    return f"http://127.0.0.1:{proxy.server.http.port}"


def get(base: str, path: str, auth: str | None = ALICE, **headers: str) -> tuple[int, str, Any]:
    async def go() -> tuple[int, str, Any]:
        sent = {k.replace("_", "-"): v for k, v in headers.items()}
        if auth is not None:
            sent["Authorization"] = auth
        async with aiohttp.ClientSession() as session, session.get(base + path,
                                                                     headers=sent) as resp:
            return resp.status, await resp.text(), resp.headers

    return asyncio.run(go())


def post_query(base: str, query: str) -> None:
    async def go() -> None:
        async with aiohttp.ClientSession() as session, session.post(
            base + "/v1/query", json={"query": query}, headers={"Authorization": ALICE}
        ) as resp:
            await resp.read()

    asyncio.run(go())


def test_the_console_needs_the_same_credentials(base: str) -> None:
    for path in ("/ui", "/ui/panels", "/ui/state.json", "/ui/static/console.js"):
        status, _, headers = get(base, path, auth=None)
        assert status == 401 and "Basic" in headers["WWW-Authenticate"], path
        assert get(base, path)[0] == 200, path


def test_foreign_hosts_and_origins_are_refused(base: str) -> None:
    assert get(base, "/ui", Host="rebound.example")[0] == 421
    assert get(base, "/ui/state.json", Origin="https://evil.example")[0] == 403


def test_the_page_allows_only_its_own_script_and_style(base: str) -> None:
    status, html, headers = get(base, "/ui")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    csp = headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp
    assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert '<script src="/ui/static/console.js"' in html and "<script>" not in html
    status, _, headers = get(base, "/ui/static/console.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert get(base, "/ui/static/..%2F__init__.py")[0] == 404
    assert get(base, "/ui/static/page.py")[0] == 404


def test_queries_from_bolt_and_http_appear_escaped(proxy: ProxyThread, base: str) -> None:
    _, state, _ = get(base, "/ui/state.json")
    driver = neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=("alice", "wonderland"))
    with driver, pytest.raises(neo4j.exceptions.ClientError):
        driver.execute_query("CREATE (:Console {marker: 'bolt-write'})")
    post_query(base, HOSTILE)
    _, after, _ = get(base, "/ui/state.json")
    assert after != state
    status, html, _ = get(base, "/ui/panels")
    assert status == 200
    assert "bolt-write" in html and "SEC.WRITE" in html and 'data-action="block"' in html
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "alice" in html  # who sent it


def test_console_false_turns_it_off(tmp_path: Path) -> None:
    with serve(tmp_path, console=False) as running:
        base = f"http://127.0.0.1:{running.server.http.port}"
        assert get(base, "/ui")[0] == 404
        assert get(base, "/health")[0] == 200
