"""The backend query timeout (`[limits] query_timeout_ms`) as every backend reports it: one
Neo4j status code (a ClientError, so drivers do not retry) and a `LIM.TIMEOUT` message."""

from __future__ import annotations

from proxy.backends.base import BackendError

# Neo4j's code for a query stopped by its transaction timeout.
TIMEOUT_CODE = "Neo.ClientError.Transaction.TransactionTimedOut"


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
