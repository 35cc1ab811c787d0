"""The computed interpretation of `peers.py`'s runs (RESULTS.md): why the neo4j driver's
cancellation tests differ between ArcadeDB directly and through the proxy, and which tests
fail on both sides but with another failure through the proxy."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from query_guard.codes import CODES

BOOKMARK_ASSERT = "assert <Bookmarks values={}>"


def bookmark_note(comparisons: Sequence[Any]) -> str | None:
    """What the runs say about the driver's cancellation tests that expect a bookmark: counted
    from the reports (`peers.Comparison`s), explained from the sources (the driver's test,
    ArcadeDB's Bolt server, the proxy's summary). None when the sides agree."""
    differ = [
        (c, n) for c in comparisons for n in c.only(c.proxy, c.direct) + c.only(c.direct, c.proxy)
    ]
    if not differ:
        return None

    def failure(c: Any, n: str) -> str:
        return str(c.direct[n].reason if c.status(c.direct, n) == "failed" else c.proxy[n].reason)

    auto = [(c, n) for c, n in differ if "_do_the_read-" in n and BOOKMARK_ASSERT in failure(c, n)]
    proxy_bookmark_fails = sum(
        1 for c in comparisons for n in c.names()
        if c.status(c.proxy, n) == "failed" and BOOKMARK_ASSERT in c.proxy[n].reason
    )  # fmt: skip
    direct_bookmark_fails = sum(
        1 for c in comparisons for n in c.names()
        if c.status(c.direct, n) == "failed" and BOOKMARK_ASSERT in c.direct[n].reason
    )  # fmt: skip
    return (
        f"Interpretation: {len(auto)} of the {len(differ)} differences are "
        "`test_async_cancellation` cases of `_do_the_read` (an auto-commit `RETURN 1`) failing "
        f"`{BOOKMARK_ASSERT}`. The test asserts a bookmark after a read that completed before "
        "it was cancelled and none after a cancelled one: Neo4j ends every auto-commit "
        "transaction, reads too, with a `bookmark` in the PULL SUCCESS (the driver's suite "
        "asserts it against Neo4j). ArcadeDB sends a bookmark only on COMMIT, never in an "
        "auto-commit PULL SUCCESS, so directly the case fails whenever the read completes "
        "within the test's random number of event-loop turns. The proxy relays the upstream's "
        "bookmark and makes none up (`frontends/bolt/streaming.py`, `_summary`), so through it "
        "that read has no bookmark either; yet the assertion failed "
        f"{direct_bookmark_fails} times directly and {proxy_bookmark_fails} times through the "
        "proxy over these runs (the probe above: neither side has a bookmark after an "
        "auto-commit read, both relay ArcadeDB's after a managed transaction): through the "
        "proxy the read never completed within the test's count of event-loop turns, so the "
        "test took its cancelled branch, which expects no bookmark (the count runs from a new "
        "driver's first connection, so the steady-state round trips of the probe do not decide "
        "it). The difference is when the read completes on the client, not "
        "bookmarks the proxy adds; it stays while ArcadeDB sends no auto-commit bookmark. "
        "Inventing one in the proxy would claim a causal-consistency token the database "
        "cannot honour, so the proxy does not."
    )


def bookmark_probe(arcadedb: Callable[[Path], Any], side_url: Callable[..., Any], tmp: Path) -> str:
    """Measured here, one ArcadeDB, directly and through a proxy: the neo4j driver session's
    bookmarks after an auto-commit `RETURN 1` and after a managed read transaction, and the
    mean round trip of `RETURN 1` (the cancellation tests race it against event-loop turns)."""
    import neo4j  # the peers venv's driver (the pinned release)

    found = []
    with arcadedb(tmp / "arcadedb") as db:
        for side in ("direct", "proxy"):
            with side_url(side, db, tmp / "proxy") as url, neo4j.GraphDatabase.driver(
                url, auth=("root", "password")
            ) as driver, driver.session() as session:  # fmt: skip
                session.run("RETURN 1").consume()
                auto = session.last_bookmarks()
                session.execute_read(lambda tx: tx.run("RETURN 1").consume())
                managed = session.last_bookmarks()
                started = time.perf_counter()
                for _ in range(50):
                    session.run("RETURN 1").consume()
                took = (time.perf_counter() - started) / 50 * 1000
            found.append(f"{side}: {len(list(auto.raw_values))} bookmarks after an auto-commit "
                         f"read, {len(list(managed.raw_values))} after a managed read "
                         f"transaction, {took:.1f} ms per `RETURN 1`")  # fmt: skip
    return "neo4j driver bookmark probe (one ArcadeDB): " + "; ".join(found) + "."


def changed_failures(comparison: Any) -> list[str]:
    """RESULTS.md lines for the tests of one paired run that fail on both sides with another
    failure through the proxy: where a proxy-side reason could hide behind "fail both".
    Numbers (ports) and the GQL status fields are ignored: the proxy answers the upstream's
    code and message with the GQL status its own front derives from the code. Empty when
    every such test fails alike."""

    def bare(reason: str) -> str:
        return " ".join(re.sub(r"\{gql_status[^}]*\}", "", reason).split())

    def same(a: str, b: str) -> bool:
        return re.sub(r"\d+", "#", bare(a)) == re.sub(r"\d+", "#", bare(b))

    c = comparison
    changed = [
        f"- `{n}`: directly {bare(c.direct[n].reason)[:160]}; through the proxy "
        f"{bare(c.proxy[n].reason)[:200]}"
        for n in c.names()
        if c.status(c.direct, n) == c.status(c.proxy, n) == "failed"
        and not same(c.direct[n].reason, c.proxy[n].reason)
    ]
    head = f"Failing on both sides with another failure through the proxy ({c.suite}, run {c.run}):"
    return ["", head, "", *changed] if changed else []


UNKNOWN_PROCEDURE = re.compile(r"Unknown procedure/function: ([\w.]+)")


def proxy_side_note(comparisons: Sequence[Any], answered: Callable[[str], bool]) -> str:
    """The computed check of issue 21's "no test fails through the proxy for a proxy-side
    reason" for an app suite: which tests pass only through the proxy because it answers a
    procedure ArcadeDB lacks (`answered(name)`), and every failure through the proxy that
    carries one of the proxy's own finding codes (a refusal of the proxy's, not the
    database's), with what the same test met directly."""
    better: dict[str, int] = {}
    other_better = 0
    refused: list[str] = []
    for c in comparisons:
        for n in c.only(c.proxy, c.direct):
            found = UNKNOWN_PROCEDURE.search(str(c.direct[n].reason))
            if found and answered(found.group(1)):
                better[found.group(1)] = better.get(found.group(1), 0) + 1
            else:
                other_better += 1
        for n in c.names():
            if c.status(c.proxy, n) != "failed":
                continue
            codes = [w for w in re.findall(r"\b[A-Z]+\.[A-Z_]+\b", c.proxy[n].reason) if w in CODES]
            if codes:
                direct = (
                    "passes directly"
                    if c.status(c.direct, n) == "passed"
                    else ("fails directly too: " + " ".join(str(c.direct[n].reason).split())[:120])
                )
                refused.append(f"`{n}` ({', '.join(dict.fromkeys(codes))}; {direct})")
    total = sum(better.values()) + other_better
    parts = [
        f"Computed: of the {total} tests that pass only through the proxy, "
        + ", ".join(f"{k} fail directly on `{p}`" for p, k in better.items())
        + (", which ArcadeDB lacks and the proxy answers from its catalog" if better else "")
        + (f"; {other_better} for another reason" if other_better else "")
        + ".",
        f"Failures through the proxy that carry a query-guard finding code: {len(refused)}"
        + (": " + "; ".join(refused) if refused else "")
        + "; the other failures through the proxy carry none (the database's errors, relayed, "
        "or the tests' own assertions; those that differ from the direct side's are listed "
        "below).",
    ]
    return " ".join(parts)
