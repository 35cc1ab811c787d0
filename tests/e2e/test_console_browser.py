"""The operator console in a real headless browser: Debian's Chromium driven by Playwright,
`query-guard serve` with `[server] users` on the embedded FalkorDB (movie graph), Bolt and HTTP
listeners. The page loads without a console error (a Content-Security-Policy violation would be
one), a query the guard refuses through Bolt (the real neo4j driver) appears within 2 s, a
rewritten one shows its diff, and markup in a query's text stays text.

Chromium comes from Debian (`apt-get install chromium`, which .ci/run does); where it is not
installed the tests skip with a message."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest

from query_guard.config.auth import hash_password
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread

CHROMIUM = Path("/usr/bin/chromium")
# the network here is closed: nothing in the background, no sandbox (root in CI), no GPU
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
APPEARS_MS = 2000  # a query shows on the open page within this


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyThread]:
    data = tmp_path_factory.mktemp("console-browser")
    config = parse_config({
        "server": {"bolt": "127.0.0.1:0", "http": "127.0.0.1:0", "data_dir": str(data),
                   "users": {"alice": hash_password("wonderland", n=2**10)}},
        "audit": {"path": str(data / "audit.jsonl")},
    })  # fmt: skip
    with ProxyThread(config) as running:
        yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Chromium context with a fresh profile that answers the proxy's Basic challenge."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium chromium-driver)")
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=FLAGS,
            http_credentials={"username": "alice", "password": "wonderland"},
            viewport={"width": 1280, "height": 900},
        )  # fmt: skip
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="module")
def page(proxy: ProxyThread, browser: Any) -> Iterator[tuple[Any, list[str]]]:
    """The console, open; the console errors and uncaught exceptions it has logged."""
    errors: list[str] = []
    tab = browser.new_page()
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.goto(f"http://127.0.0.1:{proxy.server.http.port}/ui")
    tab.wait_for_selector("#panels")
    yield tab, errors
    tab.close()


def bolt(proxy: ProxyThread, query: str) -> None:
    """Run `query` through the Bolt front with the real driver; a refusal is no failure here."""
    driver = neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=("alice", "wonderland"))
    with driver, contextlib.suppress(neo4j.exceptions.ClientError):
        driver.execute_query(query)


def test_the_page_loads_without_console_errors(page: tuple[Any, list[str]]) -> None:
    tab, errors = page
    assert tab.title() == "query-guard console"
    tab.wait_for_timeout(1500)  # a few polls
    assert tab.locator("#live").inner_text() == "live"
    assert errors == []


def test_a_query_refused_through_bolt_appears_within_2_s(
    proxy: ProxyThread, page: tuple[Any, list[str]]
) -> None:
    tab, errors = page
    marker = f"intruder-{secrets.token_hex(4)}"
    bolt(proxy, f"CREATE (:Intruder {{marker: '{marker}'}})")
    refused = tab.locator("article.query.block", has_text=marker)
    refused.wait_for(timeout=APPEARS_MS)
    assert "SEC.WRITE" in refused.inner_text()
    assert refused.locator(".nothing").inner_text() == "nothing: refused"
    assert errors == []


def test_a_rewrite_shows_its_diff(
    proxy: ProxyThread, page: tuple[Any, list[str]], tmp_path: Path
) -> None:
    tab, errors = page
    alias = f"actor_{secrets.token_hex(3)}"
    bolt(proxy, f"MATCH (m:Movie {{title: 'The Matrix'}})-[:ACTED_IN]->(p:Person) "
                f"RETURN p.name AS {alias}")  # fmt: skip
    rewritten = tab.locator("article.query.rewrite", has_text=alias)
    rewritten.wait_for(timeout=APPEARS_MS)
    assert "DIR.REVERSED" in rewritten.inner_text()
    inserted = rewritten.locator("pre.forwarded ins").all_inner_texts()
    deleted = rewritten.locator("pre.client del").all_inner_texts()
    assert "<-" in inserted and "->" in deleted
    shot = tmp_path / "console.png"
    tab.screenshot(path=str(shot), full_page=False)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert errors == []


def test_markup_in_a_query_stays_text(proxy: ProxyThread, page: tuple[Any, list[str]]) -> None:
    tab, errors = page
    marker = secrets.token_hex(4)
    bolt(proxy, f"RETURN '<img src=x id=m{marker} onerror=alert(1)><b>{marker}</b>' AS x")
    shown = tab.locator("article.query", has_text=f"<b>{marker}</b>")
    shown.wait_for(timeout=APPEARS_MS)
    assert tab.locator(f"#m{marker}").count() == 0 and shown.locator("b").count() == 0
    assert errors == []
