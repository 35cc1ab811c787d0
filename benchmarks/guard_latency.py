"""Guard latency per query (uncached and cached) over the CypherBench gold and GPT-4-turbo
corpora. Prints a markdown section for RESULTS.md."""

from __future__ import annotations

import gc
import time

from _common import cypherbench, summary_us, table, text2cypher

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard


def _measure(pairs: list[tuple[str, Guard]]) -> tuple[dict[str, float], dict[str, float]]:
    gc.collect()
    uncached: list[int] = []
    for query, guard in pairs:
        guard._cache = None  # measure the full pipeline every time
        t0 = time.perf_counter_ns()
        guard.check(query)
        uncached.append(time.perf_counter_ns() - t0)
    cached: list[int] = []
    warm = {
        id(g): build_guard(parse_config({}), g.ctx.schema, entry_points=False) for _, g in pairs
    }
    for query, guard in pairs:
        warm[id(guard)].check(query)
    for query, guard in pairs:
        g = warm[id(guard)]
        t0 = time.perf_counter_ns()
        g.check(query)
        cached.append(time.perf_counter_ns() - t0)
    return summary_us(uncached), summary_us(cached)


def main() -> str:
    config = parse_config({})
    items, schemas = cypherbench()
    guards = {name: build_guard(config, s, entry_points=False) for name, s in schemas.items()}
    bench = [(it["gold_cypher"], guards[it["graph"]]) for it in items]
    rows, t2c_schemas = text2cypher()
    t2c_guards = {n: build_guard(config, s, entry_points=False) for n, s in t2c_schemas.items()}
    gpt = [(r["cypher"], t2c_guards[r["database"]]) for r in rows if r["database"] in t2c_guards]
    for query, guard in bench[:200] + gpt[:200]:  # warm the parser and imports
        guard.check(query)
    out = []
    for name, pairs in (("CypherBench gold", bench), ("GPT-4-turbo text2cypher", gpt)):
        unc, cac = _measure(pairs)
        out.append([name, unc["n"], unc["p50"], unc["p99"], unc["mean"], cac["p50"], cac["p99"]])
    return "\n".join(
        [
            "## Guard latency (all built-in rules, schema from the corpus)",
            "",
            "Targets: uncached p50 ≤ 500 µs, p99 ≤ 3,000 µs; cached ≤ 20 µs.",
            "",
            table(
                [
                    "corpus",
                    "queries",
                    "uncached p50 µs",
                    "uncached p99 µs",
                    "uncached mean µs",
                    "cached p50 µs",
                    "cached p99 µs",
                ],
                out,
            ),
        ]
    )


if __name__ == "__main__":
    print(main())
