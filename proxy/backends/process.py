"""The lifecycle both locally started database servers share (the embedded FalkorDB and the
ArcadeDB used by tests and benchmarks): one child process, a log file, a finalizer that stops
it at interpreter exit, context managers, and a hard kill for crash tests."""

from __future__ import annotations

import contextlib
import subprocess
import weakref
from pathlib import Path
from types import TracebackType
from typing import Self


def terminate(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM (servers flush their logs and exit), SIGKILL if not done within `timeout`."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait(5)


class ServerProcess:
    """Subclasses set `data_dir`, spawn `_proc`, and implement `start()` / `stop()`."""

    LOG_NAME = "server.log"
    data_dir: Path
    _proc: subprocess.Popen[bytes] | None
    _finalizer: weakref.finalize | None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def log_path(self) -> Path:
        return self.data_dir / self.LOG_NAME

    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self, timeout: float = 10.0) -> None:
        raise NotImplementedError

    def kill(self) -> None:
        """SIGKILL the server without letting it save (tests: a crash)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(5)

    def _watch(self) -> None:
        """Stop the child at interpreter exit even if nobody calls `stop()`."""
        self._unwatch()
        self._finalizer = weakref.finalize(self, terminate, self._proc)

    def _unwatch(self) -> None:
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, _et: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.stop()
