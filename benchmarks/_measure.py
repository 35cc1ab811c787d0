"""Timing helpers for benchmarks: latency samples, throughput with one thread per client or
with async clients on one event loop, and CPU time of this or another process."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, NamedTuple


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


class Rate(NamedTuple):
    """A throughput point: queries per second; the client process's CPU per query (µs; the
    async client runs on this process's one event loop, so 1e6 / cpu_us is the most it can
    send with the answers it gets); the machine's idle cores over the point; and the CPU per query
    of the process in the middle (serve or HAProxy; 0 when there is none)."""

    qps: float
    cpu_us: float
    idle_cores: float
    middle_cpu_us: float


def idle_seconds() -> float:
    """The machine's idle time so far, all cores together (/proc/stat: idle + iowait)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return (int(fields[4]) + int(fields[5])) / os.sysconf("SC_CLK_TCK")


async def async_throughput(
    query_once: Callable[[int], Awaitable[Any]], clients: int, seconds: float, pid: int | None
) -> Rate:
    """Queries per second with `clients` concurrent loops (each its own connection)."""
    done = 0
    deadline = 0.0

    async def loop(worker: int) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await query_once(worker)
            done += 1

    for w in range(clients):  # warm up every connection
        await query_once(w)
    deadline = time.perf_counter() + seconds
    started, cpu_started, idle_started = time.perf_counter(), time.process_time(), idle_seconds()
    middle_started = cpu_seconds(pid) if pid else 0.0
    await asyncio.gather(*(loop(w) for w in range(clients)))
    elapsed = time.perf_counter() - started
    cpu_us = (time.process_time() - cpu_started) * 1e6 / max(1, done)
    middle_us = (cpu_seconds(pid) - middle_started) * 1e6 / max(1, done) if pid else 0.0
    idle = (idle_seconds() - idle_started) / elapsed
    return Rate(done / elapsed, cpu_us, idle, middle_us)
