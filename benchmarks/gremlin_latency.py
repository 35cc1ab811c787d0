"""Gremlin guard latency per traversal (uncached and cached) over TinkerPop's feature-test
traversals, with the default configuration and with SEGRA's similarity configuration.
Prints a markdown section for RESULTS.md."""

from __future__ import annotations

import gc
import json
import time
import tomllib

from _common import CORPORA, ROOT, summary_us, table

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard

SEGRA = tomllib.loads((ROOT / "conf" / "segra-similarity.toml").read_text())["gremlin"]


def _texts() -> list[str]:
    path = CORPORA / "gremlin" / "tinkerpop_traversals.jsonl"
    return [json.loads(line)["text"] for line in path.open(encoding="utf-8") if line.strip()]


def _measure(texts: list[str], raw: dict[str, object]) -> tuple[dict[str, float], ...]:
    uncached_guard: Guard = build_guard(parse_config(raw), entry_points=False)
    uncached_guard._cache = None  # the full pipeline every time
    for text in texts[:300]:  # warm the parser and imports
        uncached_guard.check(text, "gremlin")
    gc.collect()
    uncached: list[int] = []
    for text in texts:
        t0 = time.perf_counter_ns()
        uncached_guard.check(text, "gremlin")
        uncached.append(time.perf_counter_ns() - t0)
    cached_guard = build_guard(parse_config(raw), entry_points=False)
    for text in texts:
        cached_guard.check(text, "gremlin")
    cached: list[int] = []
    for text in texts:
        t0 = time.perf_counter_ns()
        cached_guard.check(text, "gremlin")
        cached.append(time.perf_counter_ns() - t0)
    return summary_us(uncached), summary_us(cached)


def main() -> str:
    texts = _texts()
    rows = []
    for name, raw in (("defaults", {}), ("SEGRA similarity + schema", {"gremlin": SEGRA})):
        unc, cac = _measure(texts, raw)
        rows.append([name, unc["n"], unc["p50"], unc["p99"], unc["mean"], cac["p50"], cac["p99"]])
    return "\n".join(
        [
            "## Gremlin guard latency (TinkerPop feature-test traversals, all built-in rules)",
            "",
            "Parse + every Gremlin rule + rewrite rounds, per traversal. Targets as for Cypher: "
            "uncached p50 ≤ 500 µs, p99 ≤ 3,000 µs; cached ≤ 20 µs.",
            "",
            table(
                [
                    "configuration",
                    "traversals",
                    "uncached p50 µs",
                    "uncached p99 µs",
                    "uncached mean µs",
                    "cached p50 µs",
                    "cached p99 µs",
                ],
                rows,
            ),
        ]
    )


if __name__ == "__main__":
    print(main())
