"""The audit log: one structlog JSON line per query (client, authenticated user, original,
verdict, final query, codes, guard and backend timings). One logger per server instance, built with
`structlog.wrap_logger` — no global structlog configuration."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import structlog

# Frontend event keys -> the audit line's names (the rest keep theirs).
_RENAMED = {"query": "original", "action": "verdict"}
FLUSH_DELAY = 0.01  # seconds: on an event loop, lines reach the file in one write this often


class AuditLog:
    """The frontends' `on_query` callback: writes each event as one JSON line (to `path`,
    appended, or to standard error when `path` is empty).

    Lines are rendered by structlog's processors (`TimeStamper` + `JSONRenderer`), called
    directly rather than through a bound logger (its per-call wrapping cost as much as the
    rendering on a cached query's path), and handed to `msg`, which buffers them: called on
    an event loop, lines are written together at most `FLUSH_DELAY` after the first of them
    (and at `close`); called elsewhere, each line is written at once.

    Query parameters are left out unless `include_parameters` (they may hold personal data).
    """

    def __init__(self, path: str = "", include_parameters: bool = False) -> None:
        self.path = path
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._fp: IO[str] = (
            Path(path).open("a", encoding="utf-8")  # noqa: SIM115 (lives with the server)
            if path
            else sys.stderr
        )
        self._owns = bool(path)
        self._lock = threading.Lock()  # servers in threads may share one logger
        self._flush_pending = False
        self.include_parameters = include_parameters
        self._stamp = structlog.processors.TimeStamper(fmt="iso", utc=True)
        self._render = structlog.processors.JSONRenderer(ensure_ascii=False, default=str)

    def __call__(self, event: Mapping[str, Any]) -> None:
        fields = {_RENAMED.get(k, k): v for k, v in event.items()}
        if not self.include_parameters:
            fields.pop("parameters", None)
        fields.pop("event", None)  # structlog's own key: the line's event is "query"
        # whose credentials the proxy (or the backend, pass-through) checked; null: nobody's
        fields.setdefault("user", None)
        fields["event"] = "query"  # where a bound logger's `info("query", ...)` puts it
        self.msg(self._render(None, "info", self._stamp(None, "info", fields)))

    def msg(self, line: str) -> None:
        """Buffer one rendered line."""
        line += "\n"
        with self._lock:
            if self._fp.closed:
                return
            self._fp.write(line)
            if self._flush_pending:
                return
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._fp.flush()
                return
            self._flush_pending = True
        loop.call_later(FLUSH_DELAY, self.flush)

    def flush(self) -> None:
        with self._lock:
            self._flush_pending = False
            if not self._fp.closed:
                self._fp.flush()

    def close(self) -> None:
        with self._lock:
            if self._fp.closed:
                return
            if self._owns:
                self._fp.close()
            else:
                self._fp.flush()
