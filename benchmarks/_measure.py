"""Timing helpers for benchmarks that drive synchronous clients: latency samples, throughput
with one thread per client, and CPU time of this or another process."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def latencies(once: Callable[[], Any], n: int) -> list[float]:
    """Milliseconds per call, after a warm-up."""
    for _ in range(min(100, n)):
        once()
    out = []
    for _ in range(n):
        started = time.perf_counter_ns()
        once()
        out.append((time.perf_counter_ns() - started) / 1e6)
    return out


def throughput(workers: list[Callable[[], Any]], seconds: float) -> float:
    """Calls per second with one thread per worker, all started together."""
    for once in workers:
        once()  # warm every connection
    counts = [0] * len(workers)
    deadline = [float("inf")]
    ready = threading.Barrier(len(workers) + 1)

    def loop(i: int) -> None:
        ready.wait()
        once, n = workers[i], 0
        while time.perf_counter() < deadline[0]:
            once()
            n += 1
        counts[i] = n

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(len(workers))]
    for t in threads:
        t.start()
    ready.wait()
    started = time.perf_counter()
    deadline[0] = started + seconds
    for t in threads:
        t.join()
    return sum(counts) / (time.perf_counter() - started)


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user + system) of this process, or of process `pid` (from /proc)."""
    if pid is None:
        return time.process_time()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
