"""`[server] workers = N`: N serving processes on the same listeners, and one supervisor.

The supervisor (the `query-guard serve` process) checks the configuration, starts the embedded
database once when no backend is configured, and forks N workers. Each worker is a whole
proxy (`runner.serve`) whose listeners bind with SO_REUSEPORT, so the kernel spreads new
connections over them; all of them forward to the one backend. Per worker: the verdict cache,
the schema catalog (each refreshes it on its own TTL; a write through one makes all stale) and
the `[server]` caps on connections and transactions (a client may hold N times the per-client
cap in total). Shared: the backend,
the embedded database, the experience library (one SQLite file in WAL mode, or PostgreSQL).

Each worker's operator console (`/ui`) and `/metrics` show all workers: they meet in a private
directory the supervisor makes (`query_guard.run.peers`).

Signals to the supervisor: SIGTERM / SIGINT stop every worker (each closes its connections
between transactions, DRAIN_SECONDS) and then the embedded database; SIGHUP re-reads the
configuration file and replaces the workers one by one — the new one listens before the old
one drains, so no connection is refused during a reload (a configuration that does not load
keeps the running workers, with a message). A worker that dies is started again.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import time
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from query_guard.config.load import Config, load_config
from query_guard.errors import ConfigError

STOP_SECONDS = 15.0  # a worker that has not stopped by then is killed
RESTART_PAUSE = 1.0  # before a dead worker is started again
QUICK_DEATH = 10.0  # a worker dying this soon after its start counts towards giving up
MAX_QUICK_DEATHS = 3
STARTUP_GRACE = 3.0  # on reload, how long a new worker gets to listen before an old one drains


def worker_count(config: Config) -> int:
    value = config.server["workers"]
    return (os.cpu_count() or 1) if value == "auto" else int(value)


def check_workers(config: Config) -> None:
    """Several workers need fixed ports (port 0 would give each its own) and, for writes, one
    shared database: an embedded in-process Gremlin graph would be one copy per worker."""
    for key in ("bolt", "http", "gremlin"):
        address = str(config.server[key])
        if address.endswith(":0"):
            raise ConfigError(f"server.{key}", "port 0 cannot be shared by several workers")
    embedded_gremlin = str(config.server["gremlin"]) and not str(config.backend["gremlin"])
    if embedded_gremlin and not config.guard.read_only:
        raise ConfigError(
            "server.workers",
            "the embedded Gremlin graph lives in each worker: with several workers set "
            "[backend] gremlin to a Gremlin server, or keep [guard] read_only = true",
        )


class Supervisor:
    """Forks and watches the workers; see the module docstring."""

    def __init__(self, config: Config, config_path: str | None) -> None:
        self.config, self.path = config, config_path
        self.embedded: Any = None
        self.workers: list[BaseProcess] = []
        self.stopping = False
        self.reload = False
        self.status = 0
        self.started: dict[int, float] = {}  # pid -> when it was forked
        self.quick_deaths = 0
        self._context = multiprocessing.get_context("fork")
        self.peers_dir: str | None = None  # where the workers meet (mode 0700)

    def run(self) -> int:
        from query_guard.config.listen import check_exposure

        check_exposure(self.config)
        check_workers(self.config)
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        signal.signal(signal.SIGHUP, self._on_reload)
        self.config = self._shared_backend(self.config)
        self.peers_dir = tempfile.mkdtemp(prefix="query-guard-workers-")
        try:
            self.workers = [
                self._fork(self.config, i == 0) for i in range(worker_count(self.config))
            ]
            while not self.stopping:
                wait([w.sentinel for w in self.workers], timeout=0.5)
                if self.reload:
                    self.reload = False
                    self._replace_all()
                self._restart_dead()
            return self.status
        finally:
            self._stop_all(self.workers)
            if self.embedded is not None:
                self.embedded.stop()
            shutil.rmtree(self.peers_dir, ignore_errors=True)

    # ------------------------------------------------------------------ parts

    def _shared_backend(self, config: Config) -> Config:
        """Start the embedded database here, once, and point every worker at it."""
        if str(config.backend["cypher"]):
            return config
        if self.embedded is None:
            from query_guard.backends.embedded import EmbeddedFalkorDB

            data_dir = Path(str(config.server["data_dir"])).expanduser() / "falkordb"
            self.embedded = EmbeddedFalkorDB(data_dir).start()
            print(f"query-guard: embedded FalkorDB {self.embedded.address} for all workers",
                  file=sys.stderr, flush=True)  # fmt: skip
        backend = {**config.backend, "cypher": self.embedded.url}
        return dataclasses.replace(config, backend=backend)

    def _fork(self, config: Config, announce: bool) -> BaseProcess:
        process = self._context.Process(
            target=_worker, args=(config, announce, self.peers_dir), daemon=False
        )
        process.start()
        self.started[process.pid or 0] = time.monotonic()
        return process

    def _restart_dead(self) -> None:
        """Start a dead worker again; give up when workers die right after starting (a port
        taken, a TLS file missing: each worker has said why on stderr)."""
        for i, process in enumerate(self.workers):
            if process.is_alive() or self.stopping:
                continue
            quick = time.monotonic() - self.started.get(process.pid or 0, 0.0) < QUICK_DEATH
            self.quick_deaths = self.quick_deaths + 1 if quick else 0
            if self.quick_deaths >= MAX_QUICK_DEATHS:
                print("query-guard: workers keep failing at start; stopping", file=sys.stderr,
                      flush=True)  # fmt: skip
                self.stopping, self.status = True, 1
                return
            print(f"query-guard: worker {process.pid} exited ({process.exitcode}); restarting",
                  file=sys.stderr, flush=True)  # fmt: skip
            time.sleep(RESTART_PAUSE)
            self.workers[i] = self._fork(self.config, False)

    def _replace_all(self) -> None:
        """SIGHUP: load the file again, then start each new worker before stopping an old one
        (the listeners never close: SO_REUSEPORT has both bound for a moment)."""
        try:
            config = self._shared_backend(load_config(self.path))
            check_workers(config)
        except ConfigError as exc:
            print(f"query-guard: reload refused, still serving: {exc}", file=sys.stderr,
                  flush=True)  # fmt: skip
            return
        self.config = config
        old, self.workers = self.workers, []
        for i in range(max(len(old), worker_count(config))):
            if i < worker_count(config):
                self.workers.append(self._fork(config, False))
                time.sleep(STARTUP_GRACE)
            if i < len(old):
                self._stop_all([old[i]])
        print("query-guard: configuration reloaded", file=sys.stderr, flush=True)

    def _stop_all(self, workers: list[BaseProcess]) -> None:
        for process in workers:
            if process.is_alive():
                process.terminate()  # SIGTERM: the worker drains and stops
        deadline = time.monotonic() + STOP_SECONDS
        for process in workers:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(5)

    def _on_stop(self, _signum: int, _frame: object) -> None:
        self.stopping = True

    def _on_reload(self, _signum: int, _frame: object) -> None:
        self.reload = True


def _worker(config: Config, announce: bool, peers_dir: str | None) -> None:
    """One worker: the whole proxy, until SIGTERM; only the first says where it listens."""
    from query_guard.runner import serve

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)  # until `serve` installs its own handlers
    if not announce:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the process's own stdout
    sys.exit(serve(config, peers_dir))
