"""Guard latency of this build against an earlier revision, in one interleaved run: two worker
processes (`_guard_worker.py`), one importing this checkout and one a git worktree of REV, both
on this interpreter and its installed dependencies (only the code differs), each judging every
query of a corpus with the verdict cache off. In every round each corpus is measured on both
sides in a shuffled order (fixed seed), so machine load falls on both alike. Per query the
minimum over rounds is kept (the least disturbed run); the verdict reads the thread-CPU ratio
of the medians and means, with the spread of the per-round ratios as the noise a difference
must exceed.

Corpora: CypherBench gold, text2cypher GPT-4-turbo (every 4th), Spider dev gold (SQLite with
schema), TinkerPop feature-test traversals.

With `--post-parse` the times compared are each query's thread CPU minus that of its parses
(the worker times every `parse` call): the rules, the pipeline and the emission alone. Such a
table is printed, never written.

Usage: .venv/bin/python benchmarks/guard_compare.py --baseline REV [--rounds N]
       [--only spider,tinkerpop] [--post-parse] [--write]
(`--only` measures some corpora; its table is printed, never written: RESULTS.md holds all four.)
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import CORPORA, ROOT, percentile, table, write_section
from _serve import Baseline
from _worker_proc import Worker

HEADING = "## Guard latency against an earlier revision"
NAMES = {
    "cypherbench": "CypherBench gold (Cypher)",
    "text2cypher": "text2cypher GPT-4-turbo, every 4th (Cypher)",
    "spider": "Spider dev gold, SQLite + schema (SQL)",
    "tinkerpop": "TinkerPop traversals (Gremlin)",
}


class Side(Worker):
    def __init__(self, label: str, root: Path, baseline: bool) -> None:
        self.label = label
        env = {"PYTHONPATH": str(root)}
        if baseline:  # its own code, not the editable install of this build
            env["QG_BASELINE_ROOT"] = str(root)
        argv = [sys.executable, str(ROOT / "benchmarks" / "_guard_worker.py"), str(CORPORA),
                str(ROOT / "tests" / "data" / "spider")]  # fmt: skip
        super().__init__(argv, root, env)
        print(f"{label}: {self.ready['ready']} from {self.ready['file']}", file=sys.stderr)

    def measure(self, corpus: str) -> dict[str, Any]:
        return self.ask(corpus)


def _times(got: dict[str, Any], kind: str, post_parse: bool) -> list[int]:
    """Per query ns of `kind` (cpu or wall); with `post_parse`, less the CPU of its parses."""
    if not post_parse:
        return got[kind]  # type: ignore[no-any-return]
    return [max(0, t - p) for t, p in zip(got[kind], got["parse"], strict=True)]


def run(
    baseline: Baseline, rounds: int, names: dict[str, str], post_parse: bool = False
) -> tuple[list[list[Any]], list[str]]:
    sides = [Side(f"baseline {baseline.rev}", baseline.root, True), Side("this build", ROOT, False)]
    rng = random.Random(19)
    best: dict[tuple[str, str, str], list[int]] = {}  # (side, corpus, cpu|wall) -> per query
    per_round: dict[str, list[float]] = {c: [] for c in names}  # CPU mean ratio per round
    blocked: dict[tuple[str, str], int] = {}
    loads = [os.getloadavg()[0]]
    try:
        for _ in range(rounds):
            for corpus in names:
                order = sides[:]
                rng.shuffle(order)
                means = {}
                for side in order:
                    got = side.measure(corpus)
                    blocked[side.label, corpus] = got["blocked"]
                    means[side.label] = statistics.fmean(_times(got, "cpu", post_parse))
                    for kind in ("cpu", "wall"):
                        key = (side.label, corpus, kind)
                        prev = best.get(key)
                        now = _times(got, kind, post_parse)
                        best[key] = now if prev is None else list(map(min, prev, now))
                per_round[corpus].append(means[sides[1].label] / means[sides[0].label])
            loads.append(os.getloadavg()[0])
    finally:
        for side in sides:
            side.close()
    rows = []
    verdicts = []
    for corpus, name in names.items():
        old = best[sides[0].label, corpus, "cpu"]
        new = best[sides[1].label, corpus, "cpu"]
        old_p50, new_p50 = percentile(old, 50) / 1000, percentile(new, 50) / 1000
        old_p99, new_p99 = percentile(old, 99) / 1000, percentile(new, 99) / 1000
        ratio = statistics.fmean(new) / statistics.fmean(old)
        spread = max(per_round[corpus]) - min(per_round[corpus])
        lo, hi = min(per_round[corpus]), max(per_round[corpus])
        refused = f"{blocked[sides[0].label, corpus]} / {blocked[sides[1].label, corpus]}"
        rows.append([name, len(new), old_p50, new_p50, new_p50 / old_p50, old_p99, new_p99,
                     new_p99 / old_p99, ratio, f"{lo:.2f}-{hi:.2f}", refused])  # fmt: skip
        worse = ratio - 1 > max(0.05, spread / 2)
        verdicts.append(
            f"{name}: mean CPU {ratio:.2f}x the baseline's "
            + ("— slower, beyond the run's noise" if worse else "— not slower beyond noise")
            + f" (per-round ratios {min(per_round[corpus]):.2f}-{max(per_round[corpus]):.2f})."
        )
    load = f"{min(loads):.1f}-{max(loads):.1f}"
    return rows, [*verdicts, f"LOAD {load}"]


def main() -> str:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", required=True, metavar="REV")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated corpora: " + ",".join(NAMES))
    parser.add_argument("--post-parse", action="store_true", help="CPU less the parses'")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    names = {c: NAMES[c] for c in args.only.split(",")} if args.only else NAMES
    with tempfile.TemporaryDirectory(prefix="qg-guard-compare-") as tmp:
        baseline = Baseline(args.baseline, Path(tmp))
        try:
            rows, verdicts = run(baseline, args.rounds, names, args.post_parse)
        finally:
            baseline.close()
    load = verdicts.pop().removeprefix("LOAD ")
    section = "\n".join([
        HEADING,
        "",
        f"This build against {baseline.rev} (`benchmarks/guard_compare.py --baseline "
        f"{args.baseline} --rounds {args.rounds}"
        + (f" --only {args.only}" if args.only else "")
        + (" --post-parse`; CPU after the parse: each query's less its parses'" if args.post_parse
           else "`")
        + "): both sides on one interpreter and the same "
        f"dependencies, interleaved in {args.rounds} rounds in shuffled order, every query "
        "uncached; per query the minimum thread-CPU time over the rounds. "
        f"{os.cpu_count()} cores, load average {load} during the run (other work on the "
        "machine: thread CPU time, not wall time, and ratios within one run). *blocked* is "
        "queries the guard refused, baseline / this build.",
        "",
        table(["corpus", "queries", "base p50 µs", "now p50 µs", "p50 x", "base p99 µs",
               "now p99 µs", "p99 x", "mean x", "per-round mean x", "blocked"], rows),
        "",
        *(f"- {v}" for v in verdicts),
    ])  # fmt: skip
    if args.write and names == NAMES and not args.post_parse:
        write_section(HEADING, section)
    return section


if __name__ == "__main__":
    print(main())
