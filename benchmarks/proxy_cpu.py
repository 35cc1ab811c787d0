"""The proxy's own CPU per query on a cached verdict, this build against a baseline revision:
two `query-guard serve` processes (this checkout, and a git worktree of REV running its own
code) in front of one backend, the same small query from many concurrent clients, in
alternating rounds. Serve's CPU seconds (from /proc) divided by the queries it answered is far
less sensitive to a busy machine than wall-clock latency, so it can tell builds apart when
`proxy_overhead.py`'s two identical serves already differ by more than the change.

Fronts (`--front`, any of them, in one run each):
- falkordb: 32 async neo4j clients → Bolt front → embedded FalkorDB (RESP), the small read;
- arcadedb: 32 async neo4j clients → Bolt front → ArcadeDB's Bolt (the relay), the small read;
- gremlin: 16 gremlinpython clients (GraphBinary, one thread each) → Gremlin WebSocket front →
  embedded graphersal (IT-support demo graph), `gremlin_front.py`'s small traversal.

Usage: .venv/bin/python benchmarks/proxy_cpu.py [--front NAME ...] [--baseline REV]
[--rounds N] [--seconds S] [--write]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import neo4j  # noqa: E402
from _common import ROOT, write_section  # noqa: E402
from _measure import cpu_seconds, throughput  # noqa: E402
from _serve import Baseline, Proxy  # noqa: E402
from proxy_overhead import PARAMS, PASSWORD_ENV, SMALL_READ  # noqa: E402

from query_guard.backends.arcadedb import ArcadeDBServer  # noqa: E402
from query_guard.backends.embedded import EmbeddedFalkorDB  # noqa: E402

SECTION = "## Proxy CPU per query (this build vs a baseline)"
BOLT_CLIENTS = 32
GREMLIN_CLIENTS = 16
SMALL_TRAVERSAL = "g.V(anchor).out('hasReason').values('text')"
SEGRA_TOML = ROOT / "conf" / "segra-similarity.toml"
FRONTS = ("falkordb", "arcadedb", "gremlin")
Round = Callable[[str, int, float], tuple[float, float]]  # address, pid, seconds → (µs, q/s)


@dataclass
class Setup:
    """How to start a serve for one front and how to load it for one round."""

    label: str
    backend: dict[str, str]
    one_round: Round
    env: dict[str, str] = field(default_factory=dict)
    server: dict[str, str] | None = None
    extra: str = ""
    listener: str = "bolt"


# ---------------------------------------------------------------------- clients


def bolt_round(database: str | None) -> Round:
    def run(address: str, pid: int, seconds: float) -> tuple[float, float]:
        return asyncio.run(_bolt_round(address, pid, seconds, database))

    return run


async def _bolt_round(
    address: str, pid: int, seconds: float, database: str | None
) -> tuple[float, float]:
    """(serve's CPU µs per query, queries per second) with BOLT_CLIENTS sessions."""
    async with neo4j.AsyncGraphDatabase.driver(
        f"bolt://{address}", auth=("u", "p"), max_connection_pool_size=BOLT_CLIENTS + 2
    ) as driver:
        sessions = [driver.session(database=database) for _ in range(BOLT_CLIENTS)]
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
        await asyncio.gather(*(loop(w) for w in range(BOLT_CLIENTS)))
        used, elapsed = cpu_seconds(pid) - cpu, time.perf_counter() - started
        for s in sessions:
            await s.close()
    return used / done * 1e6, done / elapsed


def gremlin_round(address: str, pid: int, seconds: float) -> tuple[float, float]:
    """(serve's CPU µs per query, queries per second) with GREMLIN_CLIENTS threads."""
    from gremlin_python.driver.client import Client

    clients = [Client(f"ws://{address}/gremlin", "g", pool_size=1) for _ in range(GREMLIN_CLIENTS)]
    bindings = {"anchor": "case-2"}
    try:
        if not clients[0].submit(SMALL_TRAVERSAL, bindings).all().result():
            raise SystemExit("the small traversal found nothing on the demo graph")
        workers = [lambda c=c: c.submit(SMALL_TRAVERSAL, bindings).all().result() for c in clients]
        for once in workers:  # every connection open, the verdict cached
            once()
        cpu = cpu_seconds(pid)
        qps = throughput(workers, seconds)
        used = cpu_seconds(pid) - cpu
    finally:
        for c in clients:
            c.close()
    return used / (qps * seconds) * 1e6, qps


# ---------------------------------------------------------------------- backends


def _seed_falkordb(db: EmbeddedFalkorDB) -> None:
    """The movie the small read finds (a result with rows: no repair loop on either side)."""
    from falkordb import FalkorDB

    graph = FalkorDB(host=db.host, port=db.port, password=db.password).select_graph("movies")
    if not graph.ro_query(SMALL_READ, PARAMS).result_set:
        graph.query("CREATE (:Movie {title: $title, released: 1999})", PARAMS)


@contextmanager
def backend_for(front: str, tmp: Path) -> Iterator[Setup]:
    if front == "falkordb":
        with EmbeddedFalkorDB(tmp / "falkordb") as db:
            _seed_falkordb(db)
            yield Setup("FalkorDB, Bolt front", {"cypher": db.url}, bolt_round(None))
    elif front == "arcadedb":
        with ArcadeDBServer(tmp / "arcadedb") as adb:  # the movie graph loaded
            backend = {
                "cypher": adb.url, "database": adb.database, "credentials": "configured",
                "user": "root", "password_env": PASSWORD_ENV,
            }  # fmt: skip
            yield Setup(
                "ArcadeDB, Bolt relay", backend, bolt_round(adb.database),
                env={PASSWORD_ENV: adb.root_password},
            )  # fmt: skip
    else:
        yield Setup(
            "graphersal, Gremlin front", {}, gremlin_round,
            server={"bolt": "", "gremlin": "127.0.0.1:0"}, extra=SEGRA_TOML.read_text(),
            listener="ws",
        )  # fmt: skip


def measure(tmp: Path, front: str, baseline: Baseline, rounds: int, seconds: float) -> dict:
    with backend_for(front, tmp / front) as setup:

        def serve(where: str, **kw: Any) -> Proxy:
            return Proxy(
                tmp / front / where, setup.backend, setup.env, server=setup.server,
                extra=setup.extra, listener=setup.listener, **kw,
            )  # fmt: skip

        sides = {"this build": serve("this")}
        try:
            sides[f"baseline {baseline.rev}"] = serve(
                "base", root=baseline.root, limits=baseline.has_limits
            )
            runs: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
            for r in range(rounds):  # alternating order: drift hits both alike
                for name in list(sides) if r % 2 == 0 else list(sides)[::-1]:
                    proxy = sides[name]
                    runs[name].append(setup.one_round(proxy.address, proxy.proc.pid, seconds))
                    print(front, r, name, runs[name][-1], flush=True)
        finally:
            for proxy in sides.values():
                proxy.stop()
    return {"label": setup.label, "runs": runs}


# ---------------------------------------------------------------------- report


def render(results: list[dict], rev: str, rounds: int, seconds: float, load: str) -> str:
    rows, lines = [], []
    for result in results:
        medians = []
        for name, points in result["runs"].items():
            us = statistics.median(p[0] for p in points)
            qps = statistics.median(p[1] for p in points)
            medians.append((us, qps))
            spread = f"{min(p[0] for p in points):.0f} to {max(p[0] for p in points):.0f}"
            rows.append(f"| {result['label']} | {name} | {us:.0f} | {spread} | {qps:.0f} |")
        (this_us, this_q), (base_us, base_q) = medians
        this_runs, base_runs = result["runs"].values()
        paired = sorted(t[0] / b[0] for t, b in zip(this_runs, base_runs, strict=True))
        lines.append(
            f"- {result['label']}: this build spends {this_us / base_us:.2f}x the CPU per "
            f"query of {rev} ({this_us - base_us:+.0f} µs); round by round (each round runs "
            f"both, back to back) {statistics.median(paired):.2f}x, from {paired[0]:.2f}x to "
            f"{paired[-1]:.2f}x; throughput {this_q / base_q:.2f}x (wall clock, so it moves "
            "with the machine's other work)."
        )
    return (
        f"{SECTION}\n\n"
        "`benchmarks/proxy_cpu.py`: two serves (this build, a worktree of the baseline) in "
        f"front of one backend, {rounds} alternating rounds of {seconds:g} s each; serve's CPU "
        "time (user + system, /proc) per query answered, on a cached verdict. Bolt fronts: "
        f"`proxy_overhead.py`'s small read from {BOLT_CLIENTS} async neo4j clients (FalkorDB "
        "embedded over RESP; ArcadeDB's Bolt through the relay). Gremlin front: "
        f"`gremlin_front.py`'s small traversal from {GREMLIN_CLIENTS} gremlinpython clients "
        "(GraphBinary) to embedded graphersal. 2 cores shared with other engineers' work; "
        f"load average {load}.\n\n"
        "| front | serve | CPU µs per query (median) | range over rounds | q/s (median) |\n"
        "|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n**This run**:\n\n"
        + "\n".join(lines) + "\n"
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--front", nargs="+", choices=FRONTS, default=list(FRONTS))
    parser.add_argument("--baseline", default="HEAD~1", metavar="REV")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # gremlinpython's connection chatter
    before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="qg-cpu-") as tmp:
        baseline = Baseline(args.baseline, Path(tmp))
        try:
            results = [
                measure(Path(tmp), front, baseline, args.rounds, args.seconds)
                for front in args.front
            ]
        finally:
            baseline.close()
    load = f"{before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end of the run"
    text = render(results, baseline.rev, args.rounds, args.seconds, load)
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
