"""How long the guard takes on queries at the size limits (issue 19, item 5): long operator
chains and deep nesting in Cypher, SQL and Gremlin (`tests/deep_cases.py`, the cases
tests/unit/test_deep_queries.py checks the answers of). Target: any query within the default
`[limits]` (64 KiB) judged in under 50 ms; with the text limits off (`max_nesting = 0`,
`max_query_tokens = 0`) the 6,000-character cases are reported, without a target.

Per case the minimum over the rounds of the check's own thread CPU time and of its wall time,
judged in a fresh thread as the proxy's worker pool does (every query uncached).
Writes its section of benchmarks/RESULTS.md (`--write`) or prints it.
Usage: .venv/bin/python benchmarks/deep_queries.py [--rounds N] [--write]
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from dataclasses import replace

from _common import table, write_section

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard
from query_guard.schema.catalog import SchemaCatalog
from tests.deep_cases import all_cases

HEADING = "## Queries at the size limits"
TARGET_MS = 50.0
SCHEMA = SchemaCatalog.from_dict(
    {
        "nodes": {"Person": ["name", "born"], "Movie": ["title"]},
        "relationships": [{"start": "Person", "type": "ACTED_IN", "end": "Movie"}],
    }
)


def guards() -> dict[str, Guard]:
    """Both settings with the verdict cache off, so every round judges again."""
    defaults, off = parse_config({}), parse_config(
        {"limits": {"max_nesting": 0, "max_query_tokens": 0}}
    )
    return {
        name: build_guard(replace(config, guard=replace(config.guard, cache_size=0)),
                          schema=SCHEMA)
        for name, config in (("defaults", defaults), ("limits-off", off))
    }


def timed(guard: Guard, text: str, language: str) -> tuple[float, float, str]:
    """(thread CPU ms, wall ms, the verdict's action and first error code) in a fresh thread."""
    out: dict[str, object] = {}

    def work() -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        verdict = guard.check(text, language)
        out["cpu"], out["wall"] = time.thread_time() - cpu, time.perf_counter() - wall
        errors = [f.code for f in verdict.findings if f.severity.value == "error"]
        out["answer"] = verdict.action.value + (f" ({errors[0]})" if errors else "")

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return float(out["cpu"]) * 1000, float(out["wall"]) * 1000, str(out["answer"])  # type: ignore[arg-type]


def main(rounds: int) -> str:
    load = os.getloadavg()[0]
    by_setting = guards()
    rows, slowest = [], {"defaults": (0.0, ""), "limits-off": (0.0, "")}
    for language, (full, short) in all_cases().items():
        for name in sorted(full):
            cells: list[object] = [language, name]
            for setting, text in (("defaults", full[name]), ("limits-off", short[name])):
                runs = [timed(by_setting[setting], text, language) for _ in range(rounds)]
                cpu, wall = min(r[0] for r in runs), min(r[1] for r in runs)
                cells += [len(text), round(cpu, 2), round(wall, 2), runs[0][2]]
                if cpu > slowest[setting][0]:
                    slowest[setting] = (cpu, f"{language} {name}")
            rows.append(cells)
    over = [r for r in rows if float(r[3]) > TARGET_MS]  # type: ignore[arg-type]
    verdict = (
        f"every case within the default limits judged in at most {slowest['defaults'][0]:.1f} ms "
        f"thread CPU ({slowest['defaults'][1]}): target ≤ {TARGET_MS:.0f} ms met"
        if not over
        else f"{len(over)} of {len(rows)} cases within the default limits over {TARGET_MS:.0f} ms "
        f"thread CPU ({', '.join(f'{r[0]} {r[1]}' for r in over)}): target missed"
    )
    return "\n".join([
        HEADING,
        "",
        "`benchmarks/deep_queries.py`: long operator chains and deep nesting (tests/deep_cases.py) "
        f"judged by every built-in rule, uncached, in a fresh thread; minimum of {rounds} rounds "
        f"per case. {os.cpu_count()} cores, load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end. *defaults*: 64 KiB under the default `[limits]`; "
        "*limits off*: `max_nesting = 0`, `max_query_tokens = 0`, 6,000 characters.",
        "",
        table(["language", "case", "bytes", "CPU ms", "wall ms", "answer",
               "bytes (limits off)", "CPU ms", "wall ms", "answer"], rows),
        "",
        f"Verdict: {verdict}. With the text limits off the slowest case took "
        f"{slowest['limits-off'][0]:.1f} ms ({slowest['limits-off'][1]}); no target there: the "
        "limits are what keep a query's cost bounded.",
    ])  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    section = main(args.rounds)
    print(section)
    if args.write:
        write_section(HEADING, section)
