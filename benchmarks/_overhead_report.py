"""What `proxy_overhead.py`'s numbers say, computed from them: each setup against the
targets, the repair loop's share, and this build against a baseline revision read against
the run's own noise (two identical serves of this build)."""

from __future__ import annotations

from typing import Any

SECOND = "defaults (a second serve)"  # beside a baseline: the run's noise floor
RELAY = "HAProxy TCP relay (a hop, no parsing)"  # the floor any proxy starts from
NOISY = 0.25  # two identical serves differing by more than this: no build comparison

TARGET_RSS_MIB = 150.0  # proxy RSS with 1,000 idle connections
# issue 23, per backend: (proxy p50 / direct p50 at most, 32-client throughput ratio at least).
# FalkorDB's direct side is the `falkordb` client over RESP, so its targets allow for the
# Bolt-vs-RESP difference; ArcadeDB's is the same neo4j driver over Bolt.
TARGETS = {"FalkorDB": (2.0, 0.5), "ArcadeDB": (1.25, 0.95)}


def targets(name: str) -> tuple[float, float]:
    """The (p50, 32-client throughput) targets of the setup `name` ("FalkorDB (direct: …")."""
    return TARGETS.get(name.split(" ", 1)[0], (1.25, 0.95))


# What the path does is a fact of the code, not of a run; every number below is computed.
PATH_NOTE = """\
On the Bolt path the proxy relays upstream RECORD messages undecoded (Bolt >= 5 on both
sides), writes RUN's SUCCESS, the records and PULL's SUCCESS in one socket write, and skips
the repair loop when the peeked records plainly are rows. PULL's SUCCESS carries what Neo4j 5
sends a Bolt >= 5.5 client (`db`, GQL `statuses`) and the proxy's `qg_id`, which the driver
decodes on every query (ArcadeDB sends neither). FalkorDB rows also contain the
Bolt-vs-RESP client difference (direct = `falkordb` client, through the proxy = Bolt).
Client, proxy and database share the machine's cores, so throughput ratios move between runs."""


def _verdict(value: float, target: float, higher_is_better: bool) -> str:
    met = value >= target if higher_is_better else value <= target
    return "met" if met else "missed"


def _ratio(value: float, target: float) -> str:
    """`value` to two decimals, or three where two would read as the target itself."""
    return f"{value:.3f}x" if f"{value:.2f}" == f"{target:.2f}" else f"{value:.2f}x"


def _against_baseline(
    backend: str, on: dict[str, Any], base: dict[str, Any], twin: dict[str, Any] | None
) -> str:
    """This build against the baseline revision, read against what two serves of this build
    differ by in the same run: slower only beyond 5 % and beyond that noise."""
    rev = base["name"].rpartition("baseline ")[2]
    p50 = on["proxy_p50"] / base["proxy_p50"]
    tput = on["proxy_tput32"] / base["proxy_tput32"]
    p50_noise = tput_noise = 0.0
    noise = ""
    if twin is not None:
        twin_p50 = on["proxy_p50"] / twin["proxy_p50"]
        twin_tput = on["proxy_tput32"] / twin["proxy_tput32"]
        p50_noise, tput_noise = abs(twin_p50 - 1), abs(twin_tput - 1)
        noise = (
            f"; two serves of this build differ by p50 {twin_p50:.2f}x, "
            f"32-client throughput {twin_tput:.2f}x"
        )
    slower = p50 - 1 > max(0.05, p50_noise) or 1 - tput > max(0.05, tput_noise)
    if max(p50_noise, tput_noise) > NOISY:
        verdict = (
            f"not told apart by this run (two identical serves differ by more than "
            f"{NOISY:.0%}: the machine was too busy to compare builds by wall clock)."
        )
    elif slower:
        verdict = "slower (by more than 5 % and more than two identical serves differ)."
    else:
        verdict = "not slower (within 5 % or within what two identical serves differ by)."
    return (
        f"- {backend}: this build against {rev} (same run): p50 {p50:.2f}x "
        f"({(on['proxy_p50'] - base['proxy_p50']) * 1000:+.0f} µs), 32-client throughput "
        f"{tput:.2f}x{noise} — the plain read path is {verdict}"
    )


def _client_floor(r: dict[str, Any], target_p50: float) -> str:
    """How much of the p50 through the proxy is the client's own work: its CPU per query
    (the sync driver's thread) is spent on every call whatever the proxy does."""
    client, direct = r["proxy_client_cpu"], r["direct_client_cpu"]
    budget = r["direct_p50"] * target_p50 * 1000
    served = r["direct_p50"] * 1000 - direct  # the database and one round trip, directly
    if budget <= client:
        rest = "less than the client alone spent: out of reach with this client here"
    elif budget - client < served:
        rest = (
            f"{budget - client:.0f} µs of it for the proxy, the database and both network "
            f"hops, less than the database and one round trip took directly ({served:.0f} µs "
            "= direct p50 - the direct client's CPU): out of reach with this client here"
        )
    else:
        rest = f"{budget - client:.0f} µs of it for the proxy, the database and both network hops"
    return (
        f"- {r['name']}: the client spent {client:.0f} µs CPU per query through the proxy "
        f"(neo4j driver), {direct:.0f} µs directly; the p50 target ({target_p50}x direct) "
        f"allows {budget:.0f} µs per query, {rest} (p50 through the proxy in this run: "
        f"{r['proxy_p50'] * 1000:.0f} µs)."
    )


def _client_tput_floor(r: dict[str, Any], target_tput: float) -> str:
    """The async client runs on one event loop, one core at most: 1e6 / its CPU per query
    (with the answers it gets through the proxy) is the most it can send."""
    ceiling = 1e6 / r["proxy_client_cpu32"]
    needed = r["direct_tput32"] * target_tput
    verdict = (
        "above what the target needs"
        if ceiling >= needed
        else "below what the target needs: the client alone caps it here"
    )
    return (
        f"- {r['name']}: at 32 clients the async client spent {r['proxy_client_cpu32']:.0f} µs "
        f"CPU per query through the proxy ({r['direct_client_cpu32']:.0f} µs directly): with "
        f"the answers it got there, at most {ceiling:.0f} q/s from its one event loop, {verdict} "
        f"({target_tput}x direct = {needed:.0f} q/s)."
    )


def _spare_cores(r: dict[str, Any], target_tput: float) -> str:
    """Client and database keep the machine's cores busy at 32 clients; whatever the process
    in the middle spends comes out of the cores they left idle, or out of their share."""
    needed = r["direct_tput32"] * target_tput
    allowed = r["direct_idle32"] * 1e6 / needed
    spent = r["proxy_middle_cpu32"]
    return (
        f"- {r['name']}: during the direct 32-client runs {r['direct_idle32']:.2f} of the "
        f"machine's cores were idle; at {target_tput}x the direct rate ({needed:.0f} q/s) "
        f"that leaves {allowed:.0f} µs of CPU per query for the process in the middle, which "
        f"spent {spent:.0f} µs per query at 32 clients"
        + (" (within it)." if spent <= allowed else " (over it).")
    )


def _relay_floor(r: dict[str, Any], target_p50: float) -> str:
    """What one more hop costs with nothing parsed (HAProxy, C, TCP mode): the part of the
    target's allowance no proxy can give back on this machine."""
    p50 = r["proxy_p50"] / r["direct_p50"]
    hop = (r["proxy_p50"] - r["direct_p50"]) * 1000
    allowance = r["direct_p50"] * (target_p50 - 1) * 1000
    tput = r["proxy_tput32"] / r["direct_tput32"]
    return (
        f"- {r['name']}: one more hop that parses nothing costs p50 {p50:.2f}x direct "
        f"({hop:+.0f} µs: {hop / allowance:.0%} of the {allowance:.0f} µs that the "
        f"{target_p50}x target allows over direct), 32-client throughput {tput:.2f}x; the "
        f"client spent {r['proxy_client_cpu']:.0f} µs CPU per query through it, "
        f"{r['direct_client_cpu']:.0f} µs directly."
    )


def interpret(results: list[dict[str, Any]]) -> str:
    """The reading of this run's numbers, computed from them (nothing here is fixed text)."""
    lines = []
    for r in results:
        target_p50, target_tput = targets(r["name"])
        if r["name"].endswith(RELAY):
            lines.append(_relay_floor(r, target_p50))
            lines.append(_spare_cores(r, target_tput))
            continue
        p50 = r["proxy_p50"] / r["direct_p50"]
        tput = r["proxy_tput32"] / r["direct_tput32"]
        lines.append(
            f"- {r['name']}: p50 {_ratio(p50, target_p50)} direct "
            f"(+{r['proxy_p50'] - r['direct_p50']:.2f} ms per query; target ≤ {target_p50}x: "
            f"{_verdict(p50, target_p50, False)}), "
            f"32-client throughput {_ratio(tput, target_tput)} "
            f"(target ≥ {target_tput}x: {_verdict(tput, target_tput, True)}), "
            f"RSS {r['rss_idle']:.0f} MiB with 1,000 idle connections "
            f"(+{r['rss_idle'] - r['rss_before']:.0f} MiB; target ≤ {TARGET_RSS_MIB:.0f}: "
            f"{_verdict(r['rss_idle'], TARGET_RSS_MIB, False)})."
        )
        lines.append(_client_floor(r, target_p50))
        lines.append(_client_tput_floor(r, target_tput))
        lines.append(_spare_cores(r, target_tput))
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
            lines.append(_against_baseline(backend, on, base, variants.get(SECOND)))
    return "**This run**:\n\n" + "\n".join(lines) + "\n\n" + PATH_NOTE
