"""What query-guard costs on the wire: the same queries, in the same run, straight to the
database and through a `query-guard serve` process — p50/p99 latency of a small read,
throughput at 1 and 32 concurrent clients, and the proxy's RSS with 1,000 idle connections.

Two setups. FalkorDB: direct = the `falkordb` Python client over RESP (FalkorDB's own Bolt
hangs), through = neo4j driver → query-guard → FalkorDB over RESP, so the comparison includes
the protocol difference. ArcadeDB (from `arcadedb-jvm`): direct = neo4j driver → ArcadeDB's
Bolt, through = neo4j driver → query-guard → ArcadeDB's Bolt — the apples-to-apples one.
Beside it, when Debian's HAProxy is installed, neo4j driver → HAProxy (TCP mode) → ArcadeDB's
Bolt: one more hop through a relay written in C that parses nothing, the floor any proxy starts
from on this machine.

With `--baseline REV` a third proxy runs from a git worktree of REV (same backend, same
settings, measured in the same interleaved blocks): the ratio of this build to REV says whether
new code slowed the plain read path, without comparing numbers from different runs.

Usage: .venv/bin/python benchmarks/proxy_overhead.py [--write] [--seconds S] [--only NAME]
[--baseline REV] (NAME: falkordb or arcadedb; --write replaces this section of RESULTS.md).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # tests.haproxy

import neo4j  # noqa: E402
from _common import percentile, reference_ms, table, write_section  # noqa: E402
from _measure import Rate, async_throughput  # noqa: E402
from _overhead_report import RELAY, SECOND, interpret  # noqa: E402
from _serve import Baseline, Proxy, idle_rss  # noqa: E402

from query_guard.backends.arcadedb import ArcadeDBServer, unavailable_reason  # noqa: E402
from query_guard.backends.embedded import EmbeddedFalkorDB, free_port  # noqa: E402
from tests.haproxy import Balancer, haproxy_binary  # noqa: E402

SMALL_READ = (
    "MATCH (m:Movie {title: $title}) RETURN m.title AS title, m.released AS released LIMIT 10"
)
PARAMS = {"title": "The Matrix"}
SECTION = "## Proxy overhead (query-guard serve vs direct)"
PASSWORD_ENV = "QG_BENCH_PASSWORD"
ROUNDS = 8  # latency blocks per side
TPUT_ROUNDS = 5  # throughput points per side and client count (the median is reported)


# ---------------------------------------------------------------------- measurements


def latencies(run_once: Callable[[], Any], n: int, cpu: list[float]) -> list[float]:
    """Milliseconds per call, after a warm-up; appends to `cpu` the client's own CPU per call
    (this thread's, µs: the sync client runs in it) over the block."""
    for _ in range(min(200, n)):
        run_once()
    out = []
    cpu_started = time.thread_time_ns()
    for _ in range(n):
        started = time.perf_counter_ns()
        run_once()
        out.append((time.perf_counter_ns() - started) / 1e6)
    cpu.append((time.thread_time_ns() - cpu_started) / 1e3 / max(1, n))
    return out


# ---------------------------------------------------------------------- the two setups


def neo4j_sync(url: str, auth: Any, database: str | None) -> tuple[Any, Callable[[], Any]]:
    driver = neo4j.GraphDatabase.driver(url, auth=auth)
    session = driver.session(database=database)

    def once() -> Any:
        return session.run(SMALL_READ, PARAMS).values()

    return (driver, session), once


async def neo4j_async_tput(
    url: str, auth: Any, database: str | None, clients: int, seconds: float,
    pid: int | None = None,
) -> Rate:  # fmt: skip
    async with neo4j.AsyncGraphDatabase.driver(
        url, auth=auth, max_connection_pool_size=max(clients, 4)
    ) as driver:
        sessions = [driver.session(database=database) for _ in range(clients)]

        async def once(w: int) -> Any:
            return await (await sessions[w].run(SMALL_READ, PARAMS)).values()

        try:
            return await async_throughput(once, clients, seconds, pid)
        finally:
            for s in sessions:
                await s.close()


class Side:
    """One way of running the small read: a sync call and an async throughput measure."""

    def __init__(
        self, label: str, once: Callable[[], Any], tput: Callable[[int], Rate],
        closers: tuple[Any, ...] = (), proxy: Proxy | None = None,
    ) -> None:  # fmt: skip
        self.label, self.once, self.tput, self.proxy = label, once, tput, proxy
        self.closers = closers

    def close(self) -> None:
        for thing in self.closers:
            thing.close()
        if self.proxy is not None:
            self.proxy.stop()


def through(address: str, seconds: float, label: str, proxy: Proxy) -> Side:
    url = f"bolt://{address}"
    (driver, session), once = neo4j_sync(url, ("u", "p"), None)

    def tput(clients: int) -> Rate:
        return asyncio.run(
            neo4j_async_tput(url, ("u", "p"), None, clients, seconds, proxy.proc.pid)
        )

    return Side(label, once, tput, (session, driver), proxy)


def relay(binary: str, tmp: Path, db: ArcadeDBServer, seconds: float) -> Side:
    """neo4j driver → HAProxy in TCP mode → ArcadeDB's Bolt (the driver's database and
    credentials are ArcadeDB's own: HAProxy only moves bytes)."""
    (tmp / "relay").mkdir(exist_ok=True)
    balancer = Balancer(binary, tmp / "relay", free_port(), [db.bolt_port])
    url = f"bolt://127.0.0.1:{balancer.port}"
    (driver, session), once = neo4j_sync(url, db.auth, db.database)

    def tput(clients: int) -> Rate:
        pid = balancer.proc.pid
        return asyncio.run(neo4j_async_tput(url, db.auth, db.database, clients, seconds, pid))

    return Side(RELAY, once, tput, (session, driver, balancer))


def _shuffled(sides: list[Side], block: int) -> list[Side]:
    """`sides` in round `block`'s order: shuffled with the round number as the seed (the same
    orders every run), so a side neither always comes first nor always follows the same one
    (a rotation would keep the cyclic order, and with it each side's predecessor)."""
    order = list(sides)
    random.Random(block).shuffle(order)
    return order


def compare(name: str, direct: Side, proxies: list[Side], n: int) -> list[dict[str, Any]]:
    """Latency interleaved in blocks (drift hits every side alike), in an order shuffled each
    round so no side always follows the same one (the database's state after a side's block
    then biases no side); throughput likewise, in rounds, the median of each side's points."""
    sides = [direct, *proxies]
    lat: dict[str, list[float]] = {side.label: [] for side in sides}
    cpu: dict[str, list[float]] = {side.label: [] for side in sides}
    for block in range(ROUNDS):
        for side in _shuffled(sides, block):
            lat[side.label] += latencies(side.once, n // ROUNDS, cpu[side.label])
    runs: dict[tuple[str, int], list[Rate]] = {(s.label, c): [] for s in sides for c in (1, 32)}
    for block in range(TPUT_ROUNDS):
        for side in _shuffled(sides, block):
            for clients in (1, 32):
                runs[side.label, clients].append(side.tput(clients))
    tput, tput_cpu, spare, middle = (
        {key: statistics.median(getattr(r, field) for r in values) for key, values in runs.items()}
        for field in Rate._fields
    )
    results = []
    for side in proxies:
        before, idle = idle_rss(side.proxy, 1000) if side.proxy else (None, None)
        d, p = lat[direct.label], lat[side.label]
        results.append({
            "name": f"{name}, {side.label}",
            "direct_p50": percentile(d, 50), "direct_p99": percentile(d, 99),
            "proxy_p50": percentile(p, 50), "proxy_p99": percentile(p, 99),
            "direct_tput1": tput[(direct.label, 1)], "proxy_tput1": tput[(side.label, 1)],
            "direct_tput32": tput[(direct.label, 32)], "proxy_tput32": tput[(side.label, 32)],
            "rss_before": before, "rss_idle": idle,
            "direct_client_cpu": statistics.median(cpu[direct.label]),
            "proxy_client_cpu": statistics.median(cpu[side.label]),
            "direct_client_cpu32": tput_cpu[(direct.label, 32)],
            "proxy_client_cpu32": tput_cpu[(side.label, 32)],
            "direct_idle32": spare[(direct.label, 32)],
            "proxy_middle_cpu32": middle[(side.label, 32)],
        })  # fmt: skip
        print(results[-1], flush=True)
    return results


def proxies(
    tmp: Path, backend: dict[str, str], env: dict[str, str], secs: float,
    baseline: Baseline | None = None,
) -> list[Side]:  # fmt: skip
    """query-guard with its defaults, with the repair loop off (to attribute its cost), and
    the baseline revision with its defaults (to see what newer code costs) beside a second
    serve of this build with its defaults (what two identical serves differ by in this run:
    the noise a difference to the baseline must exceed to count)."""
    out = []
    variants = [("defaults", True), ("[repair] off", False)]
    if baseline is not None:
        variants.append((SECOND, True))
    for label, repair in variants:
        proxy = Proxy(tmp / f"proxy-{len(out)}", backend, env, repair=repair)
        out.append(through(proxy.address, secs, label, proxy))
    if baseline is not None:
        proxy = Proxy(
            tmp / "proxy-baseline", backend, env, root=baseline.root, limits=baseline.has_limits
        )
        out.append(through(proxy.address, secs, f"baseline {baseline.rev}", proxy))
    return out


def bench_falkordb(
    tmp: Path, n: int, seconds: float, baseline: Baseline | None = None
) -> list[dict[str, Any]]:
    from falkordb import FalkorDB
    from falkordb.asyncio import FalkorDB as AsyncFalkorDB

    with EmbeddedFalkorDB(tmp / "falkordb") as db:
        graph = FalkorDB(host=db.host, port=db.port, password=db.password).select_graph("movies")

        def direct_tput(clients: int) -> Rate:
            async def run() -> Rate:
                client = AsyncFalkorDB(
                    host=db.host, port=db.port, password=db.password, max_connections=clients + 2
                )
                g = client.select_graph("movies")

                async def once(w: int) -> Any:
                    return (await g.ro_query(SMALL_READ, PARAMS)).result_set

                try:
                    return await async_throughput(once, clients, seconds, None)
                finally:
                    await client.connection.aclose()

            return asyncio.run(run())

        direct = Side("direct", lambda: graph.ro_query(SMALL_READ, PARAMS).result_set, direct_tput)
        sides = proxies(tmp, {"cypher": db.url}, {}, seconds, baseline)
        try:
            return compare("FalkorDB (direct: falkordb client, RESP)", direct, sides, n)
        finally:
            for side in sides:
                side.close()


def bench_arcadedb(
    tmp: Path, n: int, seconds: float, baseline: Baseline | None = None
) -> list[dict[str, Any]]:
    with ArcadeDBServer(tmp / "arcadedb") as db:
        backend = {
            "cypher": db.url, "database": db.database, "credentials": "configured",
            "user": "root", "password_env": PASSWORD_ENV,
        }  # fmt: skip
        (driver, session), once = neo4j_sync(db.url, db.auth, db.database)

        def direct_tput(clients: int) -> Rate:
            return asyncio.run(neo4j_async_tput(db.url, db.auth, db.database, clients, seconds))

        direct = Side("direct", once, direct_tput, (session, driver))
        sides = proxies(tmp, backend, {PASSWORD_ENV: db.root_password}, seconds, baseline)
        binary = haproxy_binary()
        if binary is not None:
            sides.append(relay(binary, tmp, db, seconds))
        else:
            print("HAProxy not installed (apt-get install haproxy): no relay floor")
        try:
            return compare("ArcadeDB (direct: neo4j driver, Bolt)", direct, sides, n)
        finally:
            for side in (direct, *sides):
                side.close()


# ---------------------------------------------------------------------- report


def render(results: list[dict[str, Any]], n: int, seconds: float, load: str = "?") -> str:
    rows = []
    for r in results:
        rows.append([
            r["name"],
            f"{r['direct_p50']:.2f} / {r['proxy_p50']:.2f}",
            f"{r['proxy_p50'] / r['direct_p50']:.2f}x",
            f"{r['direct_p99']:.2f} / {r['proxy_p99']:.2f}",
            f"{r['proxy_p99'] / r['direct_p99']:.2f}x",
            f"{r['direct_tput1']:.0f} / {r['proxy_tput1']:.0f}",
            f"{r['proxy_tput1'] / r['direct_tput1']:.2f}x",
            f"{r['direct_tput32']:.0f} / {r['proxy_tput32']:.0f}",
            f"{r['proxy_tput32'] / r['direct_tput32']:.2f}x",
            f"{r['rss_before']:.0f} → {r['rss_idle']:.0f}" if r["rss_idle"] else "—",
        ])  # fmt: skip
    headers = [
        "backend", "p50 ms direct / proxy", "p50 ratio", "p99 ms direct / proxy", "p99 ratio",
        "q/s 1 client d / p", "ratio", "q/s 32 clients d / p", "ratio",
        "proxy RSS MiB → 1,000 idle conns",
    ]  # fmt: skip
    return (
        f"{SECTION}\n\nSmall read `{SMALL_READ}` ({n} sequential calls per side, interleaved in "
        f"{ROUNDS} blocks, their order shuffled each round; throughput: the median of "
        f"{TPUT_ROUNDS} points of {seconds:g} s, in shuffled rounds, "
        "async driver, one session per client). "
        "Targets (issue 23): p50 ≤ 2x direct and 32-client throughput ≥ 0.5x for FalkorDB "
        "(direct: another client and protocol), p50 ≤ 1.25x and throughput ≥ 0.95x for "
        "ArcadeDB; ≤ 150 MB RSS at 1,000 idle connections. Client, proxy and database share "
        f"the machine's cores ({os.cpu_count()}); load average {load}.\n\n"
        + table(headers, rows)
        + "\n\n"
        + interpret(results)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    parser.add_argument("--calls", type=int, default=2000, help="latency samples per side")
    parser.add_argument("--seconds", type=float, default=2.0, help="per throughput point")
    parser.add_argument("--only", choices=["falkordb", "arcadedb"])
    parser.add_argument("--baseline", metavar="REV", help="also run serve from this revision")
    args = parser.parse_args()
    results = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="qg-bench-") as tmp:
        baseline = Baseline(args.baseline, Path(tmp)) if args.baseline else None
        try:
            if args.only in (None, "falkordb"):
                results += bench_falkordb(Path(tmp) / "f", args.calls, args.seconds, baseline)
            if args.only in (None, "arcadedb"):
                reason = unavailable_reason()
                if reason:
                    print(f"ArcadeDB skipped: {reason}")
                else:
                    results += bench_arcadedb(Path(tmp) / "a", args.calls, args.seconds, baseline)
        finally:
            if baseline is not None:
                baseline.close()
    load = f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end of the run"
    load += f" (a fixed pure-Python workload: {reference_ms():.2f} ms CPU, `_common.reference_ms`)"
    text = render(results, args.calls, args.seconds, load)
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
