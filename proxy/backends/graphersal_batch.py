"""Quick read-only traversals that reach the embedded graphersal in the same event-loop turn,
run as one graphersal script.

Every `Graph.execute` hands its script to graphersal's own script thread and waits for it: a
small traversal spends about as much CPU on that hand-off as on its work. Concurrent clients'
traversals that arrive in one loop turn therefore wait for the next turn and run together, one
block per traversal (`[{ let anchor = __qg0_anchor; g.V(anchor)….to_list() }, …]`): each
block sees its own bindings under its own names and has its own evaluation timeout, and the
list holds what each traversal returns alone. A batch that fails in any way (an error, a
timeout, a result of another shape) is run again one traversal at a time, so every traversal
gets exactly the result or the error it gets alone (read-only traversals only: running one
twice changes nothing).

A traversal whose text could reach another block's bindings is never batched: one that names
the renamed bindings' prefix or graphersal's `params` map, or binds a name that is not a
plain identifier. Nor is one that binds `g`: its block's `let g = …` would replace the
traversal source the guard judged the traversal against.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

PREFIX = "__qg"
MAX_BATCH = 16  # traversals per script: bounds how long one batch holds the event loop
# Waiting for the next turn costs two loop turns: a traversal runs at once while the last
# COMPANY batches all held one traversal, except every PROBE-th (to see company come back).
COMPANY = 8
PROBE = 8

Item = tuple[str, dict[str, Any]]  # (script body after `g.`, parameter bindings)
RunAll = Callable[[str, dict[str, Any]], Any]  # script, parameters -> graphersal's result


def batchable(script: str, params: Mapping[str, Any]) -> bool:
    """May this traversal (`g.….to_list()`) share a script with others?"""
    return (
        script.startswith("g.")
        and PREFIX not in script
        and "params" not in script
        and all(name.isidentifier() and PREFIX not in name and name != "g" for name in params)
    )


def batch_script(items: list[Item], timeout_ms: int) -> tuple[str, dict[str, Any]]:
    """One script whose result lists each item's result, and its parameters."""
    blocks, params = [], {}
    for i, (body, bindings) in enumerate(items):
        lets = []
        for name, value in bindings.items():
            outer = f"{PREFIX}{i}_{name}"
            params[outer] = value
            lets.append(f"let {name} = {outer}; ")
        option = f'g.with("evaluationTimeout", {timeout_ms}).'
        blocks.append("{ " + "".join(lets) + option + body + " }")
    return "[" + ", ".join(blocks) + "]", params


class LoopBatch:
    """The traversals waiting for the next loop turn: `await join(body, params, alone)`."""

    def __init__(self, run_all: RunAll, timeout_ms: int) -> None:
        self._run_all = run_all
        self._timeout_ms = timeout_ms
        self._waiting: list[tuple[Item, Callable[[], list[Any] | None], asyncio.Future[Any]]] = []
        self._loop: asyncio.AbstractEventLoop | None = None  # the waiting traversals' loop
        self._company = COMPANY  # batches to wait for before running alone ones at once
        self._lonely = 0  # traversals that found no batch waiting and no company

    def join(
        self, body: str, params: dict[str, Any], alone: Callable[[], list[Any] | None]
    ) -> asyncio.Future[Any]:
        """A future of the traversal's values (None: too slow on the loop, run it elsewhere)
        and the seconds its share of a batch took (None: it ran alone); `alone` runs it by
        itself (when no other traversal came, or the batch failed)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if self._waiting and loop is not self._loop:  # a backend shared by two loops: alone
            return _now(future, alone)
        if not self._waiting and self._company <= 0:
            self._lonely += 1
            if self._lonely % PROBE:
                return _now(future, alone)
        if not self._waiting:
            self._loop = loop
            loop.call_soon(self._flush)
        self._waiting.append(((body, params), alone, future))
        if len(self._waiting) >= MAX_BATCH:
            self._flush()
        return future

    def _flush(self) -> None:
        waiting = [w for w in self._waiting if not w[2].done()]  # done: cancelled
        self._waiting = []
        if not waiting:
            return
        self._company = COMPANY if len(waiting) > 1 else self._company - 1
        started = time.perf_counter()
        values = self._together([w[0] for w in waiting]) if len(waiting) > 1 else None
        share = (time.perf_counter() - started) / len(waiting)
        for n, (_, alone, future) in enumerate(waiting):
            if values is not None:
                future.set_result((values[n], share))
                continue
            _now(future, alone)

    def _together(self, items: list[Item]) -> list[list[Any]] | None:
        """Each item's values from one script (None: the batch failed, run them alone)."""
        script, params = batch_script(items, self._timeout_ms)
        try:
            got = self._run_all(script, params)
            if not isinstance(got, list) or len(got) != len(items):
                return None
            return [list(v or ()) for v in got]
        except Exception:  # any failure: each traversal alone says what went wrong
            return None


def _now(future: asyncio.Future[Any], alone: Callable[[], list[Any] | None]) -> asyncio.Future[Any]:
    """`future`, done with what `alone` gives (its values, or its error)."""
    try:
        future.set_result((alone(), None))
    except Exception as exc:
        future.set_exception(exc)
    return future
