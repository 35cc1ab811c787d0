"""The audit log: one JSON line per query (client, authenticated user, original, verdict, final
query, codes, guard and backend timings), in structlog's JSON line format (`TimeStamper`
ISO UTC + `JSONRenderer`). One logger per server instance, no global logging configuration."""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from query_guard.run.record import KEYS

# Frontend event keys -> the audit line's names (the rest keep theirs).
_RENAMED = {"query": "original", "action": "verdict"}
_LINE_KEYS = tuple(_RENAMED.get(k, k) for k in KEYS)  # a runner record's keys, renamed
FLUSH_DELAY = 0.01  # seconds: on an event loop, lines are rendered and written this often
_UTC = datetime.UTC
log = logging.getLogger("query_guard.audit")


def _encoder() -> Callable[[Any], str]:
    """`json.dumps(value, ensure_ascii=False, default=str)` without building an encoder per
    call: CPython's C encoder, made once (no circular-reference bookkeeping: a record is a
    tree, and a cycle still ends in RecursionError)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(ensure_ascii=False, default=str).encode
    chunks = make(None, str, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)
    return lambda value: "".join(chunks(value, 0))


class AuditLog:
    """The frontends' `on_query` callback: writes each event as one JSON line (to `path`,
    appended, or to standard error when `path` is empty).

    Called on an event loop, it only keeps the event (a shallow copy) and the time; the
    lines are rendered and written together at most `FLUSH_DELAY` later (and at `close`),
    after the responses of that loop turn went out: a query's own path pays for no JSON.
    Called elsewhere, each line is rendered and written at once. Lines are what structlog's
    `TimeStamper(fmt="iso", utc=True)` and `JSONRenderer(ensure_ascii=False, default=str)`
    made of the event (its keys in order, then `event`, then `timestamp`), rendered by one
    reused JSON encoder.

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
        self._pending: list[tuple[dict[str, Any], float]] = []
        self._flush_pending = False
        self.include_parameters = include_parameters
        self._encode = _encoder()

    def __call__(self, event: Mapping[str, Any]) -> None:
        kept = (dict(event), time.time())  # the record is the runner's: a shallow copy
        with self._lock:
            if self._fp.closed:
                return
            self._pending.append(kept)
            if self._flush_pending:
                return
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._write()
                return
            self._flush_pending = True
        loop.call_later(FLUSH_DELAY, self.flush)

    def render(self, event: Mapping[str, Any], at: float) -> str:
        """The JSON line (without its newline) of one query event recorded at `at`."""
        if tuple(event) == KEYS:  # the runner's record (every query): renamed in one go
            fields = dict(zip(_LINE_KEYS, event.values(), strict=True))
        else:
            fields = {_RENAMED.get(k, k): v for k, v in event.items()}
        if not self.include_parameters:
            fields.pop("parameters", None)
        fields.pop("event", None)  # structlog's own key: the line's event is "query"
        # whose credentials the proxy (or the backend, pass-through) checked; null: nobody's
        fields.setdefault("user", None)
        fields["event"] = "query"  # where a bound logger's `info("query", ...)` puts it
        stamp = datetime.datetime.fromtimestamp(at, _UTC).isoformat().replace("+00:00", "Z")
        fields["timestamp"] = stamp
        return self._encode(fields)

    def _write(self) -> None:
        """Render what is pending and write it in one go (the lock held)."""
        pending, self._pending = self._pending, []
        lines = []
        for event, at in pending:
            try:
                lines.append(self.render(event, at) + "\n")
            except Exception:  # auditing must never break the query path (nor other lines)
                log.exception("an audit record could not be rendered")
        if lines:
            self._fp.write("".join(lines))
        self._fp.flush()

    def flush(self) -> None:
        with self._lock:
            self._flush_pending = False
            if not self._fp.closed:
                self._write()

    def close(self) -> None:
        with self._lock:
            if self._fp.closed:
                return
            self._write()
            if self._owns:
                self._fp.close()
