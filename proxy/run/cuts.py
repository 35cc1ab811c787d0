"""Result cuts every front applies with the same numbers (`[limits] max_result_rows`,
`max_result_bytes`): `within` decides how many records of given sizes may go out (the Bolt
pump measures records as PackStream bytes), `collect` reads a whole result for the fronts
that answer at once (HTTP, MCP, Gremlin), measuring each value as it arrives — so one huge
value is cut like many small ones. A cut is reported as `LIM.RESULT_SIZE`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from query_guard.backend import ResultStream, ResultSummary
from query_guard.model import Finding, Severity

ROWS_REASON = "more rows than [limits] max_result_rows"
BYTES_REASON = "more bytes than [limits] max_result_bytes"
BATCH = 1000


def result_size_finding(rows: int, reason: str) -> Finding:
    return Finding(
        "LIM.RESULT_SIZE",
        Severity.WARNING,
        f"the result was cut off after {rows} records: {reason}. "
        "Add a smaller LIMIT, aggregate, or return fewer/smaller columns",
        (0, 0),
        rule="limits",
    )


def within(sizes: list[int], rows_left: int, bytes_left: int) -> tuple[int, str | None]:
    """How many records (of `sizes` bytes each) may go out under the row and byte budgets
    (-1: unbounded), and why the rest may not (None: all fit)."""
    if 0 <= rows_left < len(sizes):
        sent, cut = rows_left, ROWS_REASON
    else:
        sent, cut = len(sizes), None
    if bytes_left >= 0:
        total = 0
        for i in range(sent):
            total += sizes[i]
            if total > bytes_left:
                return i, BYTES_REASON
    return sent, cut


def value_size(value: Any) -> int:
    """Roughly the bytes `value` takes on the wire (JSON or PackStream alike), one iterative
    walk (deep values cannot overflow the stack)."""
    size = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str | bytes | bytearray | memoryview):
            size += len(item) + 2
        elif isinstance(item, dict):
            size += 2 + sum(len(str(k)) + 4 for k in item)
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            size += 2 + len(item)
            stack.extend(item)
        elif hasattr(item, "__slots__") and not isinstance(item, int | float | bool):
            size += 16  # graph values (nodes, relationships, paths, temporal): their fields
            stack.extend(getattr(item, s) for s in item.__slots__ if hasattr(item, s))
        else:
            size += 8
    return size


@dataclass
class Collected:
    """A whole result, cut where it had to be."""

    fields: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    cut: Finding | None = None  # LIM.RESULT_SIZE, when rows were left out
    summary: ResultSummary | None = None


async def collect(stream: ResultStream, max_rows: int, max_bytes: int) -> Collected:
    """Every record of `stream` within `max_rows` and `max_bytes` (0: no bound); the rest is
    discarded upstream and the cut reported. Raises what the stream raises (BackendError)."""
    out = Collected(list(stream.keys))
    used = 0
    while True:
        rows_left = max_rows - len(out.rows) if max_rows else -1
        ask = BATCH if rows_left < 0 else min(BATCH, rows_left + 1)
        batch = await stream.fetch(ask)
        if not batch:
            break
        sizes = [value_size(row) for row in batch]
        sent, reason = within(sizes, rows_left, max_bytes - used if max_bytes else -1)
        out.rows.extend(batch[:sent])
        used += sum(sizes[:sent])
        if reason is not None:
            await stream.discard()
            out.cut = result_size_finding(len(out.rows), reason)
            break
        if len(batch) < ask:
            break
    out.summary = stream.summary()
    return out


class ListStream:
    """A `ResultStream` over rows already in memory (SQL results, Gremlin traversers)."""

    def __init__(self, keys: list[str], rows: list[list[Any]]) -> None:
        self.keys = keys
        self._rows = rows
        self._at = 0

    async def fetch(self, n: int) -> list[list[Any]]:
        end = len(self._rows) if n < 0 else self._at + n
        batch = self._rows[self._at : end]
        self._at += len(batch)
        return batch

    async def discard(self) -> None:
        self._at = len(self._rows)

    def rewind(self) -> bool:
        """Start again from the first row (the runner's peek, `plainly_has_rows`)."""
        self._at = 0
        return True

    def has_more(self) -> bool:
        return self._at < len(self._rows)

    def summary(self) -> ResultSummary:
        return ResultSummary()
