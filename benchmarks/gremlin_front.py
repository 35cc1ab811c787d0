"""The Gremlin side in one run, on the IT-support demo graph (the embedded graphersal's default)
with SEGRA's similarity configuration (`conf/segra-similarity.toml`):

(a) per SEGRA demo query: the guard alone (uncached, and cached as a repeated query finds it),
    graphersal executing the judged traversal in-process, and guard + execution through
    `query-guard serve`'s Gremlin front with gremlinpython's Client (GraphBinary), p50 / p99;
(b) the front's overhead for a small traversal: graphersal in-process vs gremlinpython Client →
    `serve` (`[server] gremlin`, embedded graphersal) — p50 latency and throughput at 1 and 16
    concurrent clients (one thread and one connection each; in-process: one thread each).

In-process: this process's graphersal and guard, built as `serve` builds them
(`GremlinService.create`, same seeded demo graph). Usage: .venv/bin/python
benchmarks/gremlin_front.py [--write] [--calls N] [--seconds S] (--write: RESULTS.md)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import graphersal as gs  # noqa: E402
from _common import ROOT, percentile, table, write_section  # noqa: E402
from _measure import cpu_seconds, latencies, throughput  # noqa: E402
from _serve import Proxy  # noqa: E402
from gremlin_python.driver.client import Client  # noqa: E402
from gremlin_python.driver.protocol import GremlinServerError  # noqa: E402

from query_guard.config.load import parse_config  # noqa: E402
from query_guard.gremlin.graphersal_dialect import render  # noqa: E402
from query_guard.gremlin.language import GremlinQuery  # noqa: E402
from query_guard.model import Severity, Verdict  # noqa: E402
from query_guard.run.cuts import collect  # noqa: E402
from query_guard.run.gremlin_service import GremlinService  # noqa: E402
from query_guard.run.guards import LanguageGuard  # noqa: E402
from query_guard.run.limits import Limits  # noqa: E402
from query_guard.run.request import QueryRequest  # noqa: E402
from query_guard.run.runner import Runner  # noqa: E402

SECTION = "## Gremlin front: SEGRA demo queries and front overhead (graphersal)"
SEGRA_TOML = ROOT / "conf" / "segra-similarity.toml"
WINDOW = "has('createdAt', P.between('2024-01-01', '2024-06-30'))"
CORRECT = (
    "g.V(anchor).out('hasReason').bothE('similarReason').has('similarityScore', P.gte(0.8))"
    f".otherV().in('hasReason').{WINDOW}.dedup().values('title')"
)
# SEGRA's similarity walks as an LLM writes them (tests/e2e/test_gremlin_segra_demo.py): the
# correct one, three the guard fixes from the configuration, two it refuses.
QUERIES = {
    "correct walk": CORRECT,
    "threshold on the vertex": CORRECT.replace(
        ".has('similarityScore', P.gte(0.8)).otherV()",
        ".otherV().has('similarityScore', P.gte(0.8))",
    ),
    "no threshold": CORRECT.replace(".has('similarityScore', P.gte(0.8))", ""),
    "one-way walk": CORRECT.replace("bothE('similarReason')", "outE('similarReason')").replace(
        ".otherV()", ".inV()"
    ),
    "wrong bracket edge": CORRECT.replace("out('hasReason')", "out('exhibits')"),
    "similarity-edge scan": "g.E().hasLabel('similarReason').values('similarityScore')",
}
SMALL = "g.V(anchor).out('hasReason').values('text')"
CLIENTS = (1, 16)
TARGET_FRONT_P50 = 3.0  # issue 23: the small traversal's p50 through the front / in-process
GUARD_TARGET_US = 500  # uncached p50, as for the Cypher guard


def refused(call: Callable[[], Any]) -> Callable[[], Any]:
    """A call the front answers with an error: its time is the time to the refusal."""

    def once() -> None:
        with contextlib.suppress(GremlinServerError):
            call()

    return once


# ---------------------------------------------------------------------- the two sides


@dataclass
class InProcess:
    """The guard and graphersal in this process, built the way `serve` builds them."""

    service: GremlinService
    loop: asyncio.AbstractEventLoop
    anchor: str = ""
    policy: Any = field(default_factory=gs.AccessPolicy.read_only)

    def verdict(self, text: str) -> Verdict:
        """The Gremlin front's guard call (its cache first), as the runner makes it."""
        return LanguageGuard(self.service.guard, "gremlin")(text, {"anchor": self.anchor})

    def runner(self, text: str) -> Callable[[], list[Any]] | None:
        """graphersal executing the judged traversal (None: the guard refuses it)."""
        verdict = self.verdict(text)
        if verdict.blocked:
            return None
        script = render(GremlinQuery.parse(verdict.to_run).traversal).script
        graph, params, policy = self.service.backend.graph, {"anchor": self.anchor}, self.policy
        return lambda: list(graph.execute(script, params, policy=policy) or ())

    def request_path(self, text: str) -> Callable[[], Any] | None:
        """What `serve` does for a request past its cached guard, without the network: the
        one request path (`query_guard.run.Runner`, the route the Gremlin front uses: verdict,
        graphersal through the backend, the repair loop's look at the result) and the front's
        collection of the stream with the result cuts."""
        if self.verdict(text).blocked:
            return None
        runner = Runner({"gremlin": self.service.route()}, limits=Limits())

        async def once() -> None:
            query = QueryRequest(text, "gremlin", "gremlin", parameters={"anchor": self.anchor})
            outcome = await runner.run(query)
            assert outcome.stream is not None, outcome
            limits = runner.limits
            await collect(outcome.stream, limits.max_result_rows, limits.max_result_bytes)

        return lambda: self.loop.run_until_complete(once())

    def close(self) -> None:
        self.loop.run_until_complete(self.service.close())
        self.loop.close()

    def guard_uncached(self, text: str) -> Callable[[], Any]:
        guard = self.service.guard
        return lambda: guard._check(text, "gremlin")  # the full pipeline, past the cache


def open_in_process(tmp: Path, raw: dict[str, Any]) -> InProcess:
    config = parse_config({**raw, "server": {"bolt": "", "data_dir": str(tmp)}})
    loop = asyncio.new_event_loop()
    return InProcess(loop.run_until_complete(GremlinService.create(config)), loop)


def find_anchor(c: Client) -> str:
    """A case whose reason has strongly similar reasons in the window (the demo is generated)."""
    for n in range(1, 49):
        if c.submit(CORRECT, {"anchor": f"case-{n}"}).all().result():
            return f"case-{n}"
    raise SystemExit("the demo graph has no case with a similar reason in the window")


# ---------------------------------------------------------------------- the run


def outcome(verdict: Verdict) -> str:
    shown = [f for f in verdict.findings if not verdict.blocked or f.severity is Severity.ERROR]
    codes = ", ".join(dict.fromkeys(f.code for f in shown)) or "no findings"
    return f"{'refused' if verdict.blocked else str(verdict.action)} ({codes})"


def segra(local: InProcess, front: Client, n: int) -> list[dict[str, Any]]:
    bindings = {"anchor": local.anchor}
    rows = []
    for name, text in QUERIES.items():
        verdict = local.verdict(text)
        run, path = local.runner(text), local.request_path(text)
        through = lambda t=text: front.submit(t, bindings).all().result()  # noqa: E731
        cached = lambda t=text: local.verdict(t)  # noqa: E731
        row = {
            "name": name, "outcome": outcome(verdict), "blocked": verdict.blocked,
            "results": None if run is None else len(run()),
            "guard": latencies(local.guard_uncached(text), n),
            "guard_cached": latencies(cached, n),
            "engine": latencies(run, n) if run is not None else [],
            "path": latencies(path, n) if path is not None else [],
            "front": latencies(refused(through) if verdict.blocked else through, n),
        }  # fmt: skip
        rows.append(row)
        print(name, {k: percentile(v, 50) for k, v in row.items() if isinstance(v, list)})
    return rows


def overhead(local: InProcess, url: str, pid: int, n: int, seconds: float) -> dict[str, Any]:
    run = local.runner(SMALL)
    assert run is not None, "the small traversal must run"
    bindings = {"anchor": local.anchor}
    clients = [Client(url, "g", pool_size=1) for _ in range(max(CLIENTS))]
    try:
        fronts = [lambda c=c: c.submit(SMALL, bindings).all().result() for c in clients]
        lat: dict[str, list[float]] = {"local": [], "front": []}
        for _ in range(4):  # interleaved blocks: drift hits both sides alike
            lat["local"] += latencies(run, n // 4)
            lat["front"] += latencies(fronts[0], n // 4)
        tput, cpu = {}, {}
        for k in CLIENTS:
            tput[("local", k)] = throughput([run] * k, seconds)
            before = cpu_seconds(), cpu_seconds(pid)
            started = time.perf_counter()
            tput[("front", k)] = throughput(fronts[:k], seconds)
            elapsed = time.perf_counter() - started
            queries = tput[("front", k)] * seconds
            cpu[("client", k)] = (cpu_seconds() - before[0]) / elapsed  # cores busy
            cpu[("proxy", k)] = (cpu_seconds(pid) - before[1]) / elapsed
            cpu[("proxy_ms", k)] = (cpu_seconds(pid) - before[1]) * 1000 / queries
            print(k, "clients", tput[("local", k)], tput[("front", k)], cpu)
    finally:
        for c in clients:
            c.close()
    return {"lat": lat, "tput": tput, "cpu": cpu, "results": len(run())}


# ---------------------------------------------------------------------- report


def _ms(values: list[float], q: float) -> str:
    return f"{percentile(values, q):.3f}" if values else "—"


def interpret(rows: list[dict[str, Any]], over: dict[str, Any]) -> str:
    """The reading of this run's numbers, computed from them (nothing here is fixed text)."""
    lines = []
    ran = [r for r in rows if not r["blocked"]]
    for r in ran:
        front = percentile(r["front"], 50)
        guard, engine = percentile(r["guard_cached"], 50), percentile(r["engine"], 50)
        path, uncached = percentile(r["path"], 50), percentile(r["guard"], 50)
        rest = front - path  # the network side: client, WebSocket, GraphBinary
        lines.append(
            f"- {r['name']}: {front:.2f} ms p50 through the front = graphersal "
            f"{engine:.2f} ms ({100 * engine / front:.0f} %) + the cached guard "
            f"{guard * 1000:.0f} µs + the rest of serve's request path in-process "
            f"{path - engine - guard:.2f} ms ({100 * (path - engine - guard) / front:.0f} %: "
            "rendering, converting results, the repair check, the parse lookup) + "
            f"{rest:.2f} ms ({100 * rest / front:.0f} %) for the client, the WebSocket and "
            f"GraphBinary. Seen for the first time, it also pays the uncached guard, "
            f"{uncached:.2f} ms p50 ({uncached / engine:.1f}x graphersal's time)."
        )
    guard_us = {r["name"]: percentile(r["guard"], 50) * 1000 for r in rows}
    missed = [name for name, us in guard_us.items() if us > GUARD_TARGET_US]
    lines.append(
        f"- Uncached guard p50 over these queries: {min(guard_us.values()):.0f} to "
        f"{max(guard_us.values()):.0f} µs; the Gremlin guard's target (p50 ≤ "
        f"{GUARD_TARGET_US} µs, `gremlin_latency.py`) is missed by {len(missed)} of {len(rows)}"
        + (f" ({', '.join(missed)})." if missed else ".")
    )
    blocked = [r for r in rows if r["blocked"]]
    if blocked and ran:
        slowest = max(percentile(r["front"], 50) for r in blocked)
        fastest = min(percentile(r["front"], 50) for r in ran)
        lines.append(
            f"- Refused queries ({', '.join(r['name'] for r in blocked)}) come back in at most "
            f"{slowest:.2f} ms p50 without reaching graphersal; "
            + ("faster than" if slowest < fastest else "not faster than")
            + f" the fastest query that runs ({fastest:.2f} ms)."
        )
    lat, tput = over["lat"], over["tput"]
    local50, front50 = percentile(lat["local"], 50), percentile(lat["front"], 50)
    lines.append(
        f"- Small traversal: the front adds {front50 - local50:.2f} ms to graphersal's "
        f"in-process {local50 * 1000:.0f} µs p50 ({front50 / local50:.1f}x; issue 23's target "
        f"≤ {TARGET_FRONT_P50:g}x: {'met' if front50 / local50 <= TARGET_FRONT_P50 else 'missed'})."
    )
    for k in CLIENTS:
        ratio = tput[("front", k)] / tput[("local", k)]
        lines.append(
            f"- {k} client{'s' if k > 1 else ''}: {tput[('front', k)]:.0f} q/s through the "
            f"front vs {tput[('local', k)]:.0f} q/s in-process ({ratio:.3f}x)."
        )
    lo, hi = CLIENTS
    for side, label in (("front", "through the front"), ("local", "in-process")):
        scale = tput[(side, hi)] / tput[(side, lo)]
        lines.append(f"- {hi} vs {lo} clients {label}: {scale:.2f}x the throughput.")
    cpu = over["cpu"]
    for k in CLIENTS:
        busier = "the client process" if cpu[("client", k)] > cpu[("proxy", k)] else "serve"
        lines.append(
            f"- During the {k}-client front run serve used {cpu[('proxy', k)]:.2f} cores "
            f"({cpu[('proxy_ms', k)]:.2f} ms CPU per query) and the gremlinpython client "
            f"process {cpu[('client', k)]:.2f} cores: {busier} was the busier of the two."
        )
    client_us = cpu[("client", lo)] * 1e6 / tput[("front", lo)]
    budget = local50 * TARGET_FRONT_P50 * 1000
    lines.append(
        f"- The client's floor: with {lo} client, gremlinpython spent {client_us:.0f} µs CPU "
        f"per query in its own process, whatever the server does; the {TARGET_FRONT_P50:g}x "
        f"target allows {budget:.0f} µs per query in all (client, WebSocket, serve and "
        "graphersal): "
        + (
            "more than the client alone spends."
            if budget > client_us
            else "less than the client alone spends, so no server meets it with this client."
        )
    )
    return "**This run**:\n\n" + "\n".join(lines)


def render_section(
    rows: list[dict[str, Any]], over: dict[str, Any], n: int, seconds: float, anchor: str,
    load: str = "?",
) -> str:  # fmt: skip
    table_a = table(
        ["query", "guard's verdict", "results", "guard µs uncached p50 / p99",
         "guard µs cached p50", "graphersal ms p50 / p99", "serve's path in-process ms p50",
         "through the front ms p50 / p99"],
        [[r["name"], r["outcome"], "—" if r["results"] is None else r["results"],
          f"{percentile(r['guard'], 50) * 1000:.0f} / {percentile(r['guard'], 99) * 1000:.0f}",
          f"{percentile(r['guard_cached'], 50) * 1000:.1f}",
          f"{_ms(r['engine'], 50)} / {_ms(r['engine'], 99)}", _ms(r["path"], 50),
          f"{_ms(r['front'], 50)} / {_ms(r['front'], 99)}"] for r in rows],
    )  # fmt: skip
    lat, tput, results = over["lat"], over["tput"], over["results"]
    table_b = table(
        ["side", "p50 ms", "p99 ms", *(f"q/s {k} client{'s' if k > 1 else ''}" for k in CLIENTS)],
        [["graphersal in-process", _ms(lat["local"], 50), _ms(lat["local"], 99),
          *(f"{tput[('local', k)]:.0f}" for k in CLIENTS)],
         ["gremlinpython → serve → graphersal", _ms(lat["front"], 50), _ms(lat["front"], 99),
          *(f"{tput[('front', k)]:.0f}" for k in CLIENTS)]],
    )  # fmt: skip
    return (
        f"{SECTION}\n\n"
        "IT-support demo graph, `conf/segra-similarity.toml`, anchor "
        f"`{anchor}` (the first case whose correct walk has results); `serve` with "
        "`[server] gremlin`, embedded graphersal, audit to a file; gremlinpython `Client` "
        f"with GraphBinary. (a) {n} calls per column and query; the front's guard finds "
        "the repeated query in its cache, as the cached column does; \"serve's path "
        "in-process\" is the front's work past the network (cached verdict and parse of the "
        "judged text, graphersal through the backend with result conversion, the repair "
        "loop's look at the result); a refused query's time through the front is the time "
        "to its 597 error.\n\n"
        + table_a
        + f"\n\n(b) Small traversal `{SMALL}` ({results} result{'s' if results != 1 else ''}), "
        f"{n} sequential "
        f"calls per side in interleaved blocks; throughput {seconds:g} s per point, one "
        "thread per client (through the front: one connection each). Client, proxy and "
        f"graphersal share the machine's {os.cpu_count()} cores; load average {load}.\n\n"
        + table_b
        + "\n\n"
        + interpret(rows, over)
        + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    parser.add_argument("--calls", type=int, default=1000, help="latency samples per column")
    parser.add_argument("--seconds", type=float, default=3.0, help="per throughput point")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    logging.disable(logging.CRITICAL)  # gremlinpython logs every expected 597 reply
    raw = tomllib.loads(SEGRA_TOML.read_text())
    with tempfile.TemporaryDirectory(prefix="qg-gremlin-bench-") as tmp:
        proxy = Proxy(
            Path(tmp) / "serve", {}, {}, server={"bolt": "", "gremlin": "127.0.0.1:0"},
            extra=SEGRA_TOML.read_text(), listener="ws",
        )  # fmt: skip
        try:
            url = f"ws://{proxy.address}/gremlin"
            local = open_in_process(Path(tmp) / "local", raw)
            front = Client(url, "g", pool_size=1)
            try:
                local.anchor = find_anchor(front)
                rows = segra(local, front, args.calls)
            finally:
                front.close()
            over = overhead(local, url, proxy.proc.pid, args.calls, args.seconds)
            local.close()
        finally:
            proxy.stop()
    load = f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end of the run"
    text = render_section(rows, over, args.calls, args.seconds, local.anchor, load)
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
