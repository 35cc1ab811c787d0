"""The audit log: one structlog JSON line per query (client, original, verdict, final query,
codes, guard and backend timings). One logger per server instance; no global configuration."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import structlog


class AuditLog:
    def __init__(self, path: str = "", include_parameters: bool = False) -> None:
        self._fp: IO[str] = (
            Path(path).open("a", encoding="utf-8", buffering=1)  # noqa: SIM115 (lives with the server)
            if path
            else sys.stderr
        )
        self._owns = bool(path)
        self.include_parameters = include_parameters
        self._log = structlog.wrap_logger(
            structlog.PrintLogger(self._fp),
            processors=[
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.processors.JSONRenderer(ensure_ascii=False, default=str),
            ],
        )

    def __call__(self, event: Mapping[str, Any]) -> None:
        """The frontends' `on_query` callback."""
        fields = dict(event)
        if not self.include_parameters:
            fields.pop("parameters", None)
        self._log.info("query", **fields)

    def close(self) -> None:
        if self._owns:
            self._fp.close()
