"""Shared helpers for the benchmarks: corpora loading, percentiles, markdown tables."""

from __future__ import annotations

import ast
import csv
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT.parent / "shared" / "corpora"
sys.path.insert(0, str(ROOT))

from query_guard.schema.catalog import SchemaCatalog  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[idx]


def summary_us(samples_ns: list[int]) -> dict[str, float]:
    us = [s / 1000 for s in samples_ns]
    return {
        "n": len(us),
        "p50": percentile(us, 50),
        "p99": percentile(us, 99),
        "mean": statistics.fmean(us) if us else float("nan"),
    }


def _reference_workload() -> int:
    """Dict, string and list work of the kind the guard does, fixed in size."""
    counts: dict[str, int] = {}
    words: list[str] = []
    for i in range(20_000):
        key = f"k{i % 512}"
        counts[key] = counts.get(key, 0) + i
        words.append(key.upper())
    return len(words) + len(counts)


def reference_ms(rounds: int = 7) -> float:
    """Thread-CPU milliseconds of a fixed pure-Python workload, the best of `rounds`: the
    machine's speed at the time of a run, printed beside absolute µs so that runs in different
    sessions can be read together (the same build measured a 331 µs and a 550 µs guard p50
    in two sessions, both at load ~0; lower is faster)."""
    best = float("inf")
    for _ in range(rounds):
        started = time.thread_time_ns()
        _reference_workload()
        best = min(best, (time.thread_time_ns() - started) / 1e6)
    return best


def table(headers: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.1f}" if value >= 10 else f"{value:.2f}"
    return str(value)


def cypherbench() -> tuple[list[dict[str, Any]], dict[str, SchemaCatalog]]:
    base = CORPORA / "cypher" / "cypherbench"
    items = [json.loads(x) for x in (base / "test_question_gold.jsonl").open() if x.strip()]
    schemas = {
        p.name.removesuffix("_schema.json"): SchemaCatalog.from_cypherbench(
            json.loads(p.read_text())
        )
        for p in (base / "schemas").glob("*_schema.json")
    }
    return items, schemas


def text2cypher() -> tuple[list[dict[str, str]], dict[str, SchemaCatalog]]:
    csv.field_size_limit(1 << 24)
    base = CORPORA / "cypher" / "text2cypher"
    with (base / "text2cypher_gpt4turbo.csv").open(newline="") as fp:
        rows = list(csv.DictReader(fp))
    with (base / "text2cypher_schemas.csv").open(newline="") as fp:
        schemas = {
            r["database"]: SchemaCatalog.from_structured_schema(
                ast.literal_eval(r["structured_schema"])
            )
            for r in csv.DictReader(fp)
        }
    return rows, schemas


def direction_competition() -> list[dict[str, str]]:
    csv.field_size_limit(1 << 24)
    with (CORPORA / "cypher" / "direction_competition.csv").open(newline="") as fp:
        return list(csv.DictReader(fp))


MARKER = "<!-- other benchmarks -->"


def write_section(heading: str, text: str) -> None:
    """Replace the section starting with `heading` below RESULTS.md's marker (run_all.py owns
    what is above it), keeping every other section there."""
    import re

    path = ROOT / "benchmarks" / "RESULTS.md"
    current = path.read_text() if path.exists() else ""
    if MARKER not in current:
        current = current.rstrip("\n") + f"\n\n{MARKER}\n"
    head, _, tail = current.partition(MARKER)
    sections = re.split(r"(?m)^(?=## )", tail)
    kept = [s for s in sections if s.strip() and not s.startswith(heading)]
    body = "\n".join(s.rstrip("\n") + "\n" for s in [*kept, text])
    path.write_text(f"{head}{MARKER}\n{body}")
