"""The neutral result model every backend produces and every frontend encodes.

Values in records are plain Python (None, bool, int, float, str, bytes, list, dict,
datetime.date/time/datetime, `Duration`) or one of the graph/spatial types below. Temporal
*parameters* from Bolt clients stay `Temporal`: exactly what the client sent (any year, every
nanosecond), for the backend to receive unchanged. Frontends
(Bolt, HTTP) encode these; backends (FalkorDB over RESP, Bolt upstream, embedded) decode into them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class GraphNode:
    id: int
    labels: tuple[str, ...]
    properties: dict[str, Any]
    element_id: str = ""


@dataclass(frozen=True, slots=True)
class GraphRelationship:
    id: int
    type: str
    start_id: int
    end_id: int
    properties: dict[str, Any]
    element_id: str = ""
    start_element_id: str = ""
    end_element_id: str = ""


@dataclass(frozen=True, slots=True)
class GraphPath:
    nodes: tuple[GraphNode, ...]
    relationships: tuple[GraphRelationship, ...]


@dataclass(frozen=True, slots=True)
class Duration:
    months: int = 0
    days: int = 0
    seconds: int = 0
    nanoseconds: int = 0


@dataclass(frozen=True, slots=True)
class Point:
    srid: int
    x: float
    y: float
    z: float | None = None


@dataclass(frozen=True, slots=True)
class Temporal:
    """A date, time or date-time exactly as a Bolt client sent it: the PackStream structure's
    `tag` and `fields` in the Bolt 5 form (zoned date-times as UTC seconds, nanoseconds, then
    the offset seconds or zone id). Python's datetime would drop nanoseconds and years outside
    1-9999; this keeps them, so a parameter reaches a Bolt backend byte for byte."""

    tag: int
    fields: tuple[int | str, ...]


@dataclass(slots=True)
class ResultSummary:
    """What the database said about a finished result (plus what the guard adds)."""

    query_type: str = "r"  # "r", "w", "rw", "s"
    counters: dict[str, int] = field(default_factory=dict)
    notifications: list[dict[str, Any]] = field(default_factory=list)
    bookmark: str | None = None
    database: str | None = None
    server: str = ""
    t_first_ms: int = 0
    t_last_ms: int = 0
    # GQL status objects a Bolt >= 5.5 upstream sent (its own outcome status included)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    # an execution plan in Neo4j's shape ({operatorType, args, identifiers, children}): the
    # answer to an EXPLAIN
    plan: dict[str, Any] | None = None


class BackendError(Exception):
    """The database refused or failed a query: `code` is a Neo4j-style status code."""

    def __init__(self, message: str, code: str = "Neo.DatabaseError.General.UnknownError"):
        super().__init__(message)
        self.code = code
        self.message = message


class BackendUnavailable(BackendError):
    """The database cannot be reached (connection refused, died mid-query)."""

    def __init__(self, message: str):
        super().__init__(message, "Neo.TransientError.General.DatabaseUnavailable")


class ResultStream(Protocol):
    """Rows of one query, pulled in batches so big results stream with bounded memory."""

    keys: list[str]

    async def fetch(self, n: int) -> list[list[Any]]:
        """Up to n more records (n < 0: all); an empty list once exhausted."""

    async def discard(self) -> None:
        """Drop the remaining records."""

    def has_more(self) -> bool:
        """True while records may remain."""

    def summary(self) -> ResultSummary:
        """Valid once the stream is exhausted or discarded."""


class Transaction(Protocol):
    async def run(self, query: str, parameters: dict[str, Any]) -> ResultStream: ...

    async def commit(self) -> str | None:
        """Commit; returns a bookmark when the backend has one."""

    async def rollback(self) -> None: ...


class Backend(Protocol):
    """One database behind the proxy (per server instance, shared by all client sessions)."""

    name: str

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def run(
        self, query: str, parameters: dict[str, Any], database: str | None = None
    ) -> ResultStream:
        """Run in an auto-commit transaction."""

    async def begin(
        self, database: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Transaction: ...


async def collect(stream: ResultStream) -> list[list[Any]]:
    """All records of a stream (tests, probes, small results)."""
    rows: list[list[Any]] = []
    while True:
        batch = await stream.fetch(1000)
        if not batch:
            return rows
        rows.extend(batch)


async def iterate(stream: ResultStream, batch: int = 1000) -> AsyncIterator[list[Any]]:
    while True:
        rows = await stream.fetch(batch)
        if not rows:
            return
        for row in rows:
            yield row
