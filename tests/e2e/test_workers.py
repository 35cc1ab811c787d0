"""`[server] workers = N`: `query-guard serve` as a supervisor of N worker processes on one
Bolt port (SO_REUSEPORT). Reads keep succeeding while a worker is killed (it is started again)
and while SIGHUP replaces every worker; SIGTERM stops them all; the embedded database is
started once and shared."""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import neo4j
import pytest
from prometheus_client.parser import text_string_to_metric_families

from query_guard.backends.embedded import free_port
from query_guard.cli.main import main
from tests.e2e.test_balanced_proxies import Readers
from tests.e2e.test_server import ServeProcess


def children(pid: int) -> set[int]:
    """The live child processes of `pid` (from /proc)."""
    out = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(") ", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if int(stat[1]) == pid and stat[0] not in ("Z", "X"):
            out.add(int(entry.name))
    return out


def wait_for(check, seconds: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def workers_of(serve: ServeProcess) -> set[int]:
    """The supervisor's worker processes (its children that are Python, not a database); a
    child that exits while it is looked at (an old worker leaving on a reload) is not one."""
    workers = set()
    for pid in children(serve.proc.pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except (FileNotFoundError, ProcessLookupError):
            continue
        if "falkordb" not in command and "redis" not in command:
            workers.add(pid)
    return workers


def test_two_workers_share_the_port_survive_a_crash_and_a_reload(
    tmp_path: Path, movies_url: str
) -> None:
    port = free_port()
    server = {"bolt": f"127.0.0.1:{port}", "workers": 2}
    serve = ServeProcess(tmp_path, backend={"cypher": movies_url}, server=server)
    try:
        assert wait_for(lambda: len(workers_of(serve)) == 2), serve.stderr()
        first = workers_of(serve)
        with neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=("u", "p")) as driver:
            readers = Readers(driver)
            try:
                time.sleep(1.0)
                os.kill(min(first), signal.SIGKILL)  # a worker dies: it is started again
                assert wait_for(lambda: len(workers_of(serve) - first) == 1), serve.stderr()
                time.sleep(1.0)
                before = workers_of(serve)
                serve.proc.send_signal(signal.SIGHUP)  # every worker replaced, one by one
                assert wait_for(lambda: not workers_of(serve) & before, 60), serve.stderr()
                assert wait_for(lambda: len(workers_of(serve)) == 2), serve.stderr()
                time.sleep(1.0)
            finally:
                readers.stop()
        last = workers_of(serve)
    finally:
        status = serve.stop()
    assert status == 0, serve.stderr()
    assert "configuration reloaded" in serve.stderr()
    assert all(wait_for(lambda p=p: not Path(f"/proc/{p}").exists(), 5) for p in last)
    # the killed worker's own connections broke (the driver saw them drop); nothing else did
    broken = [f for f in readers.failures if "defunct" not in f and "Incomplete" not in f]
    assert broken == [], broken[:5]
    assert readers.wrong == [] and readers.reads > 50, (readers.reads, readers.failures[:3])


def test_workers_share_one_embedded_database(tmp_path: Path) -> None:
    port = free_port()
    serve = ServeProcess(tmp_path, server={"bolt": f"127.0.0.1:{port}", "workers": 2})
    try:
        assert wait_for(lambda: len(workers_of(serve)) == 2), serve.stderr()
        assert "for all workers" in serve.stderr()
        password = (tmp_path / "data" / "falkordb" / "auth.conf").read_text().split()[1]
        assert password not in serve.line + serve.stderr()  # the URL the workers get is masked
        url = f"bolt://127.0.0.1:{port}"
        counts = set()
        for _ in range(8):  # new connections spread over both workers
            with neo4j.GraphDatabase.driver(url, auth=("u", "p")) as driver:
                records, _, _ = driver.execute_query("MATCH (m:Movie) RETURN count(m) AS n")
                counts.add(records[0]["n"])
    finally:
        assert serve.stop() == 0, serve.stderr()
    assert counts == {38}


@pytest.mark.parametrize(
    ("server", "problem"),
    [
        ({"bolt": "127.0.0.1:0", "workers": 2}, "port 0 cannot be shared"),
        ({"workers": 0}, "server.workers"),
        ({"workers": "many"}, "server.workers"),
    ],
)
def test_worker_settings_that_cannot_work_are_refused(
    tmp_path: Path, server: dict, problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["[server]", *(f"{k} = {v!r}".replace("'", '"') for k, v in server.items())]
    config = tmp_path / "query-guard.toml"
    config.write_text("\n".join(lines) + "\n", "utf-8")
    assert main(["serve", "--config", str(config)]) == 2
    assert problem in capsys.readouterr().err


def test_every_workers_console_and_metrics_show_the_queries_of_all(tmp_path: Path) -> None:
    """Queries on new HTTP connections until both workers have answered some (at least 12);
    whichever worker answers a console request then lists all of them (each worker alone
    holds only its own), and /metrics counts them all, per worker."""
    bolt, http = free_port(), free_port()
    server = {"bolt": f"127.0.0.1:{bolt}", "http": f"127.0.0.1:{http}", "workers": 2}
    serve = ServeProcess(tmp_path, server=server)
    base = f"http://127.0.0.1:{http}"
    try:
        assert wait_for(lambda: len(workers_of(serve)) == 2), serve.stderr()
        assert wait_for(lambda: _get(f"{base}/ready")[0] == 200), serve.stderr()
        asked: list[str] = []
        while len(asked) < 12 or len(_queries_per_worker(base)) < 2:
            assert len(asked) < 200, _queries_per_worker(base)  # the kernel spreads them
            asked.append(f"RETURN {len(asked)} AS query_{len(asked):03d}_asked")
            body = json.dumps({"statement": asked[-1]}).encode()
            request = urllib.request.Request(f"{base}/db/neo4j/query/v2", body,
                                             {"Content-Type": "application/json"})  # fmt: skip
            with urllib.request.urlopen(request, timeout=30) as response:  # a new connection
                assert response.status in (200, 202)
        for _ in range(6):
            status, page = _get(f"{base}/ui/panels")
            assert status == 200
            assert [s for s in asked if s.split(" AS ")[1] not in page] == []
            assert json.loads(_get(f"{base}/ui/state.json")[1])["seq"] == len(asked)
            queries = _queries_per_worker(base)
            assert len(queries) == 2 and sum(queries.values()) == len(asked), queries
        pids = {str(pid) for pid in workers_of(serve)}
        assert set(queries) == pids
        meeting = {p.parent for p in Path(tempfile.gettempdir()).glob("query-guard-workers-*/*")
                   if p.stem in pids}  # fmt: skip
        assert len(meeting) == 1  # the supervisor's private directory
        assert next(iter(meeting)).stat().st_mode & 0o777 == 0o700
    finally:
        assert serve.stop() == 0, serve.stderr()
    assert not next(iter(meeting)).exists()  # removed when serve stops


def _queries_per_worker(base: str) -> dict[str, float]:
    """`query_guard_queries_total` of each worker, from whichever worker answers /metrics."""
    counts: dict[str, float] = {}
    for family in text_string_to_metric_families(_get(f"{base}/metrics")[1]):
        for sample in family.samples:
            if sample.name == "query_guard_queries_total":
                worker = sample.labels["worker"]
                counts[worker] = counts.get(worker, 0) + sample.value
    return counts


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""
    except OSError:
        return 0, ""


def test_a_query_api_transaction_answers_from_any_worker(tmp_path: Path) -> None:
    """Transactions opened until both workers own one; each one's statements, each on a new
    connection (so half of them reach the other worker), run in that transaction — none is
    "not found" — and so do its rollback and commit; afterwards it is unknown everywhere."""
    bolt, http = free_port(), free_port()
    server = {"bolt": f"127.0.0.1:{bolt}", "http": f"127.0.0.1:{http}", "workers": 2}
    serve = ServeProcess(tmp_path, server=server, read_only=False)
    base = f"http://127.0.0.1:{http}/db/neo4j/query/v2"
    try:
        assert wait_for(lambda: len(workers_of(serve)) == 2), serve.stderr()
        assert wait_for(lambda: _get(f"http://127.0.0.1:{http}/ready")[0] == 200)
        opened: dict[str, str] = {}  # worker -> transaction id
        for _ in range(200):
            status, answer = _post(f"{base}/tx", {})
            assert status in (200, 202), answer
            tx = answer["transaction"]["id"]
            if tx.partition("-")[0] in opened:
                assert _post(f"{base}/tx/{tx}", {}, "DELETE")[0] == 200  # nothing written
            opened.setdefault(tx.partition("-")[0], tx)
            if len(opened) == 2:
                break
        assert set(opened) == {str(pid) for pid in workers_of(serve)}
        tx1, tx2 = sorted(opened.values())
        count = {"statement": "MATCH (p:WorkerProbe) RETURN count(p) AS n"}
        for n, tx in enumerate((tx1, tx2), start=1):
            assert _post(f"{base}/tx/{tx}", {"statement": "CREATE (:WorkerProbe)"})[0] == 202
            for _ in range(6):
                status, answer = _post(f"{base}/tx/{tx}", count)
                assert status == 202, answer
                assert answer["data"]["values"] == [[n]]
                assert answer["transaction"]["id"] == tx
        # FalkorDB has no multi-statement transactions: a rollback after a write says the
        # change stays, whichever worker the request reached
        status, answer = _post(f"{base}/tx/{tx1}", {}, "DELETE")
        assert status == 400 and answer["errors"][0]["code"].endswith("RollbackFailed"), answer
        status, answer = _post(f"{base}/tx/{tx2}/commit", count)
        assert status == 202 and answer["data"]["values"] == [[2]], answer
        for tx in (tx1, tx2):
            for _ in range(4):
                status, answer = _post(f"{base}/tx/{tx}", {"statement": "RETURN 1"})
                assert status == 404, answer
                assert answer["errors"][0]["code"].endswith("TransactionNotFound")
    finally:
        assert serve.stop() == 0, serve.stderr()
    audit = [json.loads(line) for line in serve.stderr().splitlines()
             if line.startswith("{") and '"event": "query"' in line]  # fmt: skip
    in_tx = [r for r in audit if r["in_transaction"]]
    assert len(in_tx) >= 14 and {r["client"] for r in in_tx} == {"127.0.0.1"}  # forwarded too


def _post(url: str, body: dict[str, object], method: str = "POST") -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # a new connection each
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def test_a_write_through_one_worker_refreshes_every_workers_schema(tmp_path: Path) -> None:
    """A label created through one worker is in `db.labels()` at once when the other worker
    answers (each keeps its own catalog; the writer tells the others before it answers)."""
    bolt, http = free_port(), free_port()
    server = {"bolt": f"127.0.0.1:{bolt}", "http": f"127.0.0.1:{http}", "workers": 2}
    serve = ServeProcess(tmp_path, server=server, read_only=False)
    base = f"http://127.0.0.1:{http}"

    def served(statement: str) -> tuple[str, dict]:
        """Run `statement` on a new connection: the worker that answered, and its answer."""
        before = _queries_per_worker(base)
        status, answer = _post(f"{base}/db/neo4j/query/v2", {"statement": statement})
        assert status == 202, answer
        after = _queries_per_worker(base)
        (worker,) = [w for w, n in after.items() if n > before.get(w, 0)]
        return worker, answer

    try:
        assert wait_for(lambda: len(workers_of(serve)) == 2), serve.stderr()
        assert wait_for(lambda: _get(f"{base}/ready")[0] == 200)
        for n in range(3):
            writer, _ = served(f"CREATE (:JustWritten{n} {{at: {n}}})")
            for _ in range(100):  # until the other worker has answered
                worker, answer = served("CALL db.labels() YIELD label RETURN collect(label)")
                assert f"JustWritten{n}" in answer["data"]["values"][0][0], (worker, writer)
                if worker != writer:
                    break
            assert worker != writer
    finally:
        assert serve.stop() == 0, serve.stderr()
