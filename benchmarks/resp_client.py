"""Our own RESP client (`resp_own.RespPool`, the FalkorDB backend's transport until this
benchmark) against redis-py's asyncio client with the hiredis parser (its transport since),
on the work the FalkorDB backend gives it: `GRAPH.RO_QUERY … --compact` replies from the
embedded FalkorDB with the movie graph, decoded to Python values (bulk strings as `str` on
both sides: redis-py with `decode_responses=True`).

Per query shape: p50 latency of one command at a time, and throughput with 16 concurrent
commands over a 16-connection pool. Both clients run in the same process and event loop,
alternating in rounds, so the ratios compare like with like on a drifting machine.

Usage: .venv/bin/python benchmarks/resp_client.py [--write] [--rounds N]
(--write replaces this section of RESULTS.md).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import redis  # noqa: E402
import redis.asyncio as aredis  # noqa: E402
from _common import table, write_section  # noqa: E402
from redis.utils import HIREDIS_AVAILABLE  # noqa: E402
from resp_own import RespPool  # noqa: E402

from proxy.backends.embedded import EmbeddedFalkorDB  # noqa: E402

SECTION = "## RESP client (own vs redis-py + hiredis)"
GRAPH = "movies"
QUERIES = {
    "one value": "RETURN 1",
    "38 rows x 2 scalars": "MATCH (m:Movie) RETURN m.title, m.released",
    "253 rows x 3 entities": "MATCH (a)-[r]->(b) RETURN a, r, b",
    "20,000 rows x 2 scalars": "UNWIND range(1, 20000) AS i RETURN i, toString(i)",
}
CONCURRENCY = 16
HEADERS = [
    "reply", "own p50 µs", "redis-py p50 µs", "latency ratio", "own cmd/s", "redis-py cmd/s",
    "throughput ratio",
]  # fmt: skip
Run = Callable[[str], Awaitable[Any]]


async def latency_us(run: Run, query: str, n: int) -> float:
    """Median µs of `n` commands one after another."""
    samples = []
    for _ in range(n):
        began = time.perf_counter_ns()
        await run(query)
        samples.append((time.perf_counter_ns() - began) / 1000)
    return statistics.median(samples)


async def throughput(run: Run, query: str, n: int) -> float:
    """Commands per second with CONCURRENCY tasks issuing `n` commands in all."""

    async def worker(count: int) -> None:
        for _ in range(count):
            await run(query)

    began = time.perf_counter()
    await asyncio.gather(*(worker(n // CONCURRENCY) for _ in range(CONCURRENCY)))
    return (n // CONCURRENCY * CONCURRENCY) / (time.perf_counter() - began)


def repetitions(query: str) -> int:
    return 20 if "20000" in query else 300


async def measure(db: EmbeddedFalkorDB, rounds: int) -> dict[str, dict[str, list[float]]]:
    own = RespPool(db.host, db.port, password=db.password, max_connections=CONCURRENCY)
    theirs = aredis.Redis(
        host=db.host, port=db.port, password=db.password, decode_responses=True,
        max_connections=CONCURRENCY,
    )  # fmt: skip
    clients: dict[str, Run] = {
        "own": lambda q: own.execute("GRAPH.RO_QUERY", GRAPH, q, "--compact"),
        "redis-py": lambda q: theirs.execute_command("GRAPH.RO_QUERY", GRAPH, q, "--compact"),
    }
    first = {name: await run(QUERIES["38 rows x 2 scalars"]) for name, run in clients.items()}
    # the same values (the statistics line differs: timings, cache hits)
    assert first["own"][:-1] == first["redis-py"][:-1], "the two clients decode differently"
    results: dict[str, dict[str, list[float]]] = {}
    try:
        for label, query in QUERIES.items():
            n = repetitions(query)
            for run in clients.values():  # warm-up: connections opened, caches filled
                await throughput(run, query, CONCURRENCY)
            for _ in range(rounds):
                for name, run in clients.items():
                    cell = results.setdefault(f"{label}|{name}", {"us": [], "qps": []})
                    cell["us"].append(await latency_us(run, query, n // 3))
                    cell["qps"].append(await throughput(run, query, n))
    finally:
        await own.close()
        await theirs.aclose()
    return results


def report(results: dict[str, dict[str, list[float]]], rounds: int) -> str:
    rows, speedups = [], []
    for label in QUERIES:
        own = results[f"{label}|own"]
        other = results[f"{label}|redis-py"]
        own_us, other_us = statistics.median(own["us"]), statistics.median(other["us"])
        own_qps, other_qps = statistics.median(own["qps"]), statistics.median(other["qps"])
        speedups.append((label, other_us / own_us, own_qps / other_qps))
        rows.append([label, own_us, other_us, other_us / own_us, own_qps, other_qps,
                     own_qps / other_qps])  # fmt: skip
    lat = [s[1] for s in speedups]
    qps = [s[2] for s in speedups]
    ours = [label for label, a, b in speedups if a > 1 and b > 1]
    theirs = [label for label, a, b in speedups if a < 1 and b < 1]
    mixed = [label for label, _, _ in speedups if label not in ours + theirs]
    parts = [
        f"ours on {', '.join(ours)}" if ours else "",
        f"redis-py + hiredis on {', '.join(theirs)}" if theirs else "",
        f"neither clearly on {', '.join(mixed)}" if mixed else "",
    ]
    verdict = "; ".join(p for p in parts if p)
    saved = [row[2] - row[1] for row in rows]  # µs redis-py takes more than ours, per shape
    text = [
        SECTION,
        "",
        f"`benchmarks/resp_client.py`, {rounds} alternating rounds, medians; redis-py "
        f"{redis.__version__}, hiredis {'on' if HIREDIS_AVAILABLE else 'OFF'}; "
        f"{CONCURRENCY} concurrent commands for the throughput columns.",
        "",
        table(HEADERS, rows),
        "",
        f"Ratios are redis-py's cost over ours (above 1: ours is faster): latency "
        f"{min(lat):.2f}x to {max(lat):.2f}x, throughput {min(qps):.2f}x to {max(qps):.2f}x. "
        f"Faster in both latency and throughput: {verdict}. Per command, ours saves at most "
        f"{max(max(saved), 0):.0f} µs; redis-py saves up to {max(-min(saved), 0):.0f} µs.",
    ]
    return "\n".join(text) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, EmbeddedFalkorDB(Path(tmp)) as db:
        results = asyncio.run(measure(db, args.rounds))
    text = report(results, args.rounds)
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
