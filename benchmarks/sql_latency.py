"""Guard latency for SQL: the 1,034 gold queries of the Spider dev set (tests/data/spider,
CC BY-SA 4.0, see PROVENANCE.md there) judged by all built-in rules — read in SQLite (their
dialect) with each query's database schema (so `sql_unknown_names` resolves every name), and
in PostgreSQL without a schema. Uncached (the verdict cache off) and cached; also how many of
these real reads are blocked (read-only false positives) and which findings they get.

Writes its section of benchmarks/RESULTS.md (`--write`) or prints it.
Usage: .venv/bin/python benchmarks/sql_latency.py [--write]
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from collections import Counter
from dataclasses import replace

from _common import ROOT, summary_us, table, write_section

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard
from query_guard.schema.sql_catalog import SqlCatalog

DATA = ROOT / "tests" / "data" / "spider"
HEADING = "## SQL guard latency"


def corpus() -> list[tuple[str, str]]:
    lines = (DATA / "dev_gold.sql.tsv").read_text(encoding="utf-8").splitlines()
    return [(q, db) for q, db in (line.split("\t") for line in lines if line.strip())]


def guards(dialect: str, with_schema: bool) -> dict[str, Guard]:
    config = parse_config({"guard": {"sql_dialect": dialect}})
    raw = json.loads((DATA / "dev_schemas.json").read_text(encoding="utf-8"))
    out = {}
    for db, tables in raw.items():
        guard = build_guard(config, entry_points=False)
        if with_schema:
            guard.ctx = replace(guard.ctx, sql_schema=SqlCatalog(tables, "sqlite"))
        out[db] = guard
    return out


def measure(
    pairs: list[tuple[str, Guard]],
) -> tuple[list[int], list[int], list[int], Counter[str], int]:
    for text, guard in pairs[:200]:  # warm parsers and imports
        guard.check(text, "sql")
    gc.collect()
    uncached: list[int] = []
    cpu: list[int] = []  # the thread's CPU time: what a busy machine's waiting leaves out
    codes: Counter[str] = Counter()
    blocked = 0
    for text, guard in pairs:
        guard._cache = None  # the full pipeline every time
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        verdict = guard.check(text, "sql")
        uncached.append(time.perf_counter_ns() - t0)
        cpu.append(time.thread_time_ns() - c0)
        codes.update(set(verdict.codes))
        blocked += verdict.blocked
        for f in verdict.findings:
            if f.code == "SCH.UNKNOWN_COLUMN":
                named = text[f.span[0] : f.span[1]]
                codes["unknown-name findings"] += 1
                codes["… on a double-quoted string"] += named[:1] == named[-1:] == '"'

    cached: list[int] = []
    warm = {
        id(g): build_guard(
            parse_config({"guard": {"sql_dialect": g.ctx.settings.sql_dialect}}), entry_points=False
        )
        for _, g in pairs
    }
    for text, guard in pairs:
        g = warm[id(guard)]
        g.ctx = replace(g.ctx, sql_schema=guard.ctx.sql_schema)
        g.check(text, "sql")
    for text, guard in pairs:
        g = warm[id(guard)]
        t0 = time.perf_counter_ns()
        g.check(text, "sql")
        cached.append(time.perf_counter_ns() - t0)
    return uncached, cpu, cached, codes, blocked


def main() -> str:
    load = os.getloadavg()[0]
    items = corpus()
    rows = []
    notes: list[tuple[int, int]] = []  # (double-quoted, all) SCH.UNKNOWN_COLUMN findings
    for name, dialect, with_schema in (
        ("Spider dev gold, sqlite + schema", "sqlite", True),
        ("Spider dev gold, postgres, no schema", "postgres", False),
    ):
        by_db = guards(dialect, with_schema)
        unc, cpu, cac, codes, blocked = measure([(q, by_db[db]) for q, db in items])
        u, p, c = summary_us(unc), summary_us(cpu), summary_us(cac)
        quoted = codes.pop("… on a double-quoted string", 0), codes.pop("unknown-name findings", 0)
        notes.append(quoted)
        found = ", ".join(f"{k} {v}" for k, v in sorted(codes.items())) or "none"
        rows.append([name, u["n"], u["p50"], u["p99"], p["p50"], p["p99"], c["p50"], c["p99"],
                     blocked, found])  # fmt: skip
    return "\n".join([
        HEADING,
        "",
        "The 1,034 gold queries of the Spider dev set (tests/data/spider, CC BY-SA 4.0) through "
        "every built-in rule (`benchmarks/sql_latency.py`). *blocked* counts real reads the "
        "guard refused (read-only false positives); *findings* counts queries per code. "
        f"With the schemas, {notes[0][0]} of the {notes[0][1]} `SCH.UNKNOWN_COLUMN` findings "
        "name a double-quoted string (`\"JetBlue Airways\"`: SQLite reads it as text only "
        "because no column has that name). Wall-clock times "
        f"on {os.cpu_count()} cores at load average {load:.1f} (a shared machine: a busy one "
        "inflates the uncached p99 most; *CPU* is the uncached check's own thread CPU time).",
        "",
        table(["corpus", "queries", "uncached p50 µs", "uncached p99 µs", "CPU p50 µs",
               "CPU p99 µs", "cached p50 µs", "cached p99 µs", "blocked", "findings (queries)"],
              rows),
    ])  # fmt: skip


if __name__ == "__main__":
    section = main()
    print(section)
    if "--write" in sys.argv[1:]:
        write_section(HEADING, section)
