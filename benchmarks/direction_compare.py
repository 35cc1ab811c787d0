"""The direction-competition set, side by side: query-guard's schema rules vs LangChain's
`CypherQueryCorrector` (langchain-neo4j, installed only in the benchmark environment).

Accuracy = output equals `correct_query` byte for byte (an empty `correct_query` expects the
corrector to say "no path": '' from LangChain, a SCH.NO_PATH finding from query-guard)."""

from __future__ import annotations

import re
import time

from _common import direction_competition, summary_us, table

from query_guard.build import default_languages
from query_guard.guard.pipeline import Guard
from query_guard.guard.registry import build_plugin_manager
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.context import GuardContext

RULES = [
    "query_guard.rules.fix_rel_types",
    "query_guard.rules.align_directions",
    "query_guard.rules.redirect_self_loops",
]
REPEAT = 20


def _ours(rows: list[dict[str, str]]) -> tuple[int, list[int]]:
    pm = build_plugin_manager(builtins=RULES, entry_points=False)
    correct, samples = 0, []
    for row in rows:
        ctx = GuardContext(schema=SchemaCatalog.from_triples(row["schema"]))
        guard = Guard(pm, ctx, default_languages(), cache_size=0)
        for _ in range(REPEAT):
            t0 = time.perf_counter_ns()
            verdict = guard.check(row["statement"])
            samples.append(time.perf_counter_ns() - t0)
        if row["correct_query"]:
            correct += verdict.query == row["correct_query"]
        else:
            correct += "SCH.NO_PATH" in verdict.codes
    return correct, samples


def _langchain(rows: list[dict[str, str]]) -> tuple[int, list[int]] | None:
    try:
        from langchain_neo4j.chains.graph_qa.cypher_utils import CypherQueryCorrector, Schema
    except ImportError:
        return None
    triple = re.compile(r"\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*,\s*([^,()]+?)\s*\)")
    correct, samples = 0, []
    for row in rows:
        schemas = [Schema(a, t, b) for a, t, b in triple.findall(row["schema"])]
        corrector = CypherQueryCorrector(schemas)
        for _ in range(REPEAT):
            t0 = time.perf_counter_ns()
            out = corrector(row["statement"])
            samples.append(time.perf_counter_ns() - t0)
        correct += out == row["correct_query"]
    return correct, samples


def main() -> str:
    rows = direction_competition()
    results = [("query-guard (fix_rel_types, align_directions, redirect_self_loops)", _ours(rows))]
    lc = _langchain(rows)
    if lc is not None:
        results.append(("LangChain CypherQueryCorrector (langchain-neo4j)", lc))
    body = []
    for name, (correct, samples) in results:
        s = summary_us(samples)
        body.append([name, f"{correct}/{len(rows)}", s["p50"], s["p99"], s["mean"]])
    note = "" if lc is not None else "\n(langchain-neo4j not installed: LangChain row skipped)"
    return "\n".join(
        [
            "## Direction competition: query-guard vs LangChain CypherQueryCorrector",
            "",
            f"74 statements, each corrected {REPEAT} times (no cache); accuracy is byte-exact.",
            "",
            table(["corrector", "accuracy", "p50 µs", "p99 µs", "mean µs"], body) + note,
        ]
    )


if __name__ == "__main__":
    print(main())
