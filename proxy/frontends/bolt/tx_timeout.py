"""The client's transaction timeout, as Neo4j applies it.

A driver may give a transaction a timeout (`tx_timeout`, milliseconds, in BEGIN's extra or an
auto-commit RUN's). Neo4j terminates a transaction still running when it ends and answers
`Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration`; the proxy does the same
for every backend, whether or not the database applies the value itself (ArcadeDB does not):
the work in flight is cancelled (an upstream connection waiting for it is dropped), the
transaction rolled back, and the FAILURE carries that code. A RUN, PULL or COMMIT that comes
after the deadline fails the same way. The proxy's own `[limits] query_timeout_ms` is the
server-configured timeout and keeps Neo4j's `TransactionTimedOut`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

CLIENT_TIMEOUT_CODE = "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"

T = TypeVar("T")


class ClientTimeout(Exception):
    """The client's `tx_timeout` ran out."""


@dataclass(frozen=True)
class Deadline:
    ms: int  # the client's tx_timeout
    at: float  # time.monotonic() when it runs out

    @property
    def message(self) -> str:
        return (
            "The transaction has not completed within the timeout specified at its start by "
            f"the client ({self.ms} ms tx_timeout) and was rolled back. You may want to retry "
            "with a longer timeout."
        )

    def remaining(self) -> float:
        return self.at - time.monotonic()


def deadline(extra: dict[str, Any]) -> Deadline | None:
    """The deadline a BEGIN's or auto-commit RUN's extra sets (None: no client timeout; 0
    means none, as on Neo4j)."""
    ms = extra.get("tx_timeout")
    if type(ms) is not int or ms <= 0:
        return None
    return Deadline(ms, time.monotonic() + ms / 1000)


async def within(work: Awaitable[T], limit: Deadline | None) -> T:
    """`work`'s result, or ClientTimeout when the deadline passes first (the work is
    cancelled)."""
    if limit is None:
        return await work
    try:
        async with asyncio.timeout(max(limit.remaining(), 0.0)):
            return await work
    except TimeoutError:
        raise ClientTimeout(limit.message) from None


def expired(limit: Deadline | None) -> bool:
    return limit is not None and limit.remaining() <= 0
