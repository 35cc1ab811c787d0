"""The FalkorDB backend's RESP transport (`query_guard.wire.resp`: our connections and pool,
hiredis as the reply parser) against the two it replaced: our earlier pure-Python reply parser
(`resp_own.py`, run in the same connections and pool) and redis-py's asyncio client with the
hiredis parser. The work is the
FalkorDB backend's: `GRAPH.RO_QUERY … --compact` replies from the embedded FalkorDB with the
movie graph, decoded to Python values (bulk strings as `str` everywhere: redis-py with
`decode_responses=True`).

Per query shape: p50 latency of one command at a time, and throughput with 16 concurrent
commands over a 16-connection pool. All clients run in the same process and event loop,
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
from resp_own import pool as pure_python_pool  # noqa: E402

from query_guard.backends.embedded import EmbeddedFalkorDB  # noqa: E402
from query_guard.wire.resp import RespPool  # noqa: E402

SECTION = "## RESP client (own vs redis-py + hiredis)"
GRAPH = "movies"
QUERIES = {
    "one value": "RETURN 1",
    "38 rows x 2 scalars": "MATCH (m:Movie) RETURN m.title, m.released",
    "253 rows x 3 entities": "MATCH (a)-[r]->(b) RETURN a, r, b",
    "20,000 rows x 2 scalars": "UNWIND range(1, 20000) AS i RETURN i, toString(i)",
}
CONCURRENCY = 16
CLIENTS = ("proxy", "pure Python", "redis-py")  # the first is the one in use
HEADERS = [
    "reply", *(f"{c} p50 µs" for c in CLIENTS), *(f"{c} cmd/s" for c in CLIENTS),
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
    ours = RespPool(db.host, db.port, password=db.password, max_connections=CONCURRENCY)
    pure = pure_python_pool(db.host, db.port, password=db.password, max_connections=CONCURRENCY)
    theirs = aredis.Redis(
        host=db.host, port=db.port, password=db.password, decode_responses=True,
        max_connections=CONCURRENCY,
    )  # fmt: skip
    clients: dict[str, Run] = {
        "proxy": lambda q: ours.execute("GRAPH.RO_QUERY", GRAPH, q, "--compact"),
        "pure Python": lambda q: pure.execute("GRAPH.RO_QUERY", GRAPH, q, "--compact"),
        "redis-py": lambda q: theirs.execute_command("GRAPH.RO_QUERY", GRAPH, q, "--compact"),
    }
    first = {name: await run(QUERIES["253 rows x 3 entities"]) for name, run in clients.items()}
    # the same values (the statistics line differs: timings, cache hits)
    for name in CLIENTS[1:]:
        assert first[name][:-1] == first["proxy"][:-1], f"{name} decodes differently"
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
        await ours.close()
        await pure.close()
        await theirs.aclose()
    return results


def report(results: dict[str, dict[str, list[float]]], rounds: int) -> str:
    rows, ratios = [], {name: ([], []) for name in CLIENTS[1:]}
    for label in QUERIES:
        us = {c: statistics.median(results[f"{label}|{c}"]["us"]) for c in CLIENTS}
        qps = {c: statistics.median(results[f"{label}|{c}"]["qps"]) for c in CLIENTS}
        rows.append([label, *(us[c] for c in CLIENTS), *(qps[c] for c in CLIENTS)])
        for name, (lat, tput) in ratios.items():
            lat.append(us[name] / us["proxy"])
            tput.append(qps["proxy"] / qps[name])
    lines = []
    for name, (lat, tput) in ratios.items():
        never_slower = min(lat) >= 1 and min(tput) >= 1
        lines.append(
            f"Against {name}: latency {min(lat):.2f}x to {max(lat):.2f}x, throughput "
            f"{min(tput):.2f}x to {max(tput):.2f}x (above 1: the proxy's transport is faster)"
            + (" — faster on every shape." if never_slower else " — not faster on every shape.")
        )
    text = [
        SECTION,
        "",
        f"`benchmarks/resp_client.py`, {rounds} alternating rounds, medians; redis-py "
        f"{redis.__version__}, hiredis {'on' if HIREDIS_AVAILABLE else 'OFF'}; "
        f"{CONCURRENCY} concurrent commands for the throughput columns. `proxy` is "
        "`query_guard.wire.resp` (the FalkorDB backend's transport), `pure Python` the same "
        "connections with our earlier pure-Python reply parser (`benchmarks/resp_own.py`).",
        "",
        table(HEADERS, rows),
        "",
        *lines,
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
