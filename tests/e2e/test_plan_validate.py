"""Plan validation as an LLM app sees it: `POST /v1/plan/validate` against `query-guard serve`
(HTTP listener, embedded FalkorDB with the movie graph, `[plan]` configured), one test per
error class; the MCP tool `validate_plan` is in tests/test_mcp_front.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from tests.e2e.test_http_front import call

GOOD = "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) RETURN m.title LIMIT 5"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("plan")
    config = parse_config({
        "server": {"bolt": "", "http": "127.0.0.1:0", "data_dir": str(data)},
        "audit": {"path": str(data / "audit.jsonl")},
        "plan": {"routes": {"movies": "cypher"}, "max_depth": 3},
        "experience": {"enabled": False},
    })  # fmt: skip
    with ProxyThread(config) as proxy:
        yield f"http://127.0.0.1:{proxy.server.http.port}"


def branch(id: str, query: str = GOOD, route: str = "cypher", *deps: str) -> dict[str, Any]:
    return {"id": id, "route": route, "depends_on": list(deps), "query": query}


def validate(base: str, *branches: dict[str, Any]) -> dict[str, Any]:
    status, answer = call(base, "POST", "/v1/plan/validate", {"branches": list(branches)})
    assert status == 200, answer
    return answer  # type: ignore[no-any-return]


def codes(answer: dict[str, Any]) -> list[tuple[str | None, str]]:
    return [(e["branch"], e["code"]) for e in answer["errors"]]


def test_a_valid_plan_reports_every_branch_verdict(base: str) -> None:
    answer = validate(
        base,
        branch("actors", GOOD),
        branch("reversed", "MATCH (m:Movie)-[:ACTED_IN]->(p:Person) RETURN p.name LIMIT 3",
               "movies", "actors"),  # a named route; the arrow is fixed, not an error
        branch("count", "MATCH (m:Movie) RETURN count(m) AS n", "cypher", "actors", "reversed"),
    )  # fmt: skip
    assert answer["valid"] is True and answer["errors"] == []
    rows = {b["id"]: b for b in answer["branches"]}
    assert rows["actors"]["action"] == "allow"
    assert rows["reversed"]["action"] == "rewrite"
    assert "(m:Movie)<-[:ACTED_IN]-(p:Person)" in rows["reversed"]["query"]
    assert [f["code"] for f in rows["reversed"]["findings"]] == ["DIR.REVERSED"]


def test_duplicate_ids(base: str) -> None:
    answer = validate(base, branch("a"), branch("a"))
    assert answer["valid"] is False
    assert codes(answer) == [("a", "PLAN.DUPLICATE_ID")]
    assert "2 branches have the id 'a'" in answer["errors"][0]["message"]


def test_unknown_dependency_names_the_ids_there_are(base: str) -> None:
    answer = validate(base, branch("actors"), branch("b", GOOD, "cypher", "actor"))
    assert codes(answer) == [("b", "PLAN.UNKNOWN_DEPENDENCY")]
    message = answer["errors"][0]["message"]
    assert "'actor'" in message and "did you mean 'actors'" in message
    assert "ids in this plan: actors, b" in message


def test_a_cycle_is_reported_with_its_path(base: str) -> None:
    answer = validate(
        base, branch("a", GOOD, "cypher", "c"), branch("b", GOOD, "cypher", "a"),
        branch("c", GOOD, "cypher", "b"), branch("d", GOOD, "cypher", "d"),
    )  # fmt: skip
    assert codes(answer) == [("a", "PLAN.CYCLE"), ("d", "PLAN.CYCLE")]
    assert "a -> c -> b -> a" in answer["errors"][0]["message"]
    assert "d -> d" in answer["errors"][1]["message"]


def test_unknown_route_lists_the_routes(base: str) -> None:
    answer = validate(base, branch("a", GOOD, "cyper"), branch("b", GOOD, "neo4j"))
    assert codes(answer) == [("a", "PLAN.UNKNOWN_ROUTE"), ("b", "PLAN.UNKNOWN_ROUTE")]
    assert "did you mean 'cypher'" in answer["errors"][0]["message"]
    assert "cypher, gremlin, sql, movies" in answer["errors"][1]["message"]
    assert {b["action"] for b in answer["branches"]} == {"unchecked"}


def test_a_chain_deeper_than_max_depth(base: str) -> None:
    answer = validate(
        base, branch("a"), branch("b", GOOD, "cypher", "a"), branch("c", GOOD, "cypher", "b"),
        branch("d", GOOD, "cypher", "c"),
    )  # fmt: skip
    assert codes(answer) == [("d", "PLAN.DEPTH")]
    assert "a -> b -> c -> d is 4 branches deep, more than the 3 allowed" in (
        answer["errors"][0]["message"]
    )


def test_empty_plan_and_empty_query(base: str) -> None:
    assert codes(validate(base)) == [(None, "PLAN.EMPTY")]
    answer = validate(base, branch("a", "  "))
    assert codes(answer) == [("a", "PLAN.EMPTY")]
    assert answer["branches"][0]["action"] == "unchecked"


def test_blocked_branches_report_their_findings_per_language(base: str) -> None:
    answer = validate(
        base,
        branch("write", "MATCH (n) DETACH DELETE n"),
        branch("g", "g.V().hasLabel('case').drop()", "gremlin"),
        branch("s", "DELETE FROM customers", "sql"),
        branch("ok", "SELECT 1 AS one", "sql", "write", "g", "s"),
    )  # fmt: skip
    assert answer["valid"] is False
    assert {(b, c) for b, c in codes(answer)} == {
        ("write", "SEC.WRITE"), ("g", "SEC.WRITE"), ("s", "SEC.WRITE")
    }  # fmt: skip
    assert "branch 'write':" in answer["errors"][0]["message"]
    actions = {b["id"]: b["action"] for b in answer["branches"]}
    assert actions == {"write": "block", "g": "block", "s": "block", "ok": "rewrite"}


def test_a_body_that_is_no_plan_is_a_400_naming_the_field(base: str) -> None:
    status, answer = call(base, "POST", "/v1/plan/validate", {"branches": [{"id": 1}]})
    assert status == 400
    assert answer["errors"][0]["message"] == "branches[0].id must be a string"
    status, answer = call(base, "POST", "/v1/plan/validate", {"plan": []})
    assert status == 400 and "branches" in answer["errors"][0]["message"]


def test_too_many_branches(base: str) -> None:
    answer = validate(base, *(branch(f"b{n}") for n in range(33)))
    assert codes(answer) == [(None, "PLAN.SIZE")]
    assert "33 branches, more than the 32 allowed" in answer["errors"][0]["message"]
