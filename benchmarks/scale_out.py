"""Scale-out: `[server] workers` and several proxies behind HAProxy, in one run.

1. Workers: the same small read through `serve` with `workers = 1` and `workers = 2` (one
   FalkorDB behind both), throughput at 32 concurrent clients spread over two load-generating
   processes, in interleaved blocks (1, 2, 2, 1, …); the ratio 2 / 1 says how much a second
   worker adds on this machine, where the clients and the database share the same cores.
2. Failover: two `serve` processes behind HAProxy (TCP, health checks every 200 ms), a routing
   driver (`neo4j://balancer`, `execute_query` with its retries) reading from 4 threads while
   each proxy in turn is stopped (SIGTERM: connections close between transactions) and started
   again: reads, reads that failed after the driver's retries, and the slowest read.

Usage: .venv/bin/python benchmarks/scale_out.py [--seconds S] [--write]
(HAProxy from Debian: apt-get install haproxy; --write replaces this section of RESULTS.md).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import neo4j  # noqa: E402
import redis  # noqa: E402
from _common import ROOT, percentile, table, write_section  # noqa: E402
from _serve import Proxy  # noqa: E402

from query_guard.backends.embedded import EmbeddedFalkorDB, free_port  # noqa: E402
from tests.haproxy import Balancer, haproxy_binary  # noqa: E402

READ = "MATCH (p:Person)-[:ACTED_IN]->(m:Movie {title: $title}) RETURN p.name AS name"
PARAMS = {"title": "The Matrix"}
AUTH = ("bench", "bench")
CLIENTS = 32
LOADERS = 2  # load-generating processes (one Python process cannot drive two workers)


async def _throughput(url: str, clients: int, seconds: float) -> int:
    done = 0
    async with neo4j.AsyncGraphDatabase.driver(
        url, auth=AUTH, max_connection_pool_size=clients
    ) as driver:
        sessions = [driver.session() for _ in range(clients)]
        for session in sessions:
            await (await session.run(READ, PARAMS)).consume()
        deadline = time.perf_counter() + seconds

        async def loop(session: neo4j.AsyncSession) -> None:
            nonlocal done
            while time.perf_counter() < deadline:
                await (await session.run(READ, PARAMS)).values()
                done += 1

        await asyncio.gather(*(loop(s) for s in sessions))
        for session in sessions:
            await session.close()
    return done


def _loader(url: str, clients: int, seconds: float, out: multiprocessing.Queue) -> None:
    out.put(asyncio.run(_throughput(url, clients, seconds)))


def throughput(url: str, seconds: float) -> float:
    """Queries per second from LOADERS processes with CLIENTS connections in all."""
    out: multiprocessing.Queue = multiprocessing.Queue()
    procs = [
        multiprocessing.Process(target=_loader, args=(url, CLIENTS // LOADERS, seconds, out))
        for _ in range(LOADERS)
    ]
    for proc in procs:
        proc.start()
    total = sum(out.get(timeout=seconds + 120) for _ in procs)
    for proc in procs:
        proc.join(30)
    return total / seconds


def bench_workers(db: EmbeddedFalkorDB, tmp: Path, seconds: float, rounds: int) -> list[list]:
    backend = {"cypher": f"falkordb://{db.host}:{db.port}/movies"}
    proxies = {}
    for n in (1, 2):
        port = free_port()
        proxies[n] = Proxy(tmp / f"w{n}", backend, {}, server={"bolt": f"127.0.0.1:{port}"},
                           extra_server={"workers": n})  # fmt: skip
        time.sleep(2.0 if n > 1 else 0.0)  # the second worker is listening too
    try:
        qps: dict[int, list[float]] = {1: [], 2: []}
        for r in range(rounds):
            for n in (1, 2) if r % 2 == 0 else (2, 1):
                qps[n].append(throughput(f"bolt://{proxies[n].address}", seconds))
    finally:
        for proxy in proxies.values():
            proxy.stop()
    one, two = statistics.median(qps[1]), statistics.median(qps[2])
    return [
        ["workers = 1", f"{one:.0f}", "1.00"],
        ["workers = 2", f"{two:.0f}", f"{two / one:.2f}"],
    ]


def bench_failover(db: EmbeddedFalkorDB, tmp: Path, cycles: int) -> list[list]:
    backend = {"cypher": f"falkordb://{db.host}:{db.port}/movies"}
    ports, lb = [free_port(), free_port()], free_port()
    balancer = Balancer(haproxy_binary() or "haproxy", tmp, lb, ports)

    def start(i: int) -> Proxy:
        server = {"bolt": f"127.0.0.1:{ports[i]}", "advertised_address": f"127.0.0.1:{lb}"}
        return Proxy(tmp / f"lb{i}-{time.monotonic_ns()}", backend, {}, server=server)

    proxies = [start(0), start(1)]
    stop, lock = threading.Event(), threading.Lock()
    times: list[float] = []
    failures: list[str] = []
    try:
        with neo4j.GraphDatabase.driver(f"neo4j://127.0.0.1:{lb}", auth=AUTH) as driver:

            def read() -> None:
                while not stop.is_set():
                    t = time.perf_counter()
                    try:
                        driver.execute_query(READ, PARAMS, routing_=neo4j.RoutingControl.READ)
                    except Exception as exc:  # failed after the driver's retries
                        with lock:
                            failures.append(type(exc).__name__)
                        continue
                    with lock:
                        times.append(time.perf_counter() - t)

            threads = [threading.Thread(target=read) for _ in range(4)]
            for thread in threads:
                thread.start()
            for _ in range(cycles):
                for i in (0, 1):
                    time.sleep(1.0)
                    proxies[i].stop()
                    time.sleep(1.0)
                    proxies[i] = start(i)
            time.sleep(1.0)
            stop.set()
            for thread in threads:
                thread.join(60)
    finally:
        for proxy in proxies:
            proxy.stop()
        balancer.stop()
    ms = [t * 1000 for t in times]
    return [[
        f"{2 * cycles} restarts", len(times), len(failures),
        f"{percentile(ms, 50):.1f}", f"{percentile(ms, 99):.1f}", f"{max(ms):.0f}",
    ]]  # fmt: skip


FAILOVER_HEADERS = ["failover", "reads", "failed after retries", "p50 ms", "p99 ms", "slowest ms"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        db = EmbeddedFalkorDB(tmp / "falkordb", auth=False).start()
        try:
            with redis.Redis(host=db.host, port=db.port) as client:
                movies = (ROOT / "proxy" / "data" / "movies.cypher").read_text("utf-8")
                client.execute_command("GRAPH.QUERY", "movies", movies)
            load_before = os.getloadavg()[0]
            workers = bench_workers(db, tmp, args.seconds, args.rounds)
            failover = bench_failover(db, tmp, cycles=2)
            load_after = os.getloadavg()[0]
        finally:
            db.stop()
    text = render(workers, failover, args, load_before, load_after)
    print(text)
    if args.write:
        write_section("## Scale-out", text)


def render(
    workers: list, failover: list, args: argparse.Namespace, before: float, after: float
) -> str:
    two = float(workers[1][2])
    verdict = (
        f"a second worker adds {100 * (two - 1):.0f} % throughput"
        if two > 1.05 else "a second worker adds nothing measurable"
    )  # fmt: skip
    failed = failover[0][2]
    lines = [
        "## Scale-out (workers, HAProxy failover)",
        "",
        f"`benchmarks/scale_out.py`: {os.cpu_count()} cores; 1-min load average "
        f"{before:.1f} before, {after:.1f} after. {CLIENTS} clients from {LOADERS} "
        f"load-generating processes on the same machine, {args.rounds} interleaved blocks of "
        f"{args.seconds:g} s per setting, medians.",
        "",
        table(["setting", "reads/s", "ratio to 1 worker"], workers),
        "",
        f"Verdict: {verdict} on this machine (clients, proxy workers and FalkorDB share its "
        "cores; the figure is a floor for a machine with cores to spare).",
        "",
        table(FAILOVER_HEADERS, failover),
        "",
        f"Verdict: {'no read failed' if failed == 0 else f'{failed} reads failed'} while each "
        "proxy behind HAProxy was stopped and started again; the slowest read is the driver's "
        "retry over a closed connection.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
