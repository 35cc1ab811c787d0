"""The proxy's own CPU per query on a cached verdict, this build against a baseline revision:
two `query-guard serve` processes (this checkout, and a git worktree of REV running its own
code) in front of one embedded FalkorDB, the small read from 32 async neo4j clients, in
alternating rounds. Serve's CPU seconds (from /proc) divided by the queries it answered is far
less sensitive to a busy machine than wall-clock latency, so it can tell builds apart when
`proxy_overhead.py`'s two identical serves already differ by more than the change.

Usage: .venv/bin/python benchmarks/proxy_cpu.py [--baseline REV] [--rounds N] [--write]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import neo4j  # noqa: E402
from _common import write_section  # noqa: E402
from _serve import Baseline, Proxy  # noqa: E402
from proxy_overhead import PARAMS, SMALL_READ  # noqa: E402

from query_guard.backends.embedded import EmbeddedFalkorDB  # noqa: E402

SECTION = "## Proxy CPU per query (this build vs a baseline)"
CLIENTS = 32


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def one_round(address: str, pid: int, seconds: float) -> tuple[float, float]:
    """(serve's CPU µs per query, queries per second) with CLIENTS sessions."""
    url = f"bolt://{address}"
    async with neo4j.AsyncGraphDatabase.driver(
        url, auth=("u", "p"), max_connection_pool_size=CLIENTS + 2
    ) as driver:
        sessions = [driver.session() for _ in range(CLIENTS)]
        done, deadline = 0, 0.0

        async def loop(w: int) -> None:
            nonlocal done
            while time.perf_counter() < deadline:
                await (await sessions[w].run(SMALL_READ, PARAMS)).values()
                done += 1

        for s in sessions:  # every connection logged on, the verdict cached
            await (await s.run(SMALL_READ, PARAMS)).values()
        deadline = time.perf_counter() + seconds
        started, cpu = time.perf_counter(), cpu_seconds(pid)
        await asyncio.gather(*(loop(w) for w in range(CLIENTS)))
        used, elapsed = cpu_seconds(pid) - cpu, time.perf_counter() - started
        for s in sessions:
            await s.close()
    return used / done * 1e6, done / elapsed


def _seed(db: EmbeddedFalkorDB) -> None:
    """The movie the small read finds (a result with rows: no repair loop on either side)."""
    from falkordb import FalkorDB

    graph = FalkorDB(host=db.host, port=db.port, password=db.password).select_graph("movies")
    if not graph.ro_query(SMALL_READ, PARAMS).result_set:
        graph.query("CREATE (:Movie {title: $title, released: 1999})", PARAMS)


def measure(tmp: Path, rev: str, rounds: int, seconds: float) -> dict[str, Any]:
    baseline = Baseline(rev, tmp)
    try:
        with EmbeddedFalkorDB(tmp / "falkordb") as db:
            _seed(db)
            backend = {"cypher": db.url}
            sides = {
                "this build": Proxy(tmp / "this", backend, {}),
                f"baseline {baseline.rev}": Proxy(
                    tmp / "base", backend, {}, root=baseline.root, limits=baseline.has_limits
                ),
            }
            runs: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
            try:
                for r in range(rounds):  # alternating order: drift hits both alike
                    order = list(sides) if r % 2 == 0 else list(sides)[::-1]
                    for name in order:
                        proxy = sides[name]
                        runs[name].append(
                            asyncio.run(one_round(proxy.address, proxy.proc.pid, seconds))
                        )
                        print(r, name, runs[name][-1], flush=True)
            finally:
                for proxy in sides.values():
                    proxy.stop()
    finally:
        baseline.close()
    return {"rev": baseline.rev, "runs": runs}


def render(result: dict[str, Any], rounds: int, seconds: float, load: str) -> str:
    runs = result["runs"]
    rows = []
    medians = {}
    for name, points in runs.items():
        us = statistics.median(p[0] for p in points)
        qps = statistics.median(p[1] for p in points)
        medians[name] = (us, qps)
        spread = f"{min(p[0] for p in points):.0f} to {max(p[0] for p in points):.0f}"
        rows.append(f"| {name} | {us:.0f} | {spread} | {qps:.0f} |")
    (this_us, this_q), (base_us, base_q) = medians.values()
    return (
        f"{SECTION}\n\n"
        f"`benchmarks/proxy_cpu.py`: the small read of `proxy_overhead.py` from {CLIENTS} async "
        f"neo4j clients against two serves in front of one embedded FalkorDB, {rounds} "
        f"alternating rounds of {seconds:g} s; serve's CPU time (user + system, /proc) per "
        f"query answered. 2 cores shared; load average {load}.\n\n"
        "| serve | CPU µs per query (median) | range over rounds | q/s (median) |\n"
        "|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
        f"**This run**: this build spends {this_us / base_us:.2f}x the CPU per query of "
        f"{result['rev']} ({this_us - base_us:+.0f} µs); throughput {this_q / base_q:.2f}x "
        "(wall clock, so it moves with the machine's other work).\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--baseline", default="HEAD~1", metavar="REV")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="qg-cpu-") as tmp:
        result = measure(Path(tmp), args.baseline, args.rounds, args.seconds)
    load = f"{before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end of the run"
    text = render(result, args.rounds, args.seconds, load)
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
