"""`query-guard serve` and `ProxyServer` wiring: the real command in a subprocess (listens,
answers, stops cleanly on SIGTERM / SIGINT and takes its FalkorDB child with it), start-up
failures, backend construction from the configuration."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import neo4j
import pytest
import redis

from query_guard.backend import BackendUnavailable
from query_guard.backends.bolt_relay import BoltRelayBackend
from query_guard.backends.embedded import free_port
from query_guard.backends.factory import make_backend
from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.config.listen import split_address
from query_guard.config.load import parse_config
from query_guard.errors import ConfigError
from query_guard.model import Action
from query_guard.runner import _serve
from query_guard.server import ProxyServer, cypher_guard

ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"listening on bolt://(\S+) -> (?:.*falkordb://([\d.]+):(\d+)/)?")


class ServeProcess:
    """`python -m query_guard serve --config FILE` as a child process; `address` once it listens."""

    def __init__(
        self,
        tmp: Path,
        backend: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        server: dict[str, Any] | None = None,
        **guard: Any,
    ) -> None:
        server = {"bolt": "127.0.0.1:0", "data_dir": str(tmp / "data"), **(server or {})}
        lines = ["[server]", *(f"{key} = {json.dumps(value)}" for key, value in server.items())]
        lines.append("[guard]")
        lines += [f"{key} = {value!r}".lower() for key, value in guard.items()]
        lines += ["[backend]", *(f'{key} = "{value}"' for key, value in (backend or {}).items())]
        config = tmp / "query-guard.toml"
        config.write_text("\n".join(lines) + "\n", "utf-8")
        self.stderr_path = tmp / "serve.stderr"
        self._stderr: IO[bytes] = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "query_guard", "serve", "--config", str(config)],
            stdout=subprocess.PIPE, stderr=self._stderr, text=True, cwd=ROOT,
            env={**os.environ, **(env or {})},
        )  # fmt: skip
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # the one line saying where it listens
        match = LISTENING.search(line)
        if match is None:
            self.stop()
            pytest.fail(f"serve printed {line!r}; stderr:\n{self.stderr()}")
        self.line = line
        self.address = match.group(1)
        self.falkordb = (match.group(2), int(match.group(3))) if match.group(2) else None

    def stderr(self) -> str:
        return self.stderr_path.read_text("utf-8", "replace")

    def status(self, key: str) -> int:
        """A /proc/<pid>/status value in KiB (VmRSS, VmHWM)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
        raise KeyError(key)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(20)
        finally:
            self._stderr.close()


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_answers_then_stops_cleanly_with_its_falkordb(tmp_path: Path, sig: int) -> None:
    serve = ServeProcess(tmp_path)
    try:
        assert serve.falkordb is not None
        host, port = serve.falkordb
        conf = (tmp_path / "data" / "falkordb" / "auth.conf").read_text()
        password = conf.split()[1]  # the embedded server's generated password (0600 file)
        with redis.Redis(host=host, port=port, password=password) as client:
            falkordb_pid = int(client.info("server")["process_id"])
        assert not _gone(falkordb_pid)
        with neo4j.GraphDatabase.driver(f"bolt://{serve.address}", auth=("u", "p")) as drv:
            records, _, _ = drv.execute_query("MATCH (m:Movie) RETURN count(m) AS n")
        assert records[0]["n"] == 38  # the movie graph was loaded on first start
    finally:
        status = serve.stop(sig)
    assert status == 0, serve.stderr()
    deadline = time.monotonic() + 5
    while not _gone(falkordb_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(falkordb_pid), "the embedded FalkorDB outlived the proxy"
    assert "Traceback" not in serve.stderr()
    assert (tmp_path / "data" / "falkordb" / "appendonlydir").is_dir()  # data under data_dir


def test_serve_reports_an_unreachable_backend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = parse_config(
        {
            "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp_path)},
            "backend": {"cypher": f"falkordb://127.0.0.1:{free_port()}/movies"},
        }
    )
    assert asyncio.run(_serve(config)) == 1
    assert "cannot start" in capsys.readouterr().err


def test_python_dash_m_proxy_is_the_command() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "query_guard", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0 and "query-guard" in out.stdout and "serve" in out.stdout


# ---------------------------------------------------------------------- ProxyServer


def test_proxy_server_guards_and_cleans_up_after_a_failed_start(tmp_path: Path) -> None:
    async def run() -> None:
        config = parse_config(
            {
                "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp_path)},
                "backend": {"cypher": f"bolt://127.0.0.1:{free_port()}"},
            }
        )
        server = ProxyServer(config)
        with pytest.raises(BackendUnavailable):
            await server.start()
        assert server.backend is None and server.bolt is None and server.embedded is None

    asyncio.run(run())


def test_cypher_guard_adapts_the_guard_for_the_frontend() -> None:
    from query_guard.build import build_guard

    check = cypher_guard(build_guard())
    assert check("CREATE (n)", {}).action is Action.BLOCK
    assert check("MATCH (n) RETURN n", {}).query.endswith("LIMIT 1000")


def test_split_address() -> None:
    assert split_address("0.0.0.0:7687", "k") == ("0.0.0.0", 7687)
    assert split_address("[::1]:0", "k") == ("::1", 0)
    with pytest.raises(ConfigError, match=r"server\.bolt"):
        split_address("localhost", "server.bolt")


def test_make_backend_from_config(monkeypatch: pytest.MonkeyPatch) -> None:
    falkor = make_backend("falkordb://h:1/g", parse_config({}))
    assert isinstance(falkor, FalkorDBBackend) and falkor.read_only
    monkeypatch.setenv("QG_TEST_PASSWORD", "s3cret")
    configured = parse_config(
        {"backend": {"credentials": "configured", "user": "neo", "password_env": "QG_TEST_PASSWORD",
                     "database": "movies"}}
    )  # fmt: skip
    bolt = make_backend("bolt://h:7687", configured)
    assert isinstance(bolt, BoltRelayBackend)
    assert bolt.auth == ("neo", "s3cret") and bolt.database == "movies"
    assert not bolt.passthrough and bolt.read_only
    passthrough = make_backend("neo4j://h:7687", parse_config({}))
    assert passthrough.passthrough and passthrough.auth is None
    with pytest.raises(ConfigError, match=r"backend\.user"):
        make_backend("bolt://h", parse_config({"backend": {"credentials": "configured"}}))
    unset = {"backend": {"credentials": "configured", "user": "u", "password_env": "QG_UNSET_X"}}
    with pytest.raises(ConfigError, match="QG_UNSET_X"):
        make_backend("bolt://h", parse_config(unset))
    with pytest.raises(ConfigError, match=r"backend\.credentials"):
        make_backend("bolt://h", parse_config({"backend": {"credentials": "mine"}}))
    with pytest.raises(ConfigError, match=r"backend\.cypher"):
        make_backend("http://h", parse_config({}))

