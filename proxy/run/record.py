"""The audit record: one per query, with the same keys whatever the front (`KEYS`), handed to
the server's `on_query` hook (the audit log and the metrics)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from query_guard.run.request import QueryRequest

OnQuery = Callable[[Mapping[str, Any]], None]

# Every record has exactly these keys (the audit log renames query -> original and
# action -> verdict); `detail` holds what only one front has.
KEYS = (
    "front", "client", "user", "language", "query", "parameters", "question", "database",
    "in_transaction", "action", "codes", "final_query", "guard_ms", "backend_ms", "error",
    "repair", "repaired", "detail",
)  # fmt: skip


def new_record(req: QueryRequest) -> dict[str, Any]:
    """The record of `req` before the guard has judged it (every key of `KEYS`, in order:
    one dict display, built in one go on every query's path)."""
    return {
        "front": req.front, "client": req.client, "user": req.user, "language": req.language,
        "query": req.text, "parameters": req.parameters, "question": req.question,
        "database": req.database, "in_transaction": req.tx is not None, "action": None,
        "codes": [], "final_query": None, "guard_ms": None, "backend_ms": None, "error": None,
        "repair": None, "repaired": None, "detail": dict(req.detail),
    }  # fmt: skip
