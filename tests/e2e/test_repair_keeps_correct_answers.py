"""Correct answers stay correct: the movie-graph reads of the public text2cypher corpus that
FalkorDB runs as written — empty answers included — return the same rows through the Bolt
proxy with the repair loop at its defaults (no question sent) as straight from the database.
Queries the guard's schema rules rewrite (a reversed arrow) are wrong as written: left out."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from typing import Any

import neo4j
import pytest

from query_guard.backend import BackendError, collect
from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.build import build_guard
from query_guard.config.load import parse_config
from tests.background_loop import BoltProxy
from tests.corpora import read_csv
from tests.e2e.test_e2e_falkordb import canon_rows, driver_rows
from tests.e2e.test_repair_bolt import AUTH, repairing_server
from tests.e2e.test_repair_falkordb import MOVIES


def correct_reads(url: str) -> list[tuple[str, list[Any]]]:
    """(query, its rows straight from FalkorDB) for every corpus query that runs there and
    that the guard forwards with at most a LIMIT added."""
    rows = read_csv("cypher", "text2cypher", "text2cypher_gpt4turbo.csv")
    guard = build_guard(parse_config({}), MOVIES, entry_points=False)

    async def run_all() -> list[tuple[str, list[Any]]]:
        backend = FalkorDBBackend(url, read_only=True)
        out = []
        try:
            for row in rows:
                query = row["cypher"]
                if row["database"] != "movies":
                    continue
                verdict = guard.check(query)
                if verdict.blocked or any(not f.code.startswith("LIM.") for f in verdict.findings
                                          if f.fix):  # fmt: skip
                    continue
                try:
                    out.append((query, await collect(await backend.run(query, {}))))
                except BackendError:
                    continue  # a dialect FalkorDB lacks: not a correct read here
        finally:
            await backend.close()
        return out

    return asyncio.run(run_all())


@pytest.fixture(scope="module")
def server(movies_url: str) -> Iterator[BoltProxy]:
    srv = repairing_server(movies_url)
    yield srv
    srv.stop()


def test_no_correct_answer_changes_through_the_repairing_proxy(
    movies_url: str, server: BoltProxy
) -> None:
    reads = correct_reads(movies_url)
    assert len(reads) > 500 and sum(not rows for _, rows in reads) > 100  # empties included
    changed = []
    with warnings.catch_warnings(), neo4j.GraphDatabase.driver(server.uri, auth=AUTH) as driver:
        warnings.simplefilter("ignore")
        for query, direct in reads:
            with driver.session() as session:
                got = driver_rows(list(session.run(query)))
            if canon_rows("", got) != canon_rows("", direct):
                changed.append(query)
    assert changed == []
    assert any(e.get("repair") for e in server.events)  # the loop did try the empty ones
