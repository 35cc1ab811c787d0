"""The Gremlin front applies the Bolt front's `[limits]` (bindings bounds, the guard's time
budget, `query_guard.run.guard_pool`) and reports like it: findings reach the client (status
attributes), the audit line and the Prometheus metrics carry the same fields and labels."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gremlin_python.driver.client import Client
from gremlin_python.driver.protocol import GremlinServerError

from query_guard.config.load import parse_config
from query_guard.guard.hookspecs import hookimpl
from query_guard.runner import ProxyThread
from tests.corpora import DATA

SLOW_MARKER = "slow_guard_marker"


class SlowRule:
    """A third-party rule that takes 3 s on one traversal (a pathological input)."""

    name = "slow_rule"

    @hookimpl
    def guard_text(self, text: str, language: str) -> list[Any]:
        if SLOW_MARKER in text:
            time.sleep(3)
        return []


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyThread]:
    data = tmp_path_factory.mktemp("gremlin-limits")
    config = parse_config(
        {
            "server": {"bolt": "", "gremlin": "127.0.0.1:0", "data_dir": str(data)},
            "backend": {"gremlin_data": [str(DATA / "tinkerpop-modern.json")]},
            "audit": {"path": str(data / "audit.jsonl")},
            "limits": {"max_parameters": 2, "max_parameter_bytes": 1000,
                       "guard_timeout_ms": 500},
        }
    )  # fmt: skip
    with ProxyThread(config, extra_plugins=(SlowRule(),)) as running:
        yield running


@pytest.fixture
def client(proxy: ProxyThread) -> Iterator[Client]:
    c = Client(f"ws://127.0.0.1:{proxy.server.gremlin.port}/gremlin", "g")
    yield c
    c.close()


def _audit(proxy: ProxyThread, needle: str) -> dict[str, Any]:
    proxy.call(asyncio.sleep(0.05))  # the audit log writes its lines every 10 ms
    proxy.server.audit.flush()
    lines = [json.loads(x) for x in Path(proxy.server.audit.path).read_text().splitlines()]
    return next(x for x in reversed(lines) if needle in (x.get("original") or ""))


def test_too_many_bindings_are_refused(client: Client, proxy: ProxyThread) -> None:
    text = "g.V().has('name', a).has('age', b).has('lang', c).values('name')"
    with pytest.raises(GremlinServerError, match=r"(?s)597.*LIM\.PARAMETERS.*max_parameters"):
        client.submit(text, {"a": "marko", "b": 29, "c": "x"}).all().result()
    line = _audit(proxy, "has('lang', c)")
    assert line["verdict"] == "block" and line["codes"] == ["LIM.PARAMETERS"]
    assert line["front"] == "gremlin" and line["final_query"] is None
    assert "parameters" not in line  # left out of the audit unless include_parameters


def test_oversized_bindings_are_refused(client: Client) -> None:
    with pytest.raises(GremlinServerError, match=r"(?s)LIM\.PARAMETERS.*max_parameter_bytes"):
        client.submit("g.V().has('name', a).values('age')", {"a": "x" * 5000}).all().result()


def test_guard_over_its_time_budget_blocks(client: Client) -> None:
    text = f"g.V().has('name', '{SLOW_MARKER}').values('age')"
    with pytest.raises(GremlinServerError, match=r"(?s)597.*LIM\.TIMEOUT.*guard_timeout_ms"):
        client.submit(text).all().result()


def test_rewrite_findings_reach_the_client(client: Client, proxy: ProxyThread) -> None:
    # created is declared person -> software: the guard reverses out('created') from software
    result = client.submit("g.V().hasLabel('software').out('created').values('name')")
    assert sorted(result.all().result()) == ["josh", "josh", "marko", "peter"]
    attributes = result.status_attributes
    codes = [f["code"] for f in attributes["findings"]]
    assert "DIR.REVERSED" in codes
    assert any(w.startswith("DIR.REVERSED warning") for w in attributes["warnings"])
    line = _audit(proxy, "hasLabel('software').out('created')")
    assert line["verdict"] == "rewrite" and "DIR.REVERSED" in line["codes"]
    assert line["user"] is None and line["client"] and line["guard_ms"] is not None


def test_metrics_labels_match_the_bolt_side(client: Client, proxy: ProxyThread) -> None:
    client.submit("g.V().has('name', 'marko').in('created').values('name')").all().result()
    metrics = proxy.server.metrics.render().decode()
    assert 'query_guard_queries_total{front="gremlin",language="gremlin",verdict="' in metrics
    assert 'query_guard_findings_total{code="DIR.FLIPPED_ON_EMPTY",front="gremlin"}' in metrics
    assert 'query_guard_repairs_total{front="gremlin"}' in metrics
    assert 'query_guard_guard_seconds_count{front="gremlin"}' in metrics
