"""The audit log: one structlog JSON line per query (client, original, verdict, final query,
codes, guard and backend timings). One logger per server instance; no global configuration."""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import structlog

# Frontend event keys -> the audit line's names (the rest keep theirs).
_RENAMED = {"query": "original", "action": "verdict"}


class AuditLog:
    """The frontends' `on_query` callback: writes each event as one JSON line (to `path`,
    appended and line-buffered, or to standard error when `path` is empty).

    Query parameters are left out unless `include_parameters` (they may hold personal data).
    """

    def __init__(self, path: str = "", include_parameters: bool = False) -> None:
        self.path = path
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._fp: IO[str] = (
            Path(path).open("a", encoding="utf-8", buffering=1)  # noqa: SIM115 (lives with the server)
            if path
            else sys.stderr
        )
        self._owns = bool(path)
        self._lock = threading.Lock()  # servers in threads may share one file
        self.include_parameters = include_parameters
        self._log = structlog.wrap_logger(
            structlog.PrintLogger(self._fp),
            processors=[
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.processors.JSONRenderer(ensure_ascii=False, default=str),
            ],
        )

    def __call__(self, event: Mapping[str, Any]) -> None:
        fields = {_RENAMED.get(k, k): v for k, v in event.items()}
        if not self.include_parameters:
            fields.pop("parameters", None)
        fields.pop("event", None)  # structlog's own key: the line's event is "query"
        with self._lock:
            if not self._fp.closed:
                self._log.info("query", **fields)

    def close(self) -> None:
        if self._owns and not self._fp.closed:
            with self._lock:
                self._fp.close()
