"""ArcadeDB ignores Bolt's `tx_timeout` and goes on running a query whose client the proxy
answered `LIM.TIMEOUT`: with the real ArcadeDB, the proxy refuses new queries at once
(`LIM.ABANDONED`) while `[limits] max_abandoned_queries` of them still run, instead of letting
them fill ArcadeDB's query slots (`arcadedb.queryMaxConcurrent`) so that every client waits in
its queue; the count drops when ArcadeDB finishes them. ArcadeDB's own
`arcadedb.command.timeout` is what really stops such a query, and the client then hears
`LIM.TIMEOUT` from it."""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import neo4j
import pytest

from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread

# 171^4 rows filtered one by one (a bare count(*) of a cartesian product ArcadeDB computes
# from the counts): runs for many minutes
HEAVY = "MATCH (a), (b), (c), (d) WHERE a.born + b.born + c.born + d.born = 1 RETURN count(*) AS n"
ORDINARY = "MATCH (m:Movie {title: 'The Matrix'}) RETURN m.released AS year"
COMMAND_TIMEOUT_MS = 6000  # ArcadeDB's own: stops HEAVY after 6 s
# a client that waited this long was queued behind abandoned queries (ArcadeDB's queue
# waits 30 s); answers and refusals take well under a second here
HANG = 15.0


@pytest.fixture(scope="module")
def arcadedb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """An ArcadeDB of its own (these tests keep its query threads busy), with 4 query slots as
    on a 2-core machine and its own command timeout."""
    from query_guard.backends.arcadedb import ArcadeDBServer, unavailable_reason

    reason = unavailable_reason()
    if reason:
        pytest.skip(f"ArcadeDB cannot run here: {reason}")
    settings = {"arcadedb.queryMaxConcurrent": 4,
                "arcadedb.command.timeout": COMMAND_TIMEOUT_MS}  # fmt: skip
    server = ArcadeDBServer(tmp_path_factory.mktemp("arcadedb-abandoned"), settings=settings)
    server.start()
    yield server
    server.stop()


def _proxy(arcadedb: Any, tmp: Path, timeout_ms: int) -> ProxyThread:
    config = parse_config(
        {
            "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp)},
            "backend": {"cypher": arcadedb.url, "database": arcadedb.database,
                        "credentials": "passthrough"},
            "limits": {"query_timeout_ms": timeout_ms, "max_abandoned_queries": 2},
            "repair": {"enabled": False},
        }
    )  # fmt: skip
    return ProxyThread(config)


def _run(proxy: ProxyThread, auth: tuple[str, str], query: str) -> tuple[str, float]:
    """One client's query: ("ok:<rows>" or the refusal's message, seconds it took)."""
    began = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=auth) as driver:
            try:
                with driver.session(database=None) as session:
                    rows = [r.values() for r in session.run(query)]
                return f"ok:{rows}", time.monotonic() - began
            except neo4j.exceptions.Neo4jError as exc:
                return str(exc.message), time.monotonic() - began


def _wait_settled(proxy: ProxyThread, deadline: float) -> int:
    backend = proxy.server.backend
    while backend.abandoned and time.monotonic() < deadline:
        time.sleep(0.2)
    return len(backend.abandoned)


def test_abandoned_reads_are_capped_and_others_are_never_queued_behind_them(
    arcadedb: Any, tmp_path: Path
) -> None:
    with _proxy(arcadedb, tmp_path, timeout_ms=1000) as proxy:
        auth = arcadedb.auth
        with ThreadPoolExecutor(4) as pool:  # four clients at once: ArcadeDB's four slots
            heavy = list(pool.map(lambda _: _run(proxy, auth, HEAVY), range(4)))
        for message, _ in heavy:
            assert message.startswith("LIM.TIMEOUT"), message
        assert len(proxy.server.backend.abandoned) == 4  # all still running in ArcadeDB
        message, took = _run(proxy, auth, ORDINARY)  # another client, at once
        assert message.startswith("LIM.ABANDONED"), message
        assert "max_abandoned_queries" in message and took < HANG
        # ArcadeDB's command timeout ends them; each one that ends frees its place
        assert _wait_settled(proxy, time.monotonic() + 3 * COMMAND_TIMEOUT_MS / 1000) == 0
        message, took = _run(proxy, auth, ORDINARY)
        assert message == "ok:[[1999]]" and took < HANG


def test_below_the_cap_other_clients_are_answered_while_abandoned_reads_run(
    arcadedb: Any, tmp_path: Path
) -> None:
    with _proxy(arcadedb, tmp_path, timeout_ms=1000) as proxy:
        auth = arcadedb.auth
        message, _ = _run(proxy, auth, HEAVY)
        assert message.startswith("LIM.TIMEOUT"), message
        assert len(proxy.server.backend.abandoned) == 1
        message, took = _run(proxy, auth, ORDINARY)  # a slot is still free in ArcadeDB
        assert message == "ok:[[1999]]" and took < HANG
        assert _wait_settled(proxy, time.monotonic() + 3 * COMMAND_TIMEOUT_MS / 1000) == 0


def test_arcadedbs_own_command_timeout_stops_the_query_and_is_reported_as_a_timeout(
    arcadedb: Any, tmp_path: Path
) -> None:
    # the proxy would wait 15 s: ArcadeDB stops the query at its 6 s first
    with _proxy(arcadedb, tmp_path, timeout_ms=10_000) as proxy:
        message, _ = _run(proxy, arcadedb.auth, HEAVY)
        assert message.startswith("LIM.TIMEOUT"), message
        assert not proxy.server.backend.abandoned  # nothing left running upstream
        assert _run(proxy, arcadedb.auth, ORDINARY)[0] == "ok:[[1999]]"
