"""PULL / DISCARD: moving records from a backend `ResultStream` to the client in bounded batches,
and the summary that ends a result.

A PULL with `n` asks the backend for exactly n records (in batches of at most `fetch_batch`),
never the whole result; between batches the writer drains, so a slow client holds back the
backend instead of filling memory.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from query_guard.backend import ResultStream
from query_guard.clock import elapsed_ms
from query_guard.frontends.bolt import diagnostics as diag
from query_guard.frontends.bolt.conversation import Conversation, OpenResult
from query_guard.run.cuts import result_size_finding
from query_guard.run.seen import Seen
from query_guard.wire import bolt_messages as m
from query_guard.wire.bolt_values import ValueCodec


def raw_source(stream: ResultStream, client: tuple[int, int]) -> Any:
    """`stream.fetch_raw` when records can be relayed undecoded to a Bolt `client`: both sides
    speak Bolt >= 5.0, which encode every value alike (4.4 has no element ids and, without
    its "utc" patch, other date-time structures)."""
    fetch_raw = getattr(stream, "fetch_raw", None)
    if fetch_raw is None or client < (5, 0):
        return None
    return fetch_raw if getattr(stream, "bolt_version", (0, 0)) >= (5, 0) else None


class ResultPump:
    """Streams the records of a connection's PULL / DISCARD."""

    def __init__(self, conv: Conversation) -> None:
        self.conv = conv

    async def run(self, result: OpenResult, n: int, discard: bool) -> bool | None:
        """Send records + SUCCESS. True when the result is exhausted, False when `has_more`,
        None when a RESET interrupted the stream (no summary was sent)."""
        conv = self.conv
        if result.streaming_since is None:
            result.streaming_since = time.perf_counter()
        stream = result.stream
        if discard and n == -1:
            await stream.discard()
            conv.success(self._summary(result))
            self._finished(result, discard)
            return True
        batch_size = max(1, conv.ctx.fetch_batch)
        limits = conv.ctx.limits
        max_rows, max_bytes = limits.max_result_rows, limits.max_result_bytes
        raw = result.raw
        remaining = n
        exhausted = False
        while remaining != 0:
            if conv.interrupted or conv.out.closed:
                return None
            want = batch_size if remaining < 0 else min(batch_size, remaining)
            rows_left = max_rows - result.records if max_rows else -1
            # one record past the cap tells a cut-off result from one that just fits
            ask = want if rows_left < 0 else min(want, rows_left + 1)
            if raw is not None:  # relayed as the upstream framed them
                records = await raw(ask)
                data: bytes | bytearray = records[0] if len(records) == 1 else b"".join(records)
                sizes = [len(r) for r in records]
            else:
                rows = await stream.fetch(ask)
                if rows and result.records == 0:
                    result.first_row = rows[0]  # for the runner, told at the end (`_finished`)
                data, sizes = _encoded(rows, conv.codec)
            got = len(sizes)
            sent, cut = _within(sizes, rows_left, max_bytes - result.bytes if max_bytes else -1)
            size = len(data) if sent == got else sum(sizes[:sent])
            if not discard and sent:
                conv.write(data if sent == got else data[:size])
                await conv.out.drain()
            result.records += sent
            result.bytes += size
            if cut is not None:
                await self._cut(result, cut)
                exhausted = True
                break
            if remaining > 0:
                remaining -= got
            if got < ask:
                exhausted = True
                break
        if not exhausted and not stream.has_more():
            exhausted = True
        if exhausted:
            conv.success(self._summary(result))
            self._finished(result, discard)
            return True
        conv.success({"has_more": True})
        return False

    def _finished(self, result: OpenResult, discarded: bool) -> None:
        """Tell the runner what the client got of the result (once)."""
        seen, result.seen = result.seen, None
        if seen is None:
            return
        cut = discarded or any(f.code == "LIM.RESULT_SIZE" for f in result.verdict.findings)
        self.conv.ctx.runner.finished(
            Seen(seen.request, seen.outcome, result.records, result.first_row, cut, seen.read_error)
        )

    async def _cut(self, result: OpenResult, reason: str) -> None:
        """Stop a result at a cap: drop the rest upstream, warn in its summary."""
        await result.stream.discard()
        finding = result_size_finding(result.records, reason)
        result.verdict = replace(result.verdict, findings=(*result.verdict.findings, finding))

    def _summary(self, result: OpenResult) -> dict[str, Any]:
        conv = self.conv
        summary = result.stream.summary()
        started = result.streaming_since or time.perf_counter()
        meta: dict[str, Any] = {
            "type": summary.query_type or "r",
            "t_last": elapsed_ms(started),
            "db": result.database or conv.ctx.home_database,
        }
        if result.seen is not None:  # the query id, the client's handle for feedback
            meta["qg_id"] = result.seen.request.id
        if summary.counters:
            meta["stats"] = dict(summary.counters)
        if summary.plan is not None:
            meta["plan"] = summary.plan
        if summary.bookmark and not result.in_tx:
            meta["bookmark"] = summary.bookmark
        flt = result.filter
        # the upstream's own statuses, without its outcome status (ours says the same)
        upstream = [s for s in summary.statuses if not _is_outcome(s)]
        if conv.version >= diag.GQL_STATUSES_SINCE:
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


def _encoded(rows: list[list[Any]], codec: ValueCodec) -> tuple[bytearray, list[int]]:
    """The RECORD messages of `rows`, framed into one buffer, and the size of each."""
    out = bytearray()
    sizes: list[int] = []
    for row in rows:
        start = len(out)
        m.encode_records(out, [row], codec)
        sizes.append(len(out) - start)
    return out, sizes


def _within(sizes: list[int], rows_left: int, bytes_left: int) -> tuple[int, str | None]:
    """How many records (of `sizes` bytes each) may go out under the row and byte budgets
    (-1: unbounded), and why the rest may not (None: all fit)."""
    if 0 <= rows_left < len(sizes):
        sent, cut = rows_left, "more rows than [limits] max_result_rows"
    else:
        sent, cut = len(sizes), None
    if bytes_left >= 0:
        total = 0
        for i in range(sent):
            total += sizes[i]
            if total > bytes_left:
                return i, "more bytes than [limits] max_result_bytes"
    return sent, cut


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
