"""The repair loop on the Bolt path: the real neo4j driver -> BoltFrontend (guard + repairer)
-> FalkorDBBackend -> the movie graph in a real FalkorDB."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import neo4j
import pytest
from neo4j import exceptions as nex

from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.repair.repairer import build_repairer
from tests.background_loop import BoltProxy
from tests.e2e.test_repair_falkordb import MOVIES

AUTH = ("neo4j", "password")
REVERSED = "MATCH (m {title: 'The Matrix'})-[:ACTED_IN]->(p) RETURN p.name AS name"
ACTORS = ["Carrie-Anne Moss", "Emil Eifrem", "Hugo Weaving", "Keanu Reeves", "Laurence Fishburne"]


def repairing_server(url: str) -> BoltProxy:
    """A Bolt proxy with the repair loop in front of the movie graph in FalkorDB."""
    config = parse_config({})
    guard = build_guard(config, MOVIES, entry_points=False)
    backend = FalkorDBBackend(url, read_only=True)
    return BoltProxy(guard, backend, repairer=build_repairer(guard, config))


@pytest.fixture(scope="module")
def server(movies_url: str) -> Iterator[BoltProxy]:
    srv = repairing_server(movies_url)
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def _quiet_driver_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_an_empty_query_is_repaired_and_the_summary_lists_the_attempts(
    server: BoltProxy,
) -> None:
    question = "Who acted in The Matrix?"
    with neo4j.GraphDatabase.driver(server.uri, auth=AUTH) as driver:
        records, summary, keys = driver.execute_query(
            neo4j.Query(REVERSED, metadata={"question": question})
        )
    assert keys == ["name"] and sorted(r["name"] for r in records) == ACTORS
    codes = [n["code"] for n in summary.notifications]
    assert "DIR.FLIPPED_ON_EMPTY" in codes and codes.count("REPAIR.ATTEMPT") == 2
    tried = [n["title"] for n in summary.notifications if n["code"] == "REPAIR.ATTEMPT"]
    assert (
        "(client): empty result" in tried[0] and "(tier1, DIR.FLIPPED_ON_EMPTY): rows" in tried[1]
    )
    event = server.events[-1]
    assert event["detail"]["tx_metadata"] == {"question": question}
    assert "<-[:ACTED_IN]-" in event["final_query"] and len(event["repair"]) == 2


def test_rows_at_once_stream_untouched_with_no_repair_notes(server: BoltProxy) -> None:
    with neo4j.GraphDatabase.driver(server.uri, auth=AUTH) as driver, driver.session() as s:
        result = s.run("MATCH (p:Person) RETURN p.name AS name ORDER BY name", fetch_size=10)
        names = [r["name"] for r in result]
        summary = result.consume()
    assert len(names) == 133 and names == sorted(names)
    assert not any(n["code"].startswith("REPAIR") for n in summary.notifications)
    assert server.events[-1]["repair"] is None


def test_the_loop_runs_for_empty_reads_inside_an_explicit_transaction(
    server: BoltProxy,
) -> None:
    with neo4j.GraphDatabase.driver(server.uri, auth=AUTH) as driver, driver.session() as s:
        tx = s.begin_transaction(metadata={"question": "who?"})
        result = tx.run("MATCH (p:Person {name: 'keanu reeves'}) RETURN p.born AS born")
        assert [r["born"] for r in result] == [1964]
        assert tx.run("RETURN 1 AS one").single()["one"] == 1
        tx.commit()


def test_errors_are_retried_in_auto_commit_only_and_still_reach_the_client(
    server: BoltProxy,
) -> None:
    with neo4j.GraphDatabase.driver(server.uri, auth=AUTH) as driver, driver.session() as s:
        with pytest.raises(nex.Neo4jError):
            s.run("MATCH (p:Person) RETURN p.name / 0 AS x").consume()
        assert s.run("RETURN 2 AS two").single()["two"] == 2


JESSICA = (
    "MATCH (p:Person {name: 'Jessica Thompson'})-[:FOLLOWS]->(f:Person) RETURN f.name AS name"
)
MUTUAL = "MATCH (a:Person)-[:FOLLOWS]->(b:Person)-[:FOLLOWS]->(a) RETURN a.name AS a, b.name AS b"


def test_a_correct_empty_answer_stays_empty_and_the_flip_is_only_suggested(
    server: BoltProxy,
) -> None:
    # "Who does Jessica Thompson follow?" Nobody: FOLLOWS is Person -> Person, so the reversed
    # arrow (her followers) is a different question, offered but not applied
    with neo4j.GraphDatabase.driver(server.uri, auth=AUTH) as driver:
        records, summary, _ = driver.execute_query(JESSICA)
    assert records == []
    codes = [n["code"] for n in summary.notifications]
    assert "DIR.FLIPPED_ON_EMPTY" not in codes
    (offer,) = [n for n in summary.notifications if n["code"] == "REPAIR.SUGGESTED"]
    assert "would return 2 row(s)" in offer["title"]
    assert "(p:Person {name: 'Jessica Thompson'})<-[:FOLLOWS]-(f:Person)" in offer["title"]
    assert server.events[-1]["final_query"].startswith(JESSICA)


def test_with_the_question_the_speculative_flip_is_applied_and_reported(
    server: BoltProxy,
) -> None:
    question = "Who follows Jessica Thompson?"
    with neo4j.GraphDatabase.driver(server.uri, auth=AUTH) as driver:
        records, summary, _ = driver.execute_query(
            neo4j.Query(JESSICA, metadata={"question": question})
        )
    assert sorted(r["name"] for r in records) == ["Angela Scope", "James Thompson"]
    flipped = [n for n in summary.notifications if n["code"] == "DIR.FLIPPED_ON_EMPTY"]
    assert flipped and "the client opted in" in flipped[0]["title"]


def test_a_mutual_pattern_is_never_flipped(server: BoltProxy) -> None:
    with neo4j.GraphDatabase.driver(server.uri, auth=AUTH) as driver:
        records, summary, _ = driver.execute_query(
            neo4j.Query(MUTUAL, metadata={"question": "Which people follow each other?"})
        )
    assert records == []
    codes = {n["code"] for n in summary.notifications}
    assert not codes & {"DIR.FLIPPED_ON_EMPTY", "REPAIR.SUGGESTED"}
    assert all("FOLLOWS]->(b:Person)-[:FOLLOWS]->(a)" in a["query"]
               for a in server.events[-1]["repair"] or [])  # fmt: skip
