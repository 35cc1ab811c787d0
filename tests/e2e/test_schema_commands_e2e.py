"""End to end through the Bolt proxy on the embedded FalkorDB with writes allowed: an index
command sent with comments and odd spacing creates the index, and the database ran the guard's
canonical rendering (the audit's `final_query`), not the client's text; an administration
command is refused (SEC.ADMIN) and reaches nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
import pytest
from neo4j import exceptions as nex

from query_guard.backend import collect
from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.runner import ProxyThread
from tests.e2e.test_e2e_falkordb import AUTH, proxy_config


def _indexed(proxy: ProxyThread) -> list[Any]:
    """FalkorDB's own list of indexes (label, properties), straight from the database."""

    async def run() -> list[Any]:
        backend = FalkorDBBackend(proxy.server.embedded.url)
        await backend.start()
        try:
            rows = await collect(await backend.run("CALL db.indexes() YIELD label, properties "
                                                   "RETURN label, properties", {}))
            return [tuple(r) for r in rows]
        finally:
            await backend.close()

    return proxy.call(run())


def test_index_command_runs_as_the_guard_printed_it(tmp_path: Path) -> None:
    config = proxy_config(tmp_path, read_only=False)
    sent = "CREATE INDEX /* for lookups by name */ FOR (n:Person)\n   ON ( n.name ) // done"
    with (
        ProxyThread(config) as proxy,
        neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=AUTH) as drv,
    ):
        before = _indexed(proxy)
        with drv.session() as session:
            session.run(sent).consume()
        after = _indexed(proxy)
        with drv.session() as session, pytest.raises(nex.Neo4jError) as info:
            session.run("CREATE USER eve SET PASSWORD 'pw' CHANGE NOT REQUIRED").consume()
    assert ("Person", ["name"]) not in before
    assert ("Person", ["name"]) in after
    assert info.value.code == "Neo.ClientError.Security.Forbidden"
    assert "SEC.ADMIN" in (info.value.message or "")
    lines = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    index, admin = [x for x in lines if x.get("event") == "query"]
    assert index["original"] == sent
    assert index["final_query"] == "CREATE INDEX FOR (n:Person) ON (n.name)"
    assert admin["verdict"] == "block" and admin["final_query"] is None
