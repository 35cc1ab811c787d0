"""The embedded FalkorDB: first start loads the movie graph, restarts keep data, failures say
why, and the server never outlives the process that started it."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from query_guard.backends.embedded import DEMO_GRAPHS, EmbeddedFalkorDB, EmbeddedStartError


def count(server: EmbeddedFalkorDB, query: str, graph: str = "movies") -> int:
    with redis.Redis(host=server.host, port=server.port, password=server.password) as client:
        reply = client.execute_command("GRAPH.RO_QUERY", graph, query)
    return int(reply[1][0][0])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) counts as gone.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def test_data_file_is_one_statement_falkordb_accepts() -> None:
    lines = DEMO_GRAPHS["movies"].read_text("utf-8").splitlines()
    assert lines[0].startswith("//")  # provenance note, then the CREATE
    statement = "\n".join(line for line in lines if not line.startswith("//"))
    assert statement.startswith("CREATE (")
    assert ";" not in statement
    assert "CONSTRAINT" not in statement and "INDEX" not in statement


def test_first_start_loads_the_movie_graph_and_restart_keeps_data(tmp_path: Path) -> None:
    server = EmbeddedFalkorDB(tmp_path)
    with server:
        assert server.loaded_graphs == ["movies"]
        assert server.address == f"falkordb://127.0.0.1:{server.port}/movies"
        assert server.url == f"falkordb://:{server.password}@127.0.0.1:{server.port}/movies"
        assert count(server, "MATCH (m:Movie) RETURN count(m)") == 38
        assert count(server, "MATCH (p:Person) RETURN count(p)") == 133
        assert count(server, "MATCH ()-[r]->() RETURN count(r)") == 253
        with redis.Redis(port=server.port, password=server.password) as client:
            client.execute_command("GRAPH.QUERY", "movies", "CREATE (:Person {name: 'New'})")
        pid, port = server.pid, server.port
    assert pid is not None and not alive(pid)
    with server:  # restart: same port, nothing reloaded, the write is still there
        assert server.port == port and server.loaded_graphs == []
        assert count(server, "MATCH (p:Person) RETURN count(p)") == 134
    with EmbeddedFalkorDB(tmp_path) as again:  # a new instance on the same data
        assert again.loaded_graphs == []
        assert count(again, "MATCH (m:Movie) RETURN count(m)") == 38


def test_async_start_and_stop(tmp_path: Path) -> None:
    async def main() -> tuple[int, int | None]:
        async with EmbeddedFalkorDB(tmp_path, graph="g", demo_graphs={}) as server:
            assert server.is_running()
            return count(server, "MATCH (n) RETURN count(n)", "g"), server.pid

    nodes, pid = asyncio.run(main())
    assert nodes == 0 and pid is not None and not alive(pid)


def test_a_data_directory_serves_one_server(tmp_path: Path) -> None:
    with (
        EmbeddedFalkorDB(tmp_path, demo_graphs={}),
        pytest.raises(EmbeddedStartError, match="in use by pid"),
    ):
        EmbeddedFalkorDB(tmp_path, demo_graphs={}).start()


def test_failed_start_reports_the_server_log(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = EmbeddedFalkorDB(tmp_path, port=port, demo_graphs={})
        with pytest.raises(EmbeddedStartError) as info:
            server.start()
    assert "port already in use" in str(info.value)
    assert "Address already in use" in str(info.value)  # the log tail
    assert not server.is_running()
    server.start()  # the directory was released; the port is free now
    server.stop()


def test_server_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    script = (
        "import sys, time\n"
        "from proxy.backends.embedded import EmbeddedFalkorDB\n"
        "s = EmbeddedFalkorDB(sys.argv[1], demo_graphs={}).start()\n"
        "print(s.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    parent = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, env=env, text=True
    )
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        assert alive(pid)
        parent.send_signal(signal.SIGKILL)  # no atexit, no finalizers: only PDEATHSIG helps
        parent.wait(5)
        deadline = time.monotonic() + 10
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid)
    finally:
        parent.kill()
        parent.wait(5)


def test_fresh_movie_graph_is_a_private_writable_copy(
    falkordb_server: EmbeddedFalkorDB, fresh_movie_graph: tuple[str, str]
) -> None:
    name, url = fresh_movie_graph
    assert url.endswith(f"/{name}")
    with redis.Redis(port=falkordb_server.port) as client:
        client.execute_command("GRAPH.QUERY", name, "MATCH (m:Movie) DETACH DELETE m")
    assert count(falkordb_server, "MATCH (m:Movie) RETURN count(m)", name) == 0
    assert count(falkordb_server, "MATCH (m:Movie) RETURN count(m)") == 38


def test_the_embedded_server_refuses_clients_without_its_password(tmp_path: Path) -> None:
    with EmbeddedFalkorDB(tmp_path, demo_graphs={"movies": DEMO_GRAPHS["movies"]}) as server:
        with redis.Redis(port=server.port) as client, pytest.raises(
            redis.exceptions.AuthenticationError
        ):
            client.execute_command("GRAPH.RO_QUERY", "movies", "MATCH (n) RETURN count(n)")
        with redis.Redis(port=server.port, password="guessed") as client, pytest.raises(
            redis.exceptions.AuthenticationError
        ):
            client.ping()
        with redis.Redis(port=server.port, password=server.password) as client:
            assert client.config_get("protected-mode") == {"protected-mode": "yes"}
            assert client.config_get("bind")["bind"] == "127.0.0.1"
        password = server.password
    conf = tmp_path / "auth.conf"
    assert conf.stat().st_mode & 0o777 == 0o600
    assert password is not None and password not in (tmp_path / "falkordb.log").read_text()
    with EmbeddedFalkorDB(tmp_path, demo_graphs={}) as again:  # the password is kept
        assert again.password == password
        assert count(again, "MATCH (m:Movie) RETURN count(m)") == 38


def test_the_embedded_server_binds_loopback_only(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="loopback"):
        EmbeddedFalkorDB(tmp_path, host="0.0.0.0")
