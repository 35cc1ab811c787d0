"""The peers' own test suites on ArcadeDB, directly and through `query-guard serve`.

Fetches the pinned releases of langchain-neo4j and neo4j-graphrag from PyPI (their sdists
carry `tests/`), runs langchain-neo4j's integration tests and neo4j-graphrag's e2e tests once
against ArcadeDB's Bolt directly and once through the proxy (Bolt upstream to the same kind of
ArcadeDB, `[guard] read_only = false`: the suites write), and prints the differences: tests
that pass directly and fail through the proxy, with the failure, and the reverse. The neo4j
driver's integration tests are not in its sdist: `--driver-repo` names a git checkout of
neo4j-python-driver whose `tests/` run against the installed driver.

Every (suite, side) gets a fresh ArcadeDB (`arcadedb-jvm`), root password "password" (what
the suites hard-code), so both sides start empty. Tests that need services absent here
(Pinecone, Qdrant, Weaviate, downloaded models) fail on both sides ("fail both").

    python3 -m venv benchmarks/.venv-peers
    benchmarks/.venv-peers/bin/pip install -e '.[compat]' arcadedb-jvm pytest-asyncio \\
        pytest-mock pytest-timeout langchain-neo4j==0.11.0 neo4j-graphrag==1.22.0 neo4j==6.4.1
    benchmarks/.venv-peers/bin/python benchmarks/peers.py [--suite NAME] [--runs N] [--write]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from _common import ROOT, write_section
from _peers_notes import bookmark_note, changed_failures, proxy_side_note
from _peers_notes import bookmark_probe as probe
from _serve import Proxy

from query_guard.backends.arcadedb import ArcadeDBServer, unavailable_reason
from query_guard.compat.procedures import SERVED_PROCEDURES
from query_guard.config.schema import DEFAULT_ALLOWED_PROCEDURES

HEADING = "## Peer test suites on ArcadeDB, directly vs through the proxy:"
# the write procedures the suites call, allowed as an operator serving these libraries would
# (ArcadeDB has none of them: both sides then fail alike, with the database's error)
WRITE_PROCEDURES = (
    "db.create.setNodeVectorProperty", "db.create.setRelationshipVectorProperty",
    "apoc.merge.*", "apoc.create.*", "apoc.schema.assert",
)  # fmt: skip
PINS = {"langchain-neo4j": "0.11.0", "neo4j-graphrag": "1.22.0", "neo4j": "6.4.1"}
PASSWORD = "password"  # what the suites hard-code (and ArcadeDB's minimum length)
PASSWORD_ENV = "QG_PEERS_ARCADEDB_PASSWORD"
DRIVER_MIRROR = ROOT.parent / ".mirror" / "neo4j+neo4j-python-driver" / "repo"
SUITE_TIMEOUT = 3600.0
SEED = 21
# neo4j-graphrag's e2e tests of other vector stores (their services do not run here)
IGNORED = tuple(f"--ignore=tests/e2e/{d}_e2e" for d in ("pinecone", "qdrant", "weaviate"))


@dataclass(frozen=True)
class Suite:
    name: str  # the PyPI distribution
    paths: tuple[str, ...]
    options: tuple[str, ...] = ()


SUITES = {
    "langchain-neo4j": Suite("langchain-neo4j", ("tests/integration_tests",), ("-o", "addopts=")),
    "neo4j-graphrag": Suite(
        "neo4j-graphrag",
        ("tests/e2e",),
        ("-o", "addopts=", "-o", "asyncio_mode=auto", *IGNORED),
    ),
    "neo4j": Suite(
        "neo4j", ("tests/integration",), ("-o", "mock_use_standalone_module=false", "--timeout=120")
    ),
}


@dataclass
class Outcome:
    status: str  # passed, failed, error, skipped
    reason: str = ""


def check_pins() -> list[str]:
    """Differences between the installed releases and PINS (the tests must match the code)."""
    wrong = []
    for dist, pin in PINS.items():
        try:
            got = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            got = "not installed"
        if got != pin:
            wrong.append(f"{dist} {got} (pinned {pin})")
    return wrong


def fetch_sdist(dist: str, into: Path) -> Path:
    """The pinned sdist from PyPI (pip's own index configuration), unpacked; its root."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
         f"{dist}=={PINS[dist]}", "-d", str(into)],
        check=True,
    )  # fmt: skip
    archive = next(p for p in into.iterdir() if p.name.endswith(".tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return next(p for p in into.iterdir() if p.is_dir())


def fetch_driver_tests(repo: Path, into: Path) -> tuple[Path, str]:
    """`tests/` and `pyproject.toml` of a neo4j-python-driver checkout (git directory or
    work tree), without its `src/`: the tests import the installed driver."""
    git = ["git", "--git-dir", str(repo)] if repo.name != ".git" else ["git", "-C", str(repo)]
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    describe = subprocess.run(
        [*git, "describe", "--tags", "--always"], capture_output=True, text=True
    ).stdout.strip()  # fmt: skip
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        [*git, "archive", "HEAD", "tests", "pyproject.toml", "README.rst"],
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    subprocess.run(["tar", "x", "-C", str(into)], input=archive, check=True)
    # the cancellation tests draw their parameters (read function, waits, cancels) at import:
    # one seed, so test i is the same case directly and through the proxy
    cancellation = into / "tests" / "integration" / "mixed" / "test_async_cancellation.py"
    if cancellation.exists():
        text = cancellation.read_text("utf-8")
        cancellation.write_text(f"import random\nrandom.seed({SEED})\n{text}", "utf-8")
    return into, f"{describe} ({head.stdout.strip()[:12]})"


def point_at(root: Path, url: str) -> None:
    """Hard-coded addresses and accounts in the suite's sources → this side's."""
    swaps = {
        '"neo4j://localhost:7687"': f'"{url}"',
        '("neo4j", "password")': f'("root", "{PASSWORD}")',
        'os.environ["NEO4J_USER"] = "neo4j"': 'os.environ["NEO4J_USER"] = "root"',
    }
    for path in root.rglob("*.py"):
        new = text = path.read_text("utf-8")
        for old, replacement in swaps.items():
            new = new.replace(old, replacement)
        if new != text:
            path.write_text(new, "utf-8")


@contextmanager
def arcadedb(where: Path) -> Iterator[ArcadeDBServer]:
    where.mkdir(parents=True, exist_ok=True)
    (where / "root-password").write_text(PASSWORD, "utf-8")
    server = ArcadeDBServer(where, load_movies=False, heap="1g")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def side_url(side: str, db: ArcadeDBServer, tmp: Path) -> Iterator[str]:
    """The Bolt URL a suite's driver uses: the database's, or a proxy's in front of it."""
    if side == "direct":
        yield db.url
        return
    backend = {
        "cypher": db.url, "database": db.database, "discovery_user": "root",
        "discovery_password_env": PASSWORD_ENV,
    }  # fmt: skip
    allowed = ", ".join(f'"{p}"' for p in (*DEFAULT_ALLOWED_PROCEDURES, *WRITE_PROCEDURES))
    guard = f"[guard]\nread_only = false\nallowed_procedures = [{allowed}]\n"
    proxy = Proxy(tmp, backend, {PASSWORD_ENV: PASSWORD}, extra=guard)
    try:
        yield f"bolt://{proxy.address}"
    finally:
        proxy.stop()


def run_suite(suite: Suite, root: Path, url: str, report: Path) -> dict[str, Outcome]:
    host, port = url.removeprefix("bolt://").rsplit(":", 1)
    env = {
        **os.environ, "NEO4J_URI": url, "NEO4J_USERNAME": "root", "NEO4J_PASSWORD": PASSWORD,
        "TEST_NEO4J_HOST": host, "TEST_NEO4J_PORT": port, "TEST_NEO4J_USER": "root",
        "TEST_NEO4J_PASS": PASSWORD, "TEST_NEO4J_SCHEME": "bolt",
        "TEST_NEO4J_EDITION": "community", "TEST_NEO4J_VERSION": "5.0",
        "TEST_NEO4J_IS_CLUSTER": "false", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
    }  # fmt: skip
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
           "--rootdir", str(root), *suite.options, *suite.paths]  # fmt: skip
    with (report.with_suffix(".log")).open("wb") as log:
        subprocess.run(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                       timeout=SUITE_TIMEOUT, check=False)  # fmt: skip
    return read_junit(report)


def read_junit(report: Path) -> dict[str, Outcome]:
    found: dict[str, Outcome] = {}
    if not report.exists():
        return found
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome = Outcome("passed")
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                status = "skipped" if child.tag == "skipped" else "failed"
                message = (child.get("message") or child.text or "").strip()
                outcome = Outcome(status, " ".join(message.split())[:300])
                break
        if name in found and found[name].status != "passed":
            continue  # a teardown error after a failure: keep the first
        if name in found and outcome.status == "passed":
            continue
        found[name] = outcome
    return found


@dataclass
class Comparison:
    suite: str
    run: int
    direct: dict[str, Outcome]
    proxy: dict[str, Outcome]
    finished: float = 0.0  # when the proxy side's report was written (0: now)

    def names(self) -> list[str]:
        return sorted(set(self.direct) | set(self.proxy))

    def status(self, side: dict[str, Outcome], name: str) -> str:
        return side.get(name, Outcome("missing")).status

    def only(self, passing: dict[str, Outcome], failing: dict[str, Outcome]) -> list[str]:
        return [
            n for n in self.names()
            if self.status(passing, n) == "passed" and self.status(failing, n) == "failed"
        ]  # fmt: skip

    def count(self, side: dict[str, Outcome], status: str) -> int:
        return sum(1 for o in side.values() if o.status == status)


def compare_suite(suite: Suite, run: int, tmp: Path, driver_repo: Path | None) -> Comparison:
    results: dict[str, dict[str, Outcome]] = {}
    for side in ("direct", "proxy"):
        where = tmp / f"{suite.name}-{run}-{side}"
        if suite.name == "neo4j":
            assert driver_repo is not None
            root, _ = fetch_driver_tests(driver_repo, where / "src")
        else:
            root = fetch_sdist(suite.name, where / "src")
        with arcadedb(where / "arcadedb") as db, side_url(side, db, where / "proxy") as url:
            point_at(root, url)
            started = time.monotonic()
            results[side] = run_suite(suite, root, url, where / "junit.xml")
            took = time.monotonic() - started
        print(f"{suite.name} run {run} {side}: {len(results[side])} tests in {took:.0f} s "
              f"({where / 'junit.log'})", flush=True)  # fmt: skip
    return Comparison(suite.name, run, results["direct"], results["proxy"])


def verdict(comparisons: list[Comparison]) -> str:
    """What the runs say against issue 21's acceptance (no test passes directly and fails
    through the proxy; the same pass/fail set on both sides)."""
    worse = sorted({n for c in comparisons for n in c.only(c.direct, c.proxy)})
    same = sum(1 for c in comparisons if not c.only(c.direct, c.proxy) + c.only(c.proxy, c.direct))
    runs = len(comparisons)
    head = (
        f"**{len(worse)} tests pass directly and fail through the proxy** (listed below)"
        if worse
        else "No test passes directly and fails through the proxy"
    )
    return (
        f"{head} in {runs} paired run{'s' if runs > 1 else ''}; the same pass/fail set on "
        f"both sides in {same} of {runs}."
    )


def from_kept(kept: Path, name: str) -> list[Comparison]:
    """The paired runs of suite `name` kept by an earlier run (QG_PEERS_KEEP): re-rendered."""
    runs = []
    for run in range(1, 100):
        direct = kept / f"{name}-{run}-direct" / "junit.xml"
        if not (direct.exists() and (kept / f"{name}-{run}-proxy" / "junit.xml").exists()):
            break  # the runs that finished both sides
        proxy = read_junit(kept / f"{name}-{run}-proxy" / "junit.xml")
        finished = (kept / f"{name}-{run}-proxy" / "junit.xml").stat().st_mtime
        runs.append(Comparison(name, run, read_junit(direct), proxy, finished))
    return runs


def render(comparisons: list[Comparison], notes: list[str]) -> str:
    """One RESULTS.md section for one suite's paired runs."""
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    finished = max(c.finished for c in comparisons) or time.time()
    out = [f"{HEADING} {comparisons[0].suite}", ""]
    out.append(
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(finished))} "
        f"(`benchmarks/.venv-peers/bin/python benchmarks/peers.py`), load average {load} at "
        f"the end. Pinned: " + ", ".join(f"{d} {v}" for d, v in PINS.items()) + ". Proxy: "
        "`[guard] read_only = false`, the write procedures the suites call allowed "
        f"({', '.join(WRITE_PROCEDURES)}), everything else default."
    )
    out += [f"{n}" for n in notes]
    out += ["", verdict(comparisons)]
    driver = comparisons[0].suite == "neo4j"  # the note is about the driver's own tests
    out += ["", note] if driver and (note := bookmark_note(comparisons)) else []
    out += [] if driver else ["", proxy_side_note(comparisons, SERVED_PROCEDURES.__contains__)]
    out += ["", "| suite | run | tests | pass direct | pass proxy | fail both | "
            "pass direct, fail proxy | fail direct, pass proxy | skipped (direct/proxy) |",
            "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for c in comparisons:
        both = sum(
            1 for n in c.names()
            if c.status(c.direct, n) == "failed" and c.status(c.proxy, n) == "failed"
        )  # fmt: skip
        out.append(
            f"| {c.suite} | {c.run} | {len(c.names())} | {c.count(c.direct, 'passed')} | "
            f"{c.count(c.proxy, 'passed')} | {both} | {len(c.only(c.direct, c.proxy))} | "
            f"{len(c.only(c.proxy, c.direct))} | {c.count(c.direct, 'skipped')}/"
            f"{c.count(c.proxy, 'skipped')} |"
        )
    for c in comparisons:
        worse = c.only(c.direct, c.proxy)
        better = c.only(c.proxy, c.direct)
        if worse or better:
            out += ["", f"{c.suite}, run {c.run}:", ""]
        out += [f"- passes directly, fails through the proxy: `{n}`: {c.proxy[n].reason}"
                for n in worse]  # fmt: skip
        out += [f"- fails directly, passes through the proxy: `{n}`: {c.direct[n].reason}"
                for n in better]  # fmt: skip
    out += ["", "Failing on both sides (first run), by the direct side's reason:", ""]
    c = comparisons[0]  # one suite per section
    reasons: dict[str, int] = {}
    for n in c.names():
        if c.status(c.direct, n) == "failed" and c.status(c.proxy, n) == "failed":
            key = c.direct[n].reason[:140] or "(no message)"
            reasons[key] = reasons.get(key, 0) + 1
    out += [f"- {c.suite}: {k}: {v} tests" for k, v in sorted(reasons.items(), key=lambda x: -x[1])]
    out += changed_failures(c)
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", action="append", choices=sorted(SUITES))
    parser.add_argument("--runs", type=int, default=1, help="paired runs per suite")
    parser.add_argument("--driver-repo", type=Path, default=DRIVER_MIRROR,
                        help="a git checkout of neo4j-python-driver (its tests/)")  # fmt: skip
    parser.add_argument("--write", action="store_true", help="replace the RESULTS.md section")
    parser.add_argument("--render", type=Path, help="re-render the runs kept in this directory")
    args = parser.parse_args()
    if args.render is not None:
        for name in args.suite or list(SUITES):
            kept = from_kept(args.render, name)
            notes = [f"Re-rendered from the junit reports of {args.render.name}."]
            if name == "neo4j":  # the probe is measured now
                notes.append(probe(arcadedb, side_url, Path(tempfile.mkdtemp())))
            text = render(kept, notes)
            print(text)
            if kept and args.write:
                write_section(f"{HEADING} {name}\n", text)
        return
    reason = unavailable_reason()
    if reason is not None:
        raise SystemExit(f"ArcadeDB cannot run here: {reason}")
    notes = [f"Installed releases differ from the pins: {', '.join(w)}." for w in [check_pins()]
             if w]  # fmt: skip
    names = args.suite or list(SUITES)
    driver_repo = args.driver_repo if args.driver_repo.exists() else None
    if "neo4j" in names and driver_repo is None:
        names.remove("neo4j")
        notes.append("neo4j driver: no --driver-repo checkout, its tests were not run.")
    elif "neo4j" in names:
        _, described = fetch_driver_tests(driver_repo, Path(tempfile.mkdtemp()) / "probe")
        notes.append(f"neo4j driver tests from neo4j-python-driver {described}.")
        notes.append(probe(arcadedb, side_url, Path(tempfile.mkdtemp())))
    with tempfile.TemporaryDirectory(prefix="qg-peers-") as tmp:
        for name in names:
            runs = [
                compare_suite(SUITES[name], r, Path(tmp), driver_repo)
                for r in range(1, args.runs + 1)
            ]
            text = render(runs, [n for n in notes if name == "neo4j" or "driver" not in n])
            print(text, flush=True)
            if args.write:
                write_section(f"{HEADING} {name}\n", text)
        if os.environ.get("QG_PEERS_KEEP"):
            subprocess.run(["cp", "-r", tmp, os.environ["QG_PEERS_KEEP"]], check=False)


if __name__ == "__main__":
    main()
