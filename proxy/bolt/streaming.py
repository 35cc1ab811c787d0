"""PULL / DISCARD: moving records from a backend `ResultStream` to the client in bounded batches,
and the summary that ends a result.

A PULL with `n` asks the backend for exactly n records (in batches of at most `fetch_batch`),
never the whole result; between batches the writer drains, so a slow client holds back the
backend instead of filling memory.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proxy.backends.base import ResultStream
from proxy.bolt import diagnostics as diag
from proxy.bolt import messages as m
from proxy.model import Verdict

if TYPE_CHECKING:
    from proxy.bolt.session import BoltSession, NotificationFilter


@dataclass(slots=True)
class OpenResult:
    """A result between its RUN and the PULL / DISCARD that exhausts it."""

    stream: ResultStream
    fields: list[str]
    qid: int
    verdict: Verdict
    filter: NotificationFilter
    database: str | None
    in_tx: bool
    records: int = 0
    streaming_since: float | None = None


class ResultPump:
    """Streams one PULL / DISCARD for a session."""

    def __init__(self, session: BoltSession) -> None:
        self.session = session

    async def run(self, result: OpenResult, n: int, discard: bool) -> bool | None:
        """Send records + SUCCESS. True when the result is exhausted, False when `has_more`,
        None when a RESET interrupted the stream (no summary was sent)."""
        session = self.session
        if result.streaming_since is None:
            result.streaming_since = time.perf_counter()
        stream = result.stream
        if discard and n == -1:
            await stream.discard()
            session.success(self._summary(result))
            return True
        batch_size = max(1, session.ctx.fetch_batch)
        remaining = n
        exhausted = False
        while remaining != 0:
            if session.interrupted or session.out.closed:
                return None
            want = batch_size if remaining < 0 else min(batch_size, remaining)
            rows = await stream.fetch(want)
            if not discard and rows:
                out = bytearray()
                m.encode_records(out, rows, session.codec)
                session.write(out)  # the transport copies; no need to freeze it first
                await session.out.drain()
            result.records += len(rows)
            if remaining > 0:
                remaining -= len(rows)
            if len(rows) < want:
                exhausted = True
                break
        if not exhausted and not stream.has_more():
            exhausted = True
        if exhausted:
            session.success(self._summary(result))
            return True
        session.success({"has_more": True})
        return False

    def _summary(self, result: OpenResult) -> dict[str, Any]:
        session = self.session
        summary = result.stream.summary()
        started = result.streaming_since or time.perf_counter()
        meta: dict[str, Any] = {
            "type": summary.query_type or "r",
            "t_last": int((time.perf_counter() - started) * 1000),
            "db": result.database or session.ctx.home_database,
        }
        if summary.counters:
            meta["stats"] = dict(summary.counters)
        if summary.bookmark and not result.in_tx:
            meta["bookmark"] = summary.bookmark
        flt = result.filter
        if session.version >= diag.GQL_STATUSES_SINCE:
            meta["statuses"] = diag.statuses(
                result.verdict, result.records > 0, bool(result.fields), flt.min_severity,
                flt.disabled,
            ) + [_status_from_notification(n) for n in summary.notifications]
        else:
            notes = diag.notifications(result.verdict, flt.min_severity, flt.disabled)
            notes += summary.notifications
            if notes:
                meta["notifications"] = notes
        return meta


def _status_from_notification(n: dict[str, Any]) -> dict[str, Any]:
    """A backend's (Neo4j-style) notification as a GQL status object."""
    warning = n.get("severity", "WARNING") == "WARNING"
    record: dict[str, Any] = {"OPERATION": "", "OPERATION_CODE": "0", "CURRENT_SCHEMA": "/"}
    for key, target in (("severity", "_severity"), ("category", "_classification"),
                        ("position", "_position")):
        if key in n:
            record[target] = n[key]
    return {
        "gql_status": "01N42" if warning else "03N42",
        "status_description": str(n.get("description", "")),
        "neo4j_code": str(n.get("code", "")),
        "title": str(n.get("title", "")),
        "diagnostic_record": record,
    }
