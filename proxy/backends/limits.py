"""The backend query timeout (`[limits] query_timeout_ms`) as every backend reports it: one
Neo4j status code (a ClientError, so drivers do not retry) and a `LIM.TIMEOUT` message; and
the result byte budget (`[limits] max_result_bytes`) as the SQL backends report it
(`LIM.RESULT_SIZE`); and the refusal while too many timed-out queries still run upstream
(`[limits] max_abandoned_queries`, `LIM.ABANDONED`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from query_guard.backend import BackendError

# Neo4j's code for a query stopped by its transaction timeout.
TIMEOUT_CODE = "Neo.ClientError.Transaction.TransactionTimedOut"
# A result over the byte budget: a client error (retrying cannot help).
RESULT_SIZE_CODE = "Neo.ClientError.Statement.ExecutionFailed"
ABANDONED = "LIM.ABANDONED"  # the finding code a refusal under max_abandoned_queries names


def timeout_error(
    timeout_ms: int | None, detail: str = "", code: str = TIMEOUT_CODE
) -> BackendError:
    """The error for a query the database (or the proxy waiting for it) stopped; `code` is
    the database's own timeout code when it sent one."""
    limit = f"{timeout_ms} ms " if timeout_ms else ""
    return BackendError(
        f"LIM.TIMEOUT: the query ran longer than the {limit}query timeout "
        "([limits] query_timeout_ms) and was stopped"
        + (f" ({detail})" if detail else "")
        + ". Make it cheaper: anchor patterns on a property, bound variable-length paths, "
        "add a LIMIT, aggregate less",
        code,
    )


def is_timeout(code: str) -> bool:
    """A database's own timeout status (Neo4j 4/5: TransactionTimedOut*)."""
    return "TransactionTimedOut" in code


def result_size_error(max_bytes: int, detail: str = "") -> BackendError:
    """The error for a result (or one value in it) larger than `[limits] max_result_bytes`:
    the backend stopped reading it, so none of it is sent."""
    return BackendError(
        f"LIM.RESULT_SIZE: the result is larger than the {max_bytes} byte limit "
        "([limits] max_result_bytes) and was not sent"
        + (f" ({detail})" if detail else "")
        + ". Return fewer or smaller columns (e.g. length(x) instead of a large x), add a "
        "smaller LIMIT, aggregate",
        RESULT_SIZE_CODE,
    )


def abandoned_error(running: int, cap: int) -> BackendError:
    """The refusal of a new query while `running` (>= `cap`) queries the proxy stopped waiting
    for still run on the database: sent at once, rather than queued behind them upstream."""
    return BackendError(
        f"{ABANDONED}: {running} queries that ran past the query timeout are still running "
        f"on the database, which does not stop them; new queries are refused until fewer than "
        f"{cap} are left ([limits] max_abandoned_queries). Retry in a moment; the database's "
        "own timeout stops such queries (ArcadeDB: arcadedb.command.timeout)",
        RESULT_SIZE_CODE,
    )


def row_bytes(row: Sequence[Any]) -> int:
    """A row's size as the fronts send it, roughly: text and blobs by length, 8 per other."""
    return sum(len(v) if isinstance(v, str | bytes) else 8 for v in row)


def wait_bound(timeout_ms: int) -> float:
    """Seconds the proxy waits for a backend that should have stopped a query at
    `timeout_ms` (`[limits] query_timeout_ms`): the timeout plus a grace, within 2x of it and at
    most 5 s more, so a client hears LIM.TIMEOUT within 3x whatever the backend does."""
    seconds = timeout_ms / 1000
    return seconds + min(5.0, max(seconds, 0.5))
