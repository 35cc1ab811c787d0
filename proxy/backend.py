"""The Backend protocol every stage uses a database through: a query's `ResultStream` of
records (values from `query_guard.values`), its `ResultSummary`, `Transaction`s, and the
`BackendError` a database's refusal or failure becomes. Backends (FalkorDB over RESP, Bolt
upstream, Gremlin, SQL, embedded) implement it in `query_guard.backends`; the guard, the repair
loop, the runner and the fronts use it without importing one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol


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
