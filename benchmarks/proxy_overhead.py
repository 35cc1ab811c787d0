"""What query-guard costs on the wire: the same queries, in the same run, straight to the
database and through a `query-guard serve` process — p50/p99 latency of a small read,
throughput at 1 and 32 concurrent clients, and the proxy's RSS with 1,000 idle connections.

Two setups. FalkorDB: direct = the `falkordb` Python client over RESP (FalkorDB's own Bolt
hangs), through = neo4j driver → query-guard → FalkorDB over RESP, so the comparison includes
the protocol difference. ArcadeDB (from `arcadedb-jvm`): direct = neo4j driver → ArcadeDB's
Bolt, through = neo4j driver → query-guard → ArcadeDB's Bolt — the apples-to-apples one.

With `--baseline REV` a third proxy runs from a git worktree of REV (same backend, same
settings, measured in the same interleaved blocks): the ratio of this build to REV says whether
new code slowed the plain read path, without comparing numbers from different runs.

Usage: .venv/bin/python benchmarks/proxy_overhead.py [--write] [--seconds S] [--only NAME]
[--baseline REV] (NAME: falkordb or arcadedb; --write replaces this section of RESULTS.md).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import neo4j  # noqa: E402
from _common import percentile, table, write_section  # noqa: E402
from _serve import Baseline, Proxy  # noqa: E402

from proxy.backends.arcadedb import ArcadeDBServer, unavailable_reason  # noqa: E402
from proxy.backends.embedded import EmbeddedFalkorDB  # noqa: E402
from proxy.bolt import messages as m  # noqa: E402
from proxy.bolt.packstream import Structure, packb  # noqa: E402

SMALL_READ = (
    "MATCH (m:Movie {title: $title}) RETURN m.title AS title, m.released AS released LIMIT 10"
)
PARAMS = {"title": "The Matrix"}
SECTION = "## Proxy overhead (query-guard serve vs direct)"
PASSWORD_ENV = "QG_BENCH_PASSWORD"


# ---------------------------------------------------------------------- measurements


def latencies(run_once: Callable[[], Any], n: int) -> list[float]:
    """Milliseconds per call, after a warm-up."""
    for _ in range(min(200, n)):
        run_once()
    out = []
    for _ in range(n):
        started = time.perf_counter_ns()
        run_once()
        out.append((time.perf_counter_ns() - started) / 1e6)
    return out


async def throughput(
    query_once: Callable[[int], Awaitable[Any]], clients: int, seconds: float
) -> float:
    """Queries per second with `clients` concurrent loops (each its own connection)."""
    done = 0
    deadline = 0.0

    async def loop(worker: int) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await query_once(worker)
            done += 1

    for w in range(clients):  # warm up every connection
        await query_once(w)
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()
    await asyncio.gather(*(loop(w) for w in range(clients)))
    return done / (time.perf_counter() - started)


def _bolt_logon() -> bytes:
    """Handshake (Bolt 5.4) + HELLO + LOGON, as one idle client sends them."""
    out = bytearray(b"\x60\x60\xb0\x17" + bytes([0, 0, 4, 5]) + bytes(12))
    hello = {"user_agent": "bench/1.0", "bolt_agent": {"product": "bench/1.0"}}
    logon = {"scheme": "basic", "principal": "neo4j", "credentials": "x"}
    m.frame(out, packb(Structure(0x01, [hello])))
    m.frame(out, packb(Structure(0x6A, [logon])))
    return bytes(out)


def idle_connections(address: str, count: int) -> list[socket.socket]:
    """`count` authenticated, idle Bolt connections to the proxy."""
    host, port = address.rsplit(":", 1)
    logon = _bolt_logon()
    socks = []
    for _ in range(count):
        s = socket.create_connection((host, int(port)))
        s.sendall(logon)
        socks.append(s)
    for s in socks:  # the version reply, then SUCCESS for HELLO and for LOGON
        s.settimeout(10)
        got = b""
        while got.count(b"\xb1\x70") < 2:
            chunk = s.recv(4096)
            if not chunk:
                raise SystemExit("the proxy closed an idle connection during logon")
            got += chunk
    return socks


def idle_rss(proxy: Proxy, count: int) -> tuple[float, float]:
    before = proxy.rss_mib()
    socks = idle_connections(proxy.address, count)
    time.sleep(1.0)
    after = proxy.rss_mib()
    for s in socks:
        s.close()
    return before, after


# ---------------------------------------------------------------------- the two setups


def neo4j_sync(url: str, auth: Any, database: str | None) -> tuple[Any, Callable[[], Any]]:
    driver = neo4j.GraphDatabase.driver(url, auth=auth)
    session = driver.session(database=database)

    def once() -> Any:
        return session.run(SMALL_READ, PARAMS).values()

    return (driver, session), once


async def neo4j_async_tput(
    url: str, auth: Any, database: str | None, clients: int, seconds: float
) -> float:
    async with neo4j.AsyncGraphDatabase.driver(
        url, auth=auth, max_connection_pool_size=max(clients, 4)
    ) as driver:
        sessions = [driver.session(database=database) for _ in range(clients)]

        async def once(w: int) -> Any:
            return await (await sessions[w].run(SMALL_READ, PARAMS)).values()

        try:
            return await throughput(once, clients, seconds)
        finally:
            for s in sessions:
                await s.close()


class Side:
    """One way of running the small read: a sync call and an async throughput measure."""

    def __init__(
        self, label: str, once: Callable[[], Any], tput: Callable[[int], float],
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

    def tput(clients: int) -> float:
        return asyncio.run(neo4j_async_tput(url, ("u", "p"), None, clients, seconds))

    return Side(label, once, tput, (session, driver), proxy)


def compare(name: str, direct: Side, proxies: list[Side], n: int) -> list[dict[str, Any]]:
    """Latency interleaved in blocks (drift hits every side alike), then throughput."""
    sides = [direct, *proxies]
    lat: dict[str, list[float]] = {side.label: [] for side in sides}
    for _ in range(4):
        for side in sides:
            lat[side.label] += latencies(side.once, n // 4)
    tput = {(side.label, c): side.tput(c) for side in sides for c in (1, 32)}
    results = []
    for side in proxies:
        assert side.proxy is not None
        before, idle = idle_rss(side.proxy, 1000)
        d, p = lat[direct.label], lat[side.label]
        results.append({
            "name": f"{name}, {side.label}",
            "direct_p50": percentile(d, 50), "direct_p99": percentile(d, 99),
            "proxy_p50": percentile(p, 50), "proxy_p99": percentile(p, 99),
            "direct_tput1": tput[(direct.label, 1)], "proxy_tput1": tput[(side.label, 1)],
            "direct_tput32": tput[(direct.label, 32)], "proxy_tput32": tput[(side.label, 32)],
            "rss_before": before, "rss_idle": idle,
        })  # fmt: skip
        print(results[-1], flush=True)
    return results


def proxies(
    tmp: Path, backend: dict[str, str], env: dict[str, str], secs: float,
    baseline: Baseline | None = None,
) -> list[Side]:  # fmt: skip
    """query-guard with its defaults, with the repair loop off (to attribute its cost), and
    the baseline revision with its defaults (to see what newer code costs)."""
    out = []
    for label, repair in (("defaults", True), ("[repair] off", False)):
        proxy = Proxy(tmp / f"proxy-{repair}", backend, env, repair=repair)
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

        def direct_tput(clients: int) -> float:
            async def run() -> float:
                client = AsyncFalkorDB(
                    host=db.host, port=db.port, password=db.password, max_connections=clients + 2
                )
                g = client.select_graph("movies")

                async def once(w: int) -> Any:
                    return (await g.ro_query(SMALL_READ, PARAMS)).result_set

                try:
                    return await throughput(once, clients, seconds)
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

        def direct_tput(clients: int) -> float:
            return asyncio.run(neo4j_async_tput(db.url, db.auth, db.database, clients, seconds))

        direct = Side("direct", once, direct_tput, (session, driver))
        sides = proxies(tmp, backend, {PASSWORD_ENV: db.root_password}, seconds, baseline)
        try:
            return compare("ArcadeDB (direct: neo4j driver, Bolt)", direct, sides, n)
        finally:
            for side in (direct, *sides):
                side.close()


# ---------------------------------------------------------------------- report

TARGET_P50 = 1.15  # proxy p50 / direct p50
TARGET_TPUT32 = 0.85  # proxy / direct, 32 clients
TARGET_RSS_MIB = 150.0  # proxy RSS with 1,000 idle connections

# What the path does is a fact of the code, not of a run; every number below is computed.
PATH_NOTE = """\
On the Bolt path the proxy relays upstream RECORD messages undecoded (Bolt >= 5 on both
sides), writes RUN's SUCCESS, the records and PULL's SUCCESS in one socket write, and skips
the repair loop when the peeked records plainly are rows. FalkorDB rows also contain the
Bolt-vs-RESP client difference (direct = `falkordb` client, through the proxy = Bolt).
Client, proxy and database share the machine's cores, so throughput ratios move between runs."""


def _verdict(value: float, target: float, higher_is_better: bool) -> str:
    met = value >= target if higher_is_better else value <= target
    return "met" if met else "missed"


def interpret(results: list[dict[str, Any]]) -> str:
    """The reading of this run's numbers, computed from them (nothing here is fixed text)."""
    lines = []
    for r in results:
        p50 = r["proxy_p50"] / r["direct_p50"]
        tput = r["proxy_tput32"] / r["direct_tput32"]
        lines.append(
            f"- {r['name']}: p50 {p50:.2f}x direct "
            f"(+{r['proxy_p50'] - r['direct_p50']:.2f} ms per query; target ≤ {TARGET_P50}x: "
            f"{_verdict(p50, TARGET_P50, False)}), 32-client throughput {tput:.2f}x "
            f"(target ≥ {TARGET_TPUT32}x: {_verdict(tput, TARGET_TPUT32, True)}), "
            f"RSS {r['rss_idle']:.0f} MiB with 1,000 idle connections "
            f"(+{r['rss_idle'] - r['rss_before']:.0f} MiB; target ≤ {TARGET_RSS_MIB:.0f}: "
            f"{_verdict(r['rss_idle'], TARGET_RSS_MIB, False)})."
        )
    by_backend: dict[str, dict[str, dict[str, Any]]] = {}
    for r in results:
        backend, _, variant = r["name"].rpartition(", ")
        by_backend.setdefault(backend, {})[variant] = r
    for backend, variants in by_backend.items():
        on, off = variants.get("defaults"), variants.get("[repair] off")
        if on and off:
            delta = (on["proxy_p50"] - off["proxy_p50"]) * 1000
            lines.append(
                f"- {backend}: the repair loop being on changes the p50 by {delta:+.0f} µs."
            )
        base = next((r for v, r in variants.items() if v.startswith("baseline ")), None)
        if on and base:
            rev = base["name"].rpartition("baseline ")[2]
            p50 = on["proxy_p50"] / base["proxy_p50"]
            tput = on["proxy_tput32"] / base["proxy_tput32"]
            slower = p50 > 1.05 or tput < 0.95
            lines.append(
                f"- {backend}: this build against {rev} (same run): p50 {p50:.2f}x "
                f"({(on['proxy_p50'] - base['proxy_p50']) * 1000:+.0f} µs), 32-client throughput "
                f"{tput:.2f}x — the plain read path is "
                + ("slower (by more than 5 %)." if slower else "not slower (within 5 %).")
            )
    return "**This run**:\n\n" + "\n".join(lines) + "\n\n" + PATH_NOTE


def render(results: list[dict[str, Any]], n: int, seconds: float) -> str:
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
            f"{r['rss_before']:.0f} → {r['rss_idle']:.0f}",
        ])  # fmt: skip
    headers = [
        "backend", "p50 ms direct / proxy", "p50 ratio", "p99 ms direct / proxy", "p99 ratio",
        "q/s 1 client d / p", "ratio", "q/s 32 clients d / p", "ratio",
        "proxy RSS MiB → 1,000 idle conns",
    ]  # fmt: skip
    return (
        f"{SECTION}\n\nSmall read `{SMALL_READ}` ({n} sequential calls per side, interleaved in "
        f"blocks; throughput {seconds:.0f} s per point, async driver, one session per client). "
        "Targets: p50 ≤ 1.15x direct, 32-client throughput ≥ 0.85x direct, ≤ 150 MB RSS at "
        "1,000 idle connections. Client, proxy and database share the machine's cores.\n\n"
        + table(headers, rows)
        + "\n\n"
        + interpret(results)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    parser.add_argument("--calls", type=int, default=2000, help="latency samples per side")
    parser.add_argument("--seconds", type=float, default=4.0, help="per throughput point")
    parser.add_argument("--only", choices=["falkordb", "arcadedb"])
    parser.add_argument("--baseline", metavar="REV", help="also run serve from this revision")
    args = parser.parse_args()
    results = []
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
    text = render(results, args.calls, args.seconds)
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
