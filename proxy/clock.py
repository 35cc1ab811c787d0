"""Durations as the audit log, the repair loop and the fronts report them."""

from __future__ import annotations

import time


def elapsed_ms(started: float) -> int:
    """Whole milliseconds since `started`, a `time.perf_counter()` reading."""
    return int((time.perf_counter() - started) * 1000)
