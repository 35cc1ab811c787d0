"""Resource limits (issue 8) end to end: the real neo4j driver → query-guard (`ProxyThread`) →
the embedded FalkorDB it starts. Each limit triggers with its own code and a message that
names the `[limits]` key; the connection stays usable afterwards."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
from neo4j import exceptions as nex

from query_guard.config.load import parse_config
from query_guard.guard.hookspecs import hookimpl
from query_guard.runner import ProxyThread

AUTH = ("neo4j", "anything")
SLOW_MARKER = "slow_guard_marker"


class SlowRule:
    """A third-party rule that takes 3 s on one query (a stand-in for a pathological input)."""

    name = "slow_rule"

    @hookimpl
    def guard_text(self, text: str, language: str) -> list[Any]:
        if SLOW_MARKER in text:
            time.sleep(3)
        return []


def limits_config(data_dir: Path, **limits: Any) -> Any:
    return parse_config(
        {
            "server": {"bolt": "127.0.0.1:0", "data_dir": str(data_dir)},
            "audit": {"path": str(data_dir / "audit.jsonl")},
            "guard": {"default_limit": 20, "max_limit": 50},
            "limits": limits,
        }
    )


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyThread]:
    config = limits_config(
        tmp_path_factory.mktemp("limits"),
        max_query_bytes=4_000_000,
        max_query_tokens=0,  # the huge-query test needs a query the guard works on for seconds
        max_parameters=5,
        max_parameter_bytes=10_000,
        max_parameter_depth=3,
        max_message_elements=10_000,
        max_result_bytes=200_000,
        query_timeout_ms=300,
        guard_timeout_ms=1_000,
    )
    with ProxyThread(config, extra_plugins=(SlowRule(),)) as running:
        yield running


@pytest.fixture(scope="module")
def driver(proxy: ProxyThread) -> Iterator[neo4j.Driver]:
    with neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=AUTH) as drv:
        yield drv


def refused(driver: neo4j.Driver, query: str, **params: Any) -> nex.Neo4jError:
    """The error the proxy answers `query` with (the session stays usable: checked)."""
    with driver.session() as session:
        with pytest.raises(nex.Neo4jError) as caught:
            session.run(query, params).consume()
        assert session.run("RETURN 1 AS one").single(strict=True)["one"] == 1
    return caught.value


def audited(proxy: ProxyThread) -> str:
    """The audit log so far (flushed on the proxy's loop first: it writes lines in batches)."""

    async def flush() -> None:
        assert proxy.server.audit is not None
        proxy.server.audit.flush()

    proxy.call(flush())
    path = Path(str(proxy.server.config.audit["path"]))
    return path.read_text("utf-8") if path.exists() else ""


# ---------------------------------------------------------------- text: size and nesting


def test_deep_nesting_is_refused_before_the_backend(
    proxy: ProxyThread, driver: neo4j.Driver
) -> None:
    deep = "RETURN " + "(" * 25 + "1" + ")" * 25 + " AS deep"
    error = refused(driver, deep)
    assert "LIM.NESTING" in error.message and "max_nesting" in error.message
    events = [json.loads(line) for line in audited(proxy).splitlines()]
    event = next(e for e in events if e["original"] == deep)
    assert event["codes"] == ["LIM.NESTING"] and event["verdict"] == "block"
    assert event["final_query"] is None and event["backend_ms"] is None  # never ran
    with driver.session() as session:
        assert session.run("RETURN ((((1)))) AS ok").single(strict=True)["ok"] == 1


@pytest.mark.parametrize(
    "deep",
    [
        "RETURN " + "NOT " * 20 + "true AS x",
        "RETURN " + "CASE WHEN true THEN " * 20 + "1" + " END" * 20 + " AS x",
        "RETURN " + "[" * 20 + "1" + "]" * 20 + " AS x",
        "RETURN " + "{a: " * 20 + "1" + "}" * 20 + " AS x",
    ],
    ids=["not", "case", "lists", "maps"],
)
def test_every_kind_of_deep_expression_is_refused(driver: neo4j.Driver, deep: str) -> None:
    """Each of these stalls FalkorDB's parser for minutes (its time doubles per level)."""
    assert "LIM.NESTING" in refused(driver, deep).message


def test_nesting_counts_lists_maps_and_subqueries(driver: neo4j.Driver) -> None:
    query = (
        "MATCH (m:Movie) WHERE EXISTS { MATCH (m)<-[:ACTED_IN]-(p:Person) "
        "WHERE p.name IN [[[[[[[[[[[[[['x']]]]]]]]]]]]]] } RETURN m.title"
    )
    assert "LIM.NESTING" in refused(driver, query).message


def test_oversized_query_is_refused(driver: neo4j.Driver) -> None:
    query = "RETURN '" + "x" * 4_100_000 + "' AS big"
    error = refused(driver, query)
    assert "LIM.QUERY_SIZE" in error.message and "max_query_bytes" in error.message


# ---------------------------------------------------------------- parameters and messages


def test_too_many_parameters(driver: neo4j.Driver) -> None:
    params = {f"p{i}": i for i in range(6)}
    error = refused(driver, "RETURN $p0 AS x", **params)
    assert "LIM.PARAMETERS" in error.message and "max_parameters" in error.message


def test_parameters_too_large(driver: neo4j.Driver) -> None:
    error = refused(driver, "RETURN size($s) AS n", s="y" * 20_000)
    assert "LIM.PARAMETERS" in error.message and "max_parameter_bytes" in error.message


def test_parameters_nested_too_deeply(driver: neo4j.Driver) -> None:
    error = refused(driver, "RETURN $v AS v", v=[[[["deep"]]]])
    assert "LIM.PARAMETERS" in error.message and "max_parameter_depth" in error.message


def test_parameters_within_limits_run(driver: neo4j.Driver) -> None:
    with driver.session() as session:
        record = session.run("RETURN $a + size($b) AS n", a=1, b=[[1, 2], [3]]).single()
    assert record is not None and record["n"] == 3


def test_message_of_many_empty_maps_is_refused(driver: neo4j.Driver) -> None:
    """11,000 empty maps are 11 KB on the wire and would be 11,000 Python dicts."""
    error = refused(driver, "RETURN size($maps) AS n", maps=[{} for _ in range(11_000)])
    assert "LIM.MESSAGE_SIZE" in error.message and "max_message_elements" in error.message


# ---------------------------------------------------------------- results


def test_rows_beyond_max_limit_never_stream(driver: neo4j.Driver) -> None:
    """A LIMIT given as a parameter is not judged by the LIMIT rule: the stream cap holds."""
    with driver.session() as session:
        result = session.run("UNWIND range(1, 1000) AS i RETURN i LIMIT $n", n=1000)
        rows = [r["i"] for r in result]
        summary = result.consume()
    assert rows == list(range(1, 51))
    messages = [s.status_description for s in summary.gql_status_objects]
    assert any("LIM.RESULT_SIZE" in m and "max_result_rows" in m for m in messages)


def test_result_bytes_are_capped(driver: neo4j.Driver) -> None:
    with driver.session() as session:
        query = "UNWIND range(1, 40) AS i RETURN i, $pad AS pad LIMIT 40"
        result = session.run(query, pad="z" * 9_000)
        rows = list(result)
        summary = result.consume()
    assert 10 <= len(rows) < 40
    messages = [s.status_description for s in summary.gql_status_objects]
    assert any("max_result_bytes" in m for m in messages), messages


# ---------------------------------------------------------------- time


def test_backend_query_timeout(driver: neo4j.Driver) -> None:
    error = refused(driver, "MATCH (a), (b), (c), (d) RETURN count(*) AS n")
    assert "LIM.TIMEOUT" in error.message and "query_timeout_ms" in error.message
    assert not isinstance(error, nex.TransientError)  # drivers must not retry it


def test_guard_over_its_time_budget_blocks(driver: neo4j.Driver) -> None:
    error = refused(driver, f"RETURN 1 AS {SLOW_MARKER}")
    assert "LIM.TIMEOUT" in error.message and "guard_timeout_ms" in error.message


def test_huge_query_does_not_hold_up_other_clients(tmp_path: Path) -> None:
    """A 3 MB query keeps the guard busy for seconds (in its thread pool); meanwhile another
    client's trivial queries are answered (how fast is benchmarks' business, not this test's).
    Its own proxy, with a guard budget long enough that the window does not depend on how
    loaded the machine is."""
    config = limits_config(tmp_path, max_query_bytes=4_000_000, max_query_tokens=0,
                           guard_timeout_ms=20_000)  # fmt: skip
    with ProxyThread(config) as proxy, neo4j.GraphDatabase.driver(
        f"bolt://{proxy.address}", auth=AUTH
    ) as driver:
        _served_while_a_huge_query_is_judged(proxy, driver)


def _served_while_a_huge_query_is_judged(proxy: ProxyThread, driver: neo4j.Driver) -> None:
    item = "'" + "w" * 96 + "'"
    huge = "UNWIND [" + ", ".join([item] * 30_000) + "] AS x RETURN count(x) AS n"
    assert len(huge) > 3_000_000
    done = threading.Event()
    answered: list[bool] = []

    def send_huge() -> None:
        # LIM.TIMEOUT from the guard's budget, or the backend's: either is fine
        with driver.session() as session, contextlib.suppress(nex.Neo4jError):
            session.run(huge).consume()
        answered.append(True)  # rows or an error: either way, an answer
        done.set()

    url = f"bolt://{proxy.address}"
    with neo4j.GraphDatabase.driver(url, auth=AUTH) as other, other.session() as session:
        session.run("RETURN 1 AS one").consume()
        sender = threading.Thread(target=send_huge)
        sender.start()
        time.sleep(0.5)  # the huge message is on its way / being judged
        served_meanwhile = 0
        while not done.is_set() and served_meanwhile < 200:
            session.run("RETURN 1 AS one").consume()
            served_meanwhile += not done.is_set()  # answered before the huge query was
        sender.join(120)
    assert answered, "the huge query got no answer"
    assert served_meanwhile >= 3
