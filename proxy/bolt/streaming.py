"""PULL / DISCARD: moving records from a backend `ResultStream` to the client in bounded batches,
and the summary that ends a result.

A PULL with `n` asks the backend for exactly n records (in batches of at most `fetch_batch`),
never the whole result; between batches the writer drains, so a slow client holds back the
backend instead of filling memory.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proxy.backends.base import ResultStream
from proxy.bolt import diagnostics as diag
from proxy.bolt import messages as m
from proxy.bolt.packstream import Packed
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
    # the stream's `fetch_raw` when its framed RECORDs can go to this client as they are
    raw: Callable[[int], Awaitable[list[bytes]]] | None = None


def raw_source(stream: ResultStream, client: tuple[int, int]) -> Any:
    """`stream.fetch_raw` when records can be relayed undecoded to a Bolt `client`: both sides
    speak Bolt >= 5.0, which encode every value alike (4.4 has no element ids and, without
    its "utc" patch, other date-time structures)."""
    fetch_raw = getattr(stream, "fetch_raw", None)
    if fetch_raw is None or client < (5, 0):
        return None
    return fetch_raw if getattr(stream, "bolt_version", (0, 0)) >= (5, 0) else None


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
        raw = result.raw
        remaining = n
        exhausted = False
        while remaining != 0:
            if session.interrupted or session.out.closed:
                return None
            want = batch_size if remaining < 0 else min(batch_size, remaining)
            if raw is not None:  # relayed as the upstream framed them
                records = await raw(want)
                got = len(records)
                if not discard and records:
                    session.write(records[0] if got == 1 else b"".join(records))
                    await session.out.drain()
            else:
                rows = await stream.fetch(want)
                got = len(rows)
                if not discard and rows:
                    out = bytearray()
                    m.encode_records(out, rows, session.codec)
                    session.write(out)
                    await session.out.drain()
            result.records += got
            if remaining > 0:
                remaining -= got
            if got < want:
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
        if summary.plan is not None:
            meta["plan"] = summary.plan
        if summary.bookmark and not result.in_tx:
            meta["bookmark"] = summary.bookmark
        flt = result.filter
        # the upstream's own statuses, without its outcome status (ours says the same)
        upstream = [s for s in summary.statuses if not _is_outcome(s)]
        if session.version >= diag.GQL_STATUSES_SINCE:
            meta["statuses"] = diag.statuses(
                result.verdict,
                result.records > 0,
                bool(result.fields),
                flt.min_severity,
                flt.disabled,
            ) + (upstream or [_status_from_notification(n) for n in summary.notifications])
        else:
            notes = diag.notifications(result.verdict, flt.min_severity, flt.disabled)
            notes += summary.notifications or [_notification_from_status(s) for s in upstream]
            if notes:
                meta["notifications"] = notes
        return meta


@functools.cache
def _outcome_only(had_records: bool, had_fields: bool) -> Packed:
    """The packed statuses list of a result without findings or upstream statuses."""
    return Packed.of(diag.statuses(None, had_records, had_fields, None, set()))


def _is_outcome(status: dict[str, Any]) -> bool:
    return str(status.get("gql_status", "")).startswith(("00", "02"))


def _notification_from_status(s: dict[str, Any]) -> dict[str, Any]:
    """An upstream GQL status object as a Bolt < 5.5 notification."""
    record = s.get("diagnostic_record")
    record = record if isinstance(record, dict) else {}
    note: dict[str, Any] = {
        "code": str(s.get("neo4j_code", "")),
        "title": str(s.get("title", "")),
        "description": str(s.get("status_description", "")),
        "severity": str(record.get("_severity", "WARNING")),
        "category": str(record.get("_classification", "GENERIC")),
    }
    if isinstance(record.get("_position"), dict):
        note["position"] = record["_position"]
    return note


def _status_from_notification(n: dict[str, Any]) -> dict[str, Any]:
    """A backend's (Neo4j-style) notification as a GQL status object."""
    warning = n.get("severity", "WARNING") == "WARNING"
    record: dict[str, Any] = {"OPERATION": "", "OPERATION_CODE": "0", "CURRENT_SCHEMA": "/"}
    for key, target in (
        ("severity", "_severity"),
        ("category", "_classification"),
        ("position", "_position"),
    ):
        if key in n:
            record[target] = n[key]
    return {
        "gql_status": "01N42" if warning else "03N42",
        "status_description": str(n.get("description", "")),
        "neo4j_code": str(n.get("code", "")),
        "title": str(n.get("title", "")),
        "diagnostic_record": record,
    }
