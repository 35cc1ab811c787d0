"""`range()` bounded by `[limits] max_range_size` (plugins/range_limits.py): literal bounds
above it are refused (`LIM.RANGE`), computed bounds are rewritten to stay within it
(`LIM.CAPPED`) and build the same list below it — run on the real FalkorDB — and ordinary
ranges are left as written."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard
from query_guard.model import Action

CAP = 100


def guard(cap: int = CAP) -> Guard:
    return build_guard(parse_config({"limits": {"max_range_size": cap}}))


def falkordb_list(server: Any, query: str, n: int | None) -> list[int]:
    """The one list the query returns, run read-only on the session's FalkorDB."""
    text = query if n is None else f"CYPHER n={n} {query}"
    with redis.Redis(host=server.host, port=server.port) as client:
        reply = client.execute_command("GRAPH.RO_QUERY", "movies", text)
    value = reply[1][0][0]
    return [int(v) for v in json.loads(value.decode() if isinstance(value, bytes) else value)]


@pytest.mark.parametrize(
    ("query", "size"),
    [
        ("RETURN range(1, 2000000000)", "2000000000"),
        ("RETURN range(0, 100)", "101"),
        ("RETURN range(10, -1000, -1)", "1011"),
        ("UNWIND [x IN range(-5, 500, 2) | x * 2] AS y RETURN y", "253"),
        ("MATCH (m:Movie) RETURN m.title, RANGE(0, 9999999) AS xs", "10000000"),
    ],
)
def test_a_range_of_literal_bounds_above_the_limit_is_refused(query: str, size: str) -> None:
    verdict = guard().check(query)
    assert verdict.blocked and "LIM.RANGE" in verdict.codes, verdict.findings
    message = next(f.message for f in verdict.findings if f.code == "LIM.RANGE")
    assert f"builds {size} elements" in message and "max_range_size" in message


@pytest.mark.parametrize(
    "query",
    ["RETURN range(0, 10)", "RETURN range(1, 100)", "RETURN range(99, 0, -1)",
     "UNWIND range(0, 9) AS i RETURN i", "RETURN range(0, 10, 0)"],
)  # fmt: skip
def test_ordinary_ranges_are_left_as_written(query: str) -> None:
    verdict = guard().check(query)
    assert verdict.query.startswith(query) and not verdict.blocked  # (a LIMIT may be appended)
    assert "LIM.RANGE" not in verdict.codes and "LIM.CAPPED" not in verdict.codes


def test_a_step_known_only_at_run_time_is_refused() -> None:
    verdict = guard().check("RETURN range(0, 10, $step)")
    assert verdict.blocked and verdict.codes == ["LIM.RANGE"]
    assert "step known only when the query runs" in verdict.findings[0].message


@pytest.mark.parametrize(
    ("query", "below", "above", "first"),
    [
        ("RETURN range(0, $n)", 7, 5000, range(0, 100)),
        ("RETURN range(3, $n * 2, 3)", 20, 10**9, range(3, 303, 3)),
        ("RETURN range($n, 0, -2)", 30, 10**6, range(10**6, 10**6 - 200, -2)),
        ("RETURN range(0, CASE WHEN 1 > 0 THEN $n ELSE 1 END)", 50, 10**7, range(0, 100)),
    ],
)
def test_a_computed_bound_is_bounded_and_builds_the_same_list_below_the_limit(
    falkordb_server: Any, query: str, below: int, above: int, first: range
) -> None:
    g = guard()
    verdict = g.check(query)
    assert verdict.action is Action.REWRITE and verdict.codes == ["LIM.CAPPED"]
    assert "max_range_size" in verdict.findings[0].message
    assert g.check(verdict.query).action is Action.ALLOW  # a fixed point
    assert falkordb_list(falkordb_server, verdict.query, below) == falkordb_list(
        falkordb_server, query, below
    )
    # above the limit: the first CAP elements of the list asked for (never built whole here)
    assert falkordb_list(falkordb_server, verdict.query, above) == list(first)


def test_a_look_alike_of_the_bound_is_bounded_again() -> None:
    verdict = guard().check("RETURN range(0, CASE WHEN 1 > 0 THEN 2000000000 ELSE 1 END)")
    assert verdict.codes == ["LIM.CAPPED"]
    assert "> 99 THEN 0 + 99" in verdict.query


def test_zero_switches_the_limit_off() -> None:
    verdict = guard(0).check("RETURN range(1, 2000000000)")
    assert verdict.action is Action.ALLOW
