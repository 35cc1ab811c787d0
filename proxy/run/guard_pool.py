"""The guard off the event loop, within the `[limits]` every front applies: query parameters
(`max_parameters`, `max_parameter_bytes`, `max_parameter_depth`: `LIM.PARAMETERS`) checked
first, then the guard in a bounded thread pool within its time budget (`guard_timeout_ms`:
`LIM.TIMEOUT`, fail closed), so a huge query never freezes the event loop. The runner calls
it for every front (`query_guard.run.runner`), the repair loops for every candidate.

Each refusal is a blocked `Verdict` with its own finding code, so the client gets the same
shape as for any blocked query.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from query_guard.model import Action, Finding, Severity, Verdict


class GuardLimits(Protocol):
    """The bounds `judge` applies (0 switches one off)."""

    @property
    def max_parameters(self) -> int: ...
    @property
    def max_parameter_bytes(self) -> int: ...
    @property
    def max_parameter_depth(self) -> int: ...
    @property
    def guard_timeout(self) -> float: ...  # seconds


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


def blocked(query: str, code: str, message: str) -> Verdict:
    """A verdict that refuses `query` with one error finding."""
    finding = Finding(code, Severity.ERROR, message, (0, 0), rule="limits")
    return Verdict(Action.BLOCK, query, (finding,), query)


# the sizes `parameter_problem` counts, roughly PackStream's: a map key's overhead, a text's or
# bytes' (beside its length), a list's or map's, any other value's
_KEY, _TEXT, _CONTAINER, _SCALAR = 2, 5, 5, 9


def parameter_problem(parameters: Mapping[str, Any], limits: GuardLimits) -> str | None:
    """Why `parameters` exceed the limits (None: they fit). One iterative walk, stopping at
    the first bound crossed; sizes are those of the values' PackStream form, roughly."""
    if limits.max_parameters and len(parameters) > limits.max_parameters:
        return (
            f"the query has {len(parameters)} parameters; the limit is {limits.max_parameters} "
            "([limits] max_parameters). Pass fewer parameters, e.g. one list instead of many"
        )
    max_bytes, max_depth = limits.max_parameter_bytes, limits.max_parameter_depth
    size = 0
    for key, value in parameters.items():  # flat text and numbers (most queries): no walk
        kind = type(value)
        if kind is str:
            size += len(key) + _KEY + len(value) + _TEXT
        elif kind is int or kind is float or kind is bool or value is None:
            size += len(key) + _KEY + _SCALAR
        else:
            break
    else:
        return _too_large(max_bytes) if max_bytes and size > max_bytes else None
    size = 0
    stack: list[tuple[Any, int]] = [(v, 1) for v in parameters.values()]
    size += sum(len(k) + _KEY for k in parameters)
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list | tuple):
            if max_depth and depth > max_depth:
                return (
                    f"parameter values nest more than {max_depth} lists/maps deep "
                    "([limits] max_parameter_depth). Flatten the parameter"
                )
            size += _CONTAINER
            if isinstance(value, dict):
                size += sum(len(k) + _KEY for k in value)
                stack.extend((v, depth + 1) for v in value.values())
            else:
                stack.extend((v, depth + 1) for v in value)
        elif isinstance(value, str | bytes | bytearray):
            size += len(value) + _TEXT
        else:
            size += _SCALAR
        if max_bytes and size > max_bytes:
            return _too_large(max_bytes)
    return None


def _too_large(max_bytes: int) -> str:
    return (
        f"the parameters are larger than {max_bytes} bytes "
        "([limits] max_parameter_bytes). Send less data per query"
    )


async def judge(
    guard: Callable[[str, dict[str, Any]], Verdict],
    query: str,
    parameters: dict[str, Any],
    limits: GuardLimits,
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
