"""The Cypher parse and scope resolution of this build against an earlier revision, in one
interleaved run: two worker processes, one importing this checkout and one a git worktree of
REV (both on this interpreter), each parsing (`parse_tokens`) and resolving (`scopes.resolve`)
every query of CypherBench gold and of text2cypher GPT-4-turbo (every 4th) that parses. The
sides alternate every 100 queries, in a shuffled order (fixed seed), so machine load falls on
both alike; the verdict reads the thread-CPU ratio per round (parse, scopes, both) and their
median.

Usage: .venv/bin/python benchmarks/parse_compare.py --baseline REV [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, table
from _serve import Baseline, _import_path
from _worker_proc import Worker

CORPORA = ("cypherbench", "text2cypher")
CHUNK = 100  # queries measured on one side before the other side measures them


def _worker(baseline: bool) -> None:
    """One side: read a corpus name per line, answer with its thread-CPU ns (parse, scopes)."""
    if baseline:  # the venv's editable install maps query_guard to THIS build: drop it
        sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in repr(f)]
    from _common import cypherbench, text2cypher

    from query_guard.cypher.parser import CypherSyntaxError, parse_tokens
    from query_guard.cypher.scopes import resolve

    texts = {
        "cypherbench": [it["gold_cypher"] for it in cypherbench()[0]],
        "text2cypher": [r["cypher"] for r in text2cypher()[0][::4]],
    }
    good: dict[str, list[str]] = {}
    for name, queries in texts.items():
        good[name] = []
        for text in queries:
            try:
                resolve(parse_tokens(text)[0])
            except CypherSyntaxError:
                continue
            good[name].append(text)
    import query_guard

    print(json.dumps({"file": query_guard.__file__, **{k: len(v) for k, v in good.items()}}))
    sys.stdout.flush()
    clock = time.thread_time_ns
    for line in sys.stdin:
        parse_ns = scopes_ns = 0
        corpus, start, stop = line.split()
        for text in good[corpus][int(start) : int(stop)]:
            t0 = clock()
            script = parse_tokens(text)[0]
            t1 = clock()
            resolve(script)
            parse_ns += t1 - t0
            scopes_ns += clock() - t1
        print(json.dumps({"parse": parse_ns, "scopes": scopes_ns}))
        sys.stdout.flush()


class _Side(Worker):
    def __init__(self, root: Path, baseline: bool) -> None:
        env = {"PYTHONPATH": f"{_import_path(root)}:{ROOT / 'benchmarks'}"}
        argv = [sys.executable, __file__, "--worker"] + (["--as-baseline"] if baseline else [])
        super().__init__(argv, root, env)
        print(f"{root}: {self.ready}", file=sys.stderr)

    def measure(self, corpus: str, start: int, stop: int) -> dict[str, Any]:
        return self.ask(f"{corpus} {start} {stop}")


def run(baseline: Baseline, rounds: int) -> str:
    old, new = _Side(baseline.root, True), _Side(ROOT, False)
    rng = random.Random(23)
    ratios: dict[tuple[str, str], list[float]] = {}
    best: dict[tuple[int, str, str], float] = {}
    loads = [os.getloadavg()[0]]
    try:
        for _ in range(rounds):
            for corpus in CORPORA:
                a = {"parse": 0, "scopes": 0}
                b = {"parse": 0, "scopes": 0}
                for start in range(0, old.ready[corpus], CHUNK):
                    order = [old, new]
                    rng.shuffle(order)
                    got = {id(side): side.measure(corpus, start, start + CHUNK) for side in order}
                    for part in ("parse", "scopes"):
                        a[part] += got[id(old)][part]
                        b[part] += got[id(new)][part]
                for part in ("parse", "scopes", "both"):
                    x = a["parse"] + a["scopes"] if part == "both" else a[part]
                    y = b["parse"] + b["scopes"] if part == "both" else b[part]
                    ratios.setdefault((corpus, part), []).append(y / x)
                    for side, v in ((0, x), (1, y)):
                        n = old.ready[corpus]
                        key = (side, corpus, part)
                        best[key] = min(best.get(key, float("inf")), v / n / 1000)
            loads.append(os.getloadavg()[0])
    finally:
        old.close()
        new.close()
    rows = []
    for corpus in CORPORA:
        for part in ("parse", "scopes", "both"):
            r = ratios[corpus, part]
            rows.append([
                corpus, part, old.ready[corpus], best[0, corpus, part], best[1, corpus, part],
                statistics.median(r), f"{min(r):.3f}-{max(r):.3f}",
            ])  # fmt: skip
    head = ["corpus", "measured", "queries", f"{baseline.rev} µs/query (best round)",
            "this build µs/query (best round)", "median ratio", "per-round ratios"]  # fmt: skip
    load = f"load average {min(loads):.1f}-{max(loads):.1f}, {rounds} rounds"
    return table(head, rows) + f"\n\nThread CPU, this build / {baseline.rev}; {load}."


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default="main", metavar="REV")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--as-baseline", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.as_baseline)
        return
    with tempfile.TemporaryDirectory(prefix="qg-parse-compare-") as tmp:
        baseline = Baseline(args.baseline, Path(tmp))
        try:
            print(run(baseline, args.rounds))
        finally:
            baseline.close()


if __name__ == "__main__":
    main()
