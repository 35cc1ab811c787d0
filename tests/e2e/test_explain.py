"""EXPLAIN is answered by the proxy and never executed; PROFILE runs like the bare query.
The real neo4j driver -> BoltFrontend (guard) -> FalkorDBBackend -> a real FalkorDB."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import neo4j
import pytest
from neo4j import exceptions as nex

from query_guard.backends.falkordb import FalkorDBBackend, plan_tree
from query_guard.build import build_guard
from query_guard.compat.explain import explained_statement
from query_guard.config.load import parse_config
from tests.background_loop import BoltProxy
from tests.e2e.test_repair_falkordb import MOVIES

AUTH = ("neo4j", "password")
MATCH = "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) WHERE p.name = $name RETURN m.title AS title"


def guard_server(url: str, read_only: bool) -> BoltProxy:
    """A Bolt proxy in front of one FalkorDB graph, guarded with `[guard]` options."""
    guard = build_guard(parse_config({"guard": {"read_only": read_only}}), MOVIES)
    return BoltProxy(guard, FalkorDBBackend(url, read_only=read_only))


@pytest.fixture(autouse=True)
def _quiet_driver_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture
def writable(fresh_movie_graph: tuple[str, str]) -> Iterator[BoltProxy]:
    srv = guard_server(fresh_movie_graph[1], read_only=False)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def read_only(movies_url: str) -> Iterator[BoltProxy]:
    srv = guard_server(movies_url, read_only=True)
    yield srv
    srv.stop()


def _count(driver: neo4j.Driver, label: str) -> int:
    records, _, _ = driver.execute_query(f"MATCH (n:{label}) RETURN count(n) AS c")
    return int(records[0]["c"])


def test_explain_of_a_read_answers_type_r_with_falkordbs_plan_and_no_parameters(
    read_only: BoltProxy,
) -> None:
    with neo4j.GraphDatabase.driver(read_only.uri, auth=AUTH) as driver:
        records, summary, keys = driver.execute_query("EXPLAIN " + MATCH)  # no $name given
    assert records == [] and keys == []
    assert summary.query_type == "r"
    plan = summary.plan
    assert plan is not None and plan["operatorType"] == "Results"
    operators = []
    while plan:
        operators.append(plan["operatorType"])
        plan = plan["children"][0] if plan["children"] else None
    assert "Node By Label Scan" in operators
    assert read_only.events[-1]["detail"]["explain"] is True


def test_read_only_answers_explain_of_a_write_as_type_w_and_runs_nothing(
    read_only: BoltProxy,
) -> None:
    with neo4j.GraphDatabase.driver(read_only.uri, auth=AUTH) as driver:
        records, summary, _ = driver.execute_query("EXPLAIN CREATE (:Probe {n: 1})")
        assert records == [] and summary.query_type == "w"
        _, merged, _ = driver.execute_query("EXPLAIN MATCH (p:Person) SET p.x = 1 RETURN p")
        assert merged.query_type == "rw"
        for write in ("MATCH (p:Probe) DETACH DELETE p", "MATCH (p:Person) SET p.x = 1"):
            _, summary, _ = driver.execute_query("EXPLAIN " + write)  # returns no records
            assert summary.query_type == "w", write
        assert _count(driver, "Probe") == 0
        with pytest.raises(nex.Neo4jError) as refused:  # the bare write is still blocked
            driver.execute_query("CREATE (:Probe {n: 1})")
    assert "SEC.WRITE" in str(refused.value.message)


def test_explain_keeps_the_other_security_checks(read_only: BoltProxy) -> None:
    with neo4j.GraphDatabase.driver(read_only.uri, auth=AUTH) as driver:
        for query in ("EXPLAIN CALL dbms.killQuery('x')", "EXPLAIN RETURN 1; MATCH (n) DELETE n"):
            with pytest.raises(nex.Neo4jError):
                driver.execute_query(query)


def test_explain_of_a_write_with_writes_allowed_creates_nothing(writable: BoltProxy) -> None:
    with neo4j.GraphDatabase.driver(writable.uri, auth=AUTH) as driver:
        _, summary, _ = driver.execute_query("EXPLAIN CREATE (:Probe {n: 1})")
        assert summary.query_type == "w" and summary.plan is not None
        assert _count(driver, "Probe") == 0
        _, profiled, _ = driver.execute_query("PROFILE MATCH (m:Movie) RETURN count(m) AS c")
        assert profiled.query_type == "r"
        driver.execute_query("CREATE (:Probe {n: 1})")  # writes are allowed here
        assert _count(driver, "Probe") == 1


def test_explain_of_a_schema_command_creates_no_index(writable: BoltProxy) -> None:
    with neo4j.GraphDatabase.driver(writable.uri, auth=AUTH) as driver:
        _, summary, _ = driver.execute_query(
            "EXPLAIN CREATE INDEX qg_explain_probe FOR (n:ExplainProbe) ON (n.name)"
        )
        assert summary.query_type == "s"
        indexes, _, _ = driver.execute_query("SHOW INDEXES YIELD name, labelsOrTypes")
    assert not [i for i in indexes if "ExplainProbe" in (i["labelsOrTypes"] or [])]


def test_explain_gets_no_limit_and_a_verdict_says_what_it_is() -> None:
    guard = build_guard(parse_config({}), MOVIES)
    explained = guard.check("EXPLAIN MATCH (m:Movie) RETURN m")
    assert explained.explain and explained.query_type == "r" and explained.codes == []
    profiled = guard.check("PROFILE MATCH (m:Movie) RETURN m")
    assert not profiled.explain and "LIM.INJECTED" in profiled.codes


def test_explained_statement_and_plan_tree() -> None:
    assert explained_statement("// why\n  explain MATCH (n) RETURN n") == "MATCH (n) RETURN n"
    assert explained_statement("MATCH (n) RETURN n") is None
    tree = plan_tree(["Results", "    Project", "        Scan | (n:A)", "    Filter"])
    assert tree is not None
    assert [c["operatorType"] for c in tree["children"]] == ["Project", "Filter"]
    assert tree["children"][0]["children"][0]["args"] == {"details": "(n:A)"}
