"""The Cypher attack suite through `serve`: the real neo4j driver → the Bolt proxy (defaults,
read-only) → the embedded FalkorDB, and → a test-started ArcadeDB. Every attack must come back
as the guard's refusal (a Neo4jError naming one of the attack's codes — not a database error
that happened to stop it), no attack may change the database (a fingerprint read straight from
the backend, not through the proxy), and no file-reading attack may return file content.
The ordinary reads must run.

One proxy and one driver per backend, all inputs in one loop; every problem is collected and
the test fails once, naming each failing id. Attacks that changed nothing are judged without a
fingerprint only when the guard refused them (a refused query never reached the database).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import neo4j
import pytest
from neo4j import exceptions as nex

from query_guard.backends.arcadedb import ArcadeDBServer, unavailable_reason
from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from tests.e2e.test_e2e_arcadedb import PASSWORD_ENV, bolt_backend
from tests.e2e.test_e2e_falkordb import AUTH, proxy_config
from tests.fingerprint import Fingerprint, bolt_fingerprint, falkordb_fingerprint
from tests.security_corpus import CYPHER_ATTACKS, ORDINARY_READS, Case

_CODE = re.compile(r"\b(?:SYN|SEC|LIM|GUARD)\.[A-Z_]+\b")  # a finding code in a refusal
DEADLINE = 10.0  # seconds an answer may take before the attempt counts as "reached the backend"
# Once one attempt hangs, the backend is busy with it: later ones are not waited for as long
# (a guard that refuses answers in milliseconds; this keeps a run on an unfixed guard short).
STALLED_DEADLINE = 1.0


@dataclass
class Target:
    """A running proxy in front of one backend, and a way to fingerprint that backend."""

    name: str
    address: str
    auth: tuple[str, str]
    snapshot: Callable[[], Fingerprint]


@dataclass
class Outcome:
    rows: list[list[Any]] | None = None
    error: Exception | None = None
    timed_out: bool = False

    def text(self) -> str:
        """Everything the client saw: rows and error message."""
        return f"{self.rows!r} {getattr(self.error, 'message', None) or self.error!r}"


class Client:
    """One driver and one session; an attempt that does not answer within DEADLINE is left
    behind on its thread (the session with it) and the next attempt opens a new session."""

    def __init__(self, target: Target) -> None:
        self.driver = neo4j.GraphDatabase.driver(
            f"bolt://{target.address}",
            auth=target.auth,
            warn_notification_severity=neo4j.NotificationMinimumSeverity.OFF,
        )
        self.session: Any = None
        self.stuck = False

    def run(self, query: str, params: dict[str, Any]) -> Outcome:
        if self.session is None:
            self.session = self.driver.session()
        session, out = self.session, Outcome()

        def attempt() -> None:
            try:
                out.rows = [list(r.values()) for r in session.run(query, params)]
            except Exception as exc:  # judged by the caller: Neo4jError or not
                out.error = exc

        worker = threading.Thread(target=attempt, daemon=True)
        worker.start()
        worker.join(STALLED_DEADLINE if self.stuck else DEADLINE)
        if worker.is_alive():
            self.session, self.stuck = None, True
            return Outcome(timed_out=True)
        if out.error is not None and not isinstance(out.error, nex.Neo4jError):
            self.session = None  # the connection may be gone; start afresh
        return out

    def close(self) -> None:
        # With an attempt still hanging, closing could wait for it: close on the side.
        closer = threading.Thread(target=self.driver.close, daemon=True)
        closer.start()
        closer.join(5 if self.stuck else 30)


def file_markers() -> list[str]:
    """Text that only the files the attacks try to read contain."""
    markers = []
    passwd = Path("/etc/passwd")
    if passwd.exists():
        markers.append(passwd.read_text("utf-8", "replace").splitlines()[0])
    hostname = Path("/etc/hostname")
    if hostname.exists() and len(hostname.read_text().strip()) >= 4:
        markers.append(hostname.read_text().strip())
    return markers


def attack_problems(target: Target, cases: list[Case]) -> list[str]:
    """Run every attack through the proxy; what went wrong, one line per problem."""
    problems: list[str] = []
    markers = file_markers()
    baseline = target.snapshot()
    stalled = ""
    client = Client(target)
    try:
        # File reads first (earlier attacks that get through may delete what they match);
        # resource attacks last (on a guard without limits they can stall the backend).
        for case in sorted(cases, key=lambda c: (not c.reads_file, c.cls == "resources")):
            out = client.run(case.query, case.params)
            if out.timed_out:
                waited = "" if stalled else f" in {DEADLINE:.0f} s"
                problems.append(f"{case.id}: no answer{waited} (it reached the backend)")
                stalled = stalled or case.id
                continue
            seen = out.text()
            if case.reads_file and any(m in seen for m in markers):
                problems.append(f"{case.id}: returned the content of a server file")
            refused = isinstance(out.error, nex.Neo4jError) and any(
                code in (out.error.message or "") for code in case.codes
            )
            if out.error is None:
                problems.append(f"{case.id}: ran and returned {len(out.rows or [])} rows")
            elif not isinstance(out.error, nex.Neo4jError):
                problems.append(f"{case.id}: {type(out.error).__name__} instead of a refusal")
            elif not refused:
                message = " ".join((out.error.message or "").split())
                codes = sorted(set(_CODE.findall(message)))
                wanted = list(case.codes)
                problems.append(
                    f"{case.id}: refused for {codes}, not for one of {wanted}"
                    if codes
                    else f"{case.id}: not refused by the guard; the database said: {message[:110]}"
                )
            if not refused and not stalled:
                now = target.snapshot()
                if now != baseline:
                    problems.append(f"{case.id}: changed the database: {baseline.diff(now)}")
                    baseline = now
        if not stalled:
            final = target.snapshot()
            if final != baseline:
                problems.append(f"the database changed during the run: {baseline.diff(final)}")
    finally:
        client.close()
    return problems


def read_problems(target: Target, cases: list[Case]) -> list[str]:
    problems = []
    client = Client(target)
    try:
        for case in cases:
            out = client.run(case.query, case.params)
            if out.timed_out:
                problems.append(f"{case.id}: no answer in {DEADLINE:.0f} s")
            elif out.error is not None:
                message = " ".join((getattr(out.error, "message", None) or repr(out.error)).split())
                problems.append(f"{case.id}: {message[:140]}")
            elif not out.rows:
                problems.append(f"{case.id}: no rows")
    finally:
        client.close()
    return problems


def report(target: Target, what: str, problems: list[str], total: int) -> str:
    return f"{len(problems)} problems in {total} {what} on {target.name}:\n" + "\n".join(problems)


# ---------------------------------------------------------------------- the two backends


@pytest.fixture(scope="module")
def falkordb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """The proxy with its embedded FalkorDB (the default setup) and a direct RESP client."""
    with ProxyThread(proxy_config(tmp_path_factory.mktemp("security-falkordb"))) as proxy:
        direct = FalkorDBBackend(proxy.server.embedded.url)
        proxy.call(direct.start())

        def snapshot() -> Fingerprint:
            return proxy.call(falkordb_fingerprint(direct, direct.graph), timeout=60)

        try:
            yield Target("FalkorDB", proxy.address, AUTH, snapshot)
        finally:
            proxy.call(direct.close())


@pytest.fixture(scope="module")
def arcadedb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """A private ArcadeDB (attacks that get through must not touch the session's shared one)
    behind the proxy, and a direct Bolt driver to it."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"ArcadeDB cannot run here: {reason}")
    server = ArcadeDBServer(tmp_path_factory.mktemp("security-arcadedb"))
    server.start()
    tmp = tmp_path_factory.mktemp("security-arcadedb-proxy")
    os.environ[PASSWORD_ENV] = server.root_password
    config = parse_config(
        {
            "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp)},
            "backend": bolt_backend(server),
            "audit": {"path": str(tmp / "audit.jsonl")},
        }
    )
    try:
        with (
            ProxyThread(config) as proxy,
            neo4j.GraphDatabase.driver(server.url, auth=server.auth) as direct,
        ):
            yield Target(
                "ArcadeDB",
                proxy.address,
                ("anyone", "anything"),
                lambda: bolt_fingerprint(direct, server.database),
            )
    finally:
        os.environ.pop(PASSWORD_ENV, None)
        server.stop()


# ---------------------------------------------------------------------- the tests
# Reads first: on a guard that lets attacks through, they would see a vandalised graph.


def test_ordinary_reads_run_on_falkordb(falkordb: Target) -> None:
    problems = read_problems(falkordb, ORDINARY_READS)
    if problems:
        pytest.fail(report(falkordb, "reads", problems, len(ORDINARY_READS)), pytrace=False)


def test_cypher_attacks_are_refused_on_falkordb(falkordb: Target) -> None:
    problems = attack_problems(falkordb, CYPHER_ATTACKS)
    if problems:
        pytest.fail(report(falkordb, "attacks", problems, len(CYPHER_ATTACKS)), pytrace=False)


def test_ordinary_reads_run_on_arcadedb(arcadedb: Target) -> None:
    problems = read_problems(arcadedb, ORDINARY_READS)
    if problems:
        pytest.fail(report(arcadedb, "reads", problems, len(ORDINARY_READS)), pytrace=False)


def test_cypher_attacks_are_refused_on_arcadedb(arcadedb: Target) -> None:
    problems = attack_problems(arcadedb, CYPHER_ATTACKS)
    if problems:
        pytest.fail(report(arcadedb, "attacks", problems, len(CYPHER_ATTACKS)), pytrace=False)
