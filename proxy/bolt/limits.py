"""Resource limits of the Bolt front (`[limits]`): parameter size, the guard's time budget in a
bounded thread pool (so a huge query never freezes the event loop), result caps.

Each refusal is a blocked `Verdict` with its own finding code (`LIM.PARAMETERS`,
`LIM.TIMEOUT`), so the client gets the same FAILURE shape as for any blocked query.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from proxy.model import Action, Finding, Severity, Verdict


@dataclass(frozen=True)
class BoltLimits:
    """What one Bolt server enforces per connection and query (0 switches a bound off)."""

    max_parameters: int = 100
    max_parameter_bytes: int = 1024 * 1024
    max_parameter_depth: int = 8
    max_message_elements: int = 100_000
    max_result_rows: int = 10_000
    max_result_bytes: int = 256 * 1024 * 1024
    guard_timeout: float = 5.0  # seconds
    guard_workers: int = 2
    idle_timeout: float = 600.0  # seconds without a complete message
    max_connections: int = 1000
    max_connections_per_client: int = 200

    @classmethod
    def from_config(cls, limits: Mapping[str, Any]) -> BoltLimits:
        defaults = cls()
        return cls(
            max_parameters=limits.get("max_parameters", defaults.max_parameters),
            max_parameter_bytes=limits.get("max_parameter_bytes", defaults.max_parameter_bytes),
            max_parameter_depth=limits.get("max_parameter_depth", defaults.max_parameter_depth),
            max_message_elements=limits.get("max_message_elements", defaults.max_message_elements),
            max_result_rows=limits.get("max_result_rows", defaults.max_result_rows),
            max_result_bytes=limits.get("max_result_bytes", defaults.max_result_bytes),
            guard_timeout=limits.get("guard_timeout_ms", defaults.guard_timeout * 1000) / 1000,
            guard_workers=limits.get("guard_workers", defaults.guard_workers),
            idle_timeout=float(limits.get("idle_timeout_seconds", defaults.idle_timeout)),
            max_connections=limits.get("max_connections", defaults.max_connections),
            max_connections_per_client=limits.get(
                "max_connections_per_client", defaults.max_connections_per_client
            ),
        )


class GuardPool:
    """Threads the guard runs in, off the event loop, in two lanes: queries up to
    `SHORT_QUERY` characters (every LLM query; each costs milliseconds) and longer ones, so a
    few huge queries cannot occupy the threads that everyone else's queries need."""

    SHORT_QUERY = 8 * 1024

    def __init__(self, workers: int) -> None:
        self.short = concurrent.futures.ThreadPoolExecutor(workers, "query-guard")
        self.long = concurrent.futures.ThreadPoolExecutor(workers, "query-guard-long")

    def lane(self, query: str) -> concurrent.futures.Executor:
        return self.short if len(query) <= self.SHORT_QUERY else self.long

    def shutdown(self) -> None:
        """Stop taking work; a guard still running finishes in its thread, unheard."""
        for pool in (self.short, self.long):
            pool.shutdown(wait=False, cancel_futures=True)


def connection_refusal(open_hosts: list[str], host: str, limits: BoltLimits) -> str | None:
    """Why a new connection from `host` is one too many, given the client addresses of the
    open ones (None: accept it)."""
    if limits.max_connections and len(open_hosts) >= limits.max_connections:
        return f"refused: {len(open_hosts)} connections open ([limits] max_connections)"
    per_client = limits.max_connections_per_client
    if per_client and open_hosts.count(host) >= per_client:
        return (
            f"refused: {per_client} connections from {host} open "
            "([limits] max_connections_per_client)"
        )
    return None


def blocked(query: str, code: str, message: str) -> Verdict:
    """A verdict that refuses `query` with one error finding."""
    finding = Finding(code, Severity.ERROR, message, (0, 0), rule="bolt")
    return Verdict(Action.BLOCK, query, (finding,), query)


def parameter_problem(parameters: Mapping[str, Any], limits: BoltLimits) -> str | None:
    """Why `parameters` exceed the limits (None: they fit). One iterative walk, stopping at
    the first bound crossed; sizes are those of the values' PackStream form, roughly."""
    if limits.max_parameters and len(parameters) > limits.max_parameters:
        return (
            f"the query has {len(parameters)} parameters; the limit is {limits.max_parameters} "
            "([limits] max_parameters). Pass fewer parameters, e.g. one list instead of many"
        )
    max_bytes, max_depth = limits.max_parameter_bytes, limits.max_parameter_depth
    size = 0
    stack: list[tuple[Any, int]] = [(v, 1) for v in parameters.values()]
    size += sum(len(k) + 2 for k in parameters)
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list | tuple):
            if max_depth and depth > max_depth:
                return (
                    f"parameter values nest more than {max_depth} lists/maps deep "
                    "([limits] max_parameter_depth). Flatten the parameter"
                )
            size += 5
            if isinstance(value, dict):
                size += sum(len(k) + 2 for k in value)
                stack.extend((v, depth + 1) for v in value.values())
            else:
                stack.extend((v, depth + 1) for v in value)
        elif isinstance(value, str | bytes | bytearray):
            size += len(value) + 5
        else:
            size += 9
        if max_bytes and size > max_bytes:
            return (
                f"the parameters are larger than {max_bytes} bytes "
                "([limits] max_parameter_bytes). Send less data per query"
            )
    return None


async def judge(
    guard: Callable[[str, dict[str, Any]], Verdict],
    query: str,
    parameters: dict[str, Any],
    limits: BoltLimits,
    pool: GuardPool | None,
) -> Verdict:
    """The guard's verdict on `query`: parameters checked first (`LIM.PARAMETERS`), then the
    guard in `pool` (off the event loop) within `limits.guard_timeout` (`LIM.TIMEOUT`: fail
    closed; the worker thread finishes in the background and its result is dropped)."""
    problem = parameter_problem(parameters, limits)
    if problem is not None:
        return blocked(query, "LIM.PARAMETERS", problem)
    if pool is None:
        return guard(query, parameters)
    cached = getattr(guard, "cached", None)  # a repeated query: no trip to the pool
    hit = cached(query, parameters) if cached is not None else None
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    lane = pool.lane(query)
    future = asyncio.get_running_loop().run_in_executor(lane, guard, query, parameters)
    try:
        return await asyncio.wait_for(future, limits.guard_timeout or None)
    except TimeoutError:
        return blocked(
            query,
            "LIM.TIMEOUT",
            f"checking the query took longer than {limits.guard_timeout:g} s "
            "([limits] guard_timeout_ms), so it was not run. Send a shorter, simpler query",
        )


def result_size_finding(rows: int, reason: str) -> Finding:
    return Finding(
        "LIM.RESULT_SIZE",
        Severity.WARNING,
        f"the result was cut off after {rows} records: {reason}. "
        "Add a smaller LIMIT, aggregate, or return fewer/smaller columns",
        (0, 0),
        rule="bolt",
    )
