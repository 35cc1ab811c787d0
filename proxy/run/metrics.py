"""Prometheus metrics of one `ProxyServer` (prometheus-client, a registry per server, no
global state), fed by the same per-query events the audit log writes.

* `query_guard_queries_total{front, language, verdict}` — every query a front handled
* `query_guard_findings_total{front, code}` — findings by taxonomy code
* `query_guard_repair_attempts_total{front}` / `query_guard_repairs_total{front}` — repair loop
  attempts, and queries whose answer came from a repaired query
* `query_guard_errors_total{front, code}` — database errors by status code
* `query_guard_guard_seconds{front}` / `query_guard_backend_seconds{front}` — latency
* `query_guard_open_connections{front}` — connections open now (read when scraped)
* `query_guard_experience_examples` — examples in the experience library (DESIGN §10)
* `query_guard_experience_hits_total` — examples served as context
* `query_guard_experience_feedback_total{outcome}` — "correct" / "wrong" reports
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

CONTENT_TYPE = CONTENT_TYPE_LATEST
APPLY_EVERY = 256  # queries counted between two hand-overs to prometheus-client
_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)


class Metrics:
    """Call it with each query event (it is an `on_query` hook); `render()` for `/metrics`."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.queries = Counter(
            "query_guard_queries", "Queries handled", ["front", "language", "verdict"], registry=r
        )
        self.findings = Counter(
            "query_guard_findings", "Findings by taxonomy code", ["front", "code"], registry=r
        )
        self.repair_attempts = Counter(
            "query_guard_repair_attempts", "Repair loop attempts", ["front"], registry=r
        )
        self.repairs = Counter(
            "query_guard_repairs", "Answers that came from a repaired query", ["front"], registry=r
        )
        self.errors = Counter(
            "query_guard_errors", "Database errors by status code", ["front", "code"], registry=r
        )
        self.guard_seconds = Histogram(
            "query_guard_guard_seconds", "Time in the guard", ["front"], buckets=_BUCKETS,
            registry=r,
        )  # fmt: skip
        self.backend_seconds = Histogram(
            "query_guard_backend_seconds", "Time in the database", ["front"], buckets=_BUCKETS,
            registry=r,
        )  # fmt: skip
        self.connections = Gauge(
            "query_guard_open_connections", "Open client connections", ["front"], registry=r
        )
        self.experience_examples = Gauge(
            "query_guard_experience_examples", "Examples in the experience library", registry=r
        )
        self.experience_hits = Counter(
            "query_guard_experience_hits", "Examples served as context", registry=r
        )
        self.experience_feedback = Counter(
            "query_guard_experience_feedback", "Feedback reports on query ids", ["outcome"],
            registry=r,
        )  # fmt: skip
        # Per query, the hook only counts the query's signature (`_seen`: labels, codes,
        # durations; equal ones together), which becomes plain dicts (`_counts`: increments
        # by (metric, label values); `_observed`: durations by histogram and front) and then
        # the prometheus-client metrics when scraped (`render`) or every APPLY_EVERY queries.
        # prometheus-client's `labels()`, `inc()` and `observe()` (argument checks, a lock
        # each, a walk over the buckets) cost more per query than the rest of this hook.
        self._counts: dict[tuple[Any, ...], float] = {}
        self._seen: dict[tuple[Any, ...], int] = {}  # query signatures (`__call__`) -> times
        self._observed: dict[tuple[Any, str], list[float]] = {}
        self._children: dict[tuple[Any, ...], Any] = {}
        self._queued = 0

    def _child(self, metric: Any, *values: str) -> Any:
        key = (id(metric), *values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    def watch_connections(self, front: str, count: Callable[[], float]) -> None:
        self.connections.labels(front=front).set_function(count)

    def __call__(self, event: Mapping[str, Any]) -> None:
        get = event.get
        repair = get("repair")
        if repair:
            self._repaired(event, str(get("front") or "bolt"), repair)
        codes = get("codes")
        # what the counters and histograms take of it; equal ones are counted together
        key = (
            get("front"), get("language"), get("action"), tuple(codes) if codes else (),
            get("error"), get("guard_ms"), get("backend_ms"),
        )  # fmt: skip
        seen = self._seen
        try:
            seen[key] = seen.get(key, 0) + 1
        except TypeError:  # a value that cannot be a dict key: counted on its own, now
            self._count(key, 1)
        self._queued += 1
        if self._queued >= APPLY_EVERY:
            self.apply()

    def _repaired(self, event: Mapping[str, Any], front: str, repair: Any) -> None:
        counts = self._counts
        key: tuple[Any, ...] = (self.repair_attempts, front)
        counts[key] = counts.get(key, 0) + len(repair)
        repaired = event.get("repaired")  # set by fronts whose final text always differs
        if repaired is None:
            repaired = event.get("final_query") not in (None, event.get("query"))
        if repaired:
            key = (self.repairs, front)
            counts[key] = counts.get(key, 0) + 1

    def _count_seen(self) -> None:
        """Turn the queued query signatures into counts and durations."""
        seen, self._seen = self._seen, {}
        for key, n in seen.items():
            self._count(key, n)

    def _count(self, signature: tuple[Any, ...], n: int) -> None:
        front, language, action, codes, error, guard_ms, backend_ms = signature
        counts = self._counts
        front = str(front or "bolt")
        verdict = str(action or "error")
        key: tuple[Any, ...] = (self.queries, front, str(language or "cypher"), verdict)
        counts[key] = counts.get(key, 0) + n
        for code in codes:
            key = (self.findings, front, str(code))
            counts[key] = counts.get(key, 0) + n
        if error is not None and verdict != "block":
            key = (self.errors, front, str(error))
            counts[key] = counts.get(key, 0) + n
        if isinstance(guard_ms, int | float):
            self._observe(self.guard_seconds, front, guard_ms / 1000, n)
        if isinstance(backend_ms, int | float):
            self._observe(self.backend_seconds, front, backend_ms / 1000, n)

    def _observe(self, histogram: Histogram, front: str, seconds: float, times: int) -> None:
        values = self._observed.get((histogram, front))
        if values is None:
            values = self._observed[(histogram, front)] = []
        values += [seconds] * times

    def apply(self) -> None:
        """Hand what the hook counted to the prometheus-client metrics."""
        self._count_seen()
        counts, self._counts = self._counts, {}
        observed, self._observed = self._observed, {}
        self._queued = 0
        for (metric, *values), amount in counts.items():
            self._child(metric, *values).inc(amount)
        for (histogram, front), seconds in observed.items():
            child = self._child(histogram, front)
            for value in seconds:
                child.observe(value)

    def render(self) -> bytes:
        self.apply()
        return generate_latest(self.registry)


def open_connections(runner: Any) -> int:
    """Open client connections of an aiohttp `AppRunner` (keep-alive and WebSocket alike)."""
    server = runner.server if runner is not None else None
    return len(server.connections) if server is not None else 0


def fan_out(*hooks: Callable[[Mapping[str, Any]], None] | None) -> Callable[..., None]:
    """One `on_query` hook calling several (the audit log and the metrics)."""
    active = [h for h in hooks if h is not None]

    def call(event: Mapping[str, Any]) -> None:
        for hook in active:
            hook(event)

    return call


def of_workers(renders: list[tuple[str, bytes]]) -> bytes:
    """The metrics of several workers of one `serve` (`[server] workers = N`; each one's
    `render()` with its name) as one exposition, every sample labelled with its `worker`: each
    worker's counters stay monotonic, and `sum without (worker)` adds them up."""
    families: dict[str, Metric] = {}
    for worker, text in renders:
        for family in text_string_to_metric_families(text.decode()):
            into = families.setdefault(
                family.name, Metric(family.name, family.documentation, family.type)
            )
            into.samples += [s._replace(labels={**s.labels, "worker": worker})
                             for s in family.samples]  # fmt: skip
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(list(families.values())))
    return generate_latest(registry)


class _Families:
    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> list[Metric]:
        return self.families
