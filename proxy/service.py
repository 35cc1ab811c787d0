"""One guarded query, start to end, for the fronts that answer a whole result at once (HTTP,
MCP): parameter limits and the guard within its time budget (off the event loop, in the Bolt
front's `GuardPool`: `LIM.PARAMETERS`, `LIM.TIMEOUT`), `SCH.NO_SCHEMA` while there is no schema,
the client's access mode (a write in a read transaction is refused), block or execute what was
judged, the repair loop when it is on, the rows (bounded), and one audit line — the same steps
the Bolt front takes per RUN.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from proxy.backends.base import BackendError, ResultStream
from proxy.bolt.limits import BoltLimits
from proxy.clock import elapsed_ms
from proxy.guard_pool import GuardPool, judge
from proxy.model import Action, Finding, Severity, Verdict
from proxy.pipeline import Guard

OnQuery = Callable[[Mapping[str, Any]], None]
Note = Callable[[], Finding | None]
# What Neo4j answers for a write in a read transaction (`accessMode: Read`).
ACCESS_MODE = "Neo.ClientError.Statement.AccessMode"
WRITES = ("w", "rw", "s")  # Neo4j's query types that write (data or schema)


@dataclass
class QueryResult:
    """What a front sends back: the judged verdict, and rows unless it was blocked."""

    verdict: Verdict
    fields: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    truncated: bool = False  # more rows existed than `max_rows`
    error: BackendError | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    query: str = ""  # the text that ran (after guard and repair)

    @property
    def blocked(self) -> bool:
        return self.verdict.blocked


class QueryService:
    """Shared by the HTTP and MCP fronts of one `ProxyServer`."""

    def __init__(
        self,
        guard: Guard,
        backend: Any,
        *,
        repairer: Any = None,
        on_query: OnQuery | None = None,
        sql: Any = None,  # proxy.sql.service.SqlService: `language="sql"` queries
        limits: BoltLimits | None = None,  # `[limits]`: parameters and the guard's budget
        note: Note | None = None,  # a finding for every verdict let through (SCH.NO_SCHEMA)
    ) -> None:
        self.guard = guard
        self.backend = backend
        self.repairer = repairer
        self.on_query = on_query
        self.sql = sql
        self.limits = limits or BoltLimits()
        self.note = note
        self.pool = GuardPool(self.limits.guard_workers)

    def close(self) -> None:
        self.pool.shutdown()

    async def check(
        self,
        text: str,
        language: str = "cypher",
        parameters: Mapping[str, Any] | None = None,
    ) -> Verdict:
        """The guard's verdict: `parameters` within `[limits]` first, then the guard in a
        worker thread (never on the event loop) within its time budget."""
        if language == "sql" and self.sql is not None:
            await self.sql.try_ready()  # the SQL schema reaches the guard before its verdict
        guard = LanguageGuard(self.guard, language, self.note)
        return await judge(guard, text, dict(parameters or {}), self.limits, self.pool)

    async def run(
        self,
        text: str,
        parameters: Mapping[str, Any] | None = None,
        *,
        front: str,
        client: str = "",
        question: str | None = None,
        database: str | None = None,
        max_rows: int = 10_000,
        tx: Any = None,
        language: str = "cypher",
        read_access: bool = False,
    ) -> QueryResult:
        """Guard and run `text` (in `tx`, an open backend transaction, when given); `language`
        "sql" runs on the SQL backend instead (its own repair loop, no transaction). With
        `read_access` (Neo4j's `accessMode: Read`) a statement that writes is refused."""
        params = dict(parameters or {})
        started = time.perf_counter()
        event: dict[str, Any] = {
            "front": front, "client": client, "language": language, "query": text,
            "database": database, "backend_ms": None, "error": None,
        }  # fmt: skip
        try:
            verdict = await self.check(text, language, params)
            if read_access and not verdict.blocked and not verdict.explain:
                verdict = _read_only(verdict)
            event.update(
                action=str(verdict.action), codes=verdict.codes, guard_ms=elapsed_ms(started)
            )
            if verdict.blocked:
                event["final_query"] = None
                if verdict.findings and verdict.findings[-1].rule == "access-mode":
                    message = verdict.findings[-1].message
                    return QueryResult(verdict, error=BackendError(message, ACCESS_MODE))
                return QueryResult(verdict)
            if language == "sql":
                result = await self._execute_sql(verdict, params, max_rows, event, question)
            else:
                result = await self._execute(
                    verdict, params, question, database, max_rows, event, tx
                )
            event["final_query"] = result.query
            if result.error is not None:
                event["error"] = result.error.code
            return result
        finally:
            if self.on_query is not None:
                self.on_query(event)

    async def _execute_sql(
        self,
        verdict: Verdict,
        params: dict[str, Any],
        max_rows: int,
        event: dict[str, Any],
        question: str | None = None,
    ) -> QueryResult:
        started = time.perf_counter()
        try:
            if self.sql is None:
                raise BackendError("no SQL database behind this front")
            outcome = await self.sql.run(verdict, params, max_rows, question)
        except BackendError as exc:
            event["backend_ms"] = elapsed_ms(started)
            return QueryResult(verdict, error=exc, query=verdict.to_run)
        event["backend_ms"] = elapsed_ms(started)
        chosen, verdict = outcome.chosen, outcome.verdict(verdict)
        attempts = [a.to_dict() for a in outcome.attempts] if len(outcome.attempts) > 1 else []
        rows = chosen.rows
        return QueryResult(verdict, chosen.fields, rows[:max_rows], len(rows) > max_rows,
                           chosen.error, attempts, chosen.ran)  # fmt: skip

    async def _execute(
        self,
        verdict: Verdict,
        params: dict[str, Any],
        question: str | None,
        database: str | None,
        max_rows: int,
        event: dict[str, Any],
        tx: Any = None,
    ) -> QueryResult:
        started = time.perf_counter()
        final = verdict.to_run
        if verdict.explain:  # answered by the proxy: no rows, never executed (DESIGN §4.5)
            return QueryResult(verdict, query=final)

        async def execute(text: str, parameters: dict[str, Any]) -> ResultStream:
            if tx is not None:
                return await tx.run(text, parameters)  # type: ignore[no-any-return]
            return await self.backend.run(text, parameters, database)  # type: ignore[no-any-return]

        repairer = self.repairer
        if repairer is not None and repairer.settings.enabled:
            outcome = await repairer.run(
                final,
                execute=execute,
                check=self.guard.check,
                parameters=params,
                question=question,
                # a failed statement ends a transaction on Neo4j: in one, only empty results
                # are repaired (as on the Bolt front)
                retry_errors=tx is None,
            )
            attempts = [a.to_dict() for a in outcome.attempts] if len(outcome.attempts) > 1 else []
            verdict = outcome.verdict(verdict)
            if outcome.error is not None or outcome.stream is None:
                error = outcome.error or BackendError("the repair loop produced no result")
                event["backend_ms"] = elapsed_ms(started)
                return QueryResult(verdict, error=error, attempts=attempts, query=outcome.query)
            stream, ran = outcome.stream, outcome.query
        else:
            attempts, ran = [], final
            try:
                stream = await execute(final, params)
            except BackendError as exc:
                event["backend_ms"] = elapsed_ms(started)
                return QueryResult(verdict, error=exc, query=final)
        try:
            rows = await stream.fetch(max_rows + 1)
            truncated = len(rows) > max_rows or stream.has_more()
            if truncated:
                await stream.discard()
        except BackendError as exc:
            event["backend_ms"] = elapsed_ms(started)
            return QueryResult(verdict, error=exc, attempts=attempts, query=ran)
        event["backend_ms"] = elapsed_ms(started)
        return QueryResult(
            verdict, list(stream.keys), rows[:max_rows], truncated, None, attempts, ran
        )


class LanguageGuard:
    """The guard for one language as `judge` calls it (the Bolt front's too), with `note`
    added to every verdict it lets through; `cached` answers a repeated query without the
    worker thread."""

    def __init__(self, guard: Guard, language: str, note: Note | None) -> None:
        self.guard, self.language, self.note = guard, language, note

    def __call__(self, query: str, parameters: dict[str, Any]) -> Verdict:
        return self._noted(self.guard.check(query, self.language))

    def cached(self, query: str, parameters: dict[str, Any]) -> Verdict | None:
        verdict = self.guard.cached(query, self.language)
        return None if verdict is None else self._noted(verdict)

    def _noted(self, verdict: Verdict) -> Verdict:
        extra = self.note() if self.note is not None else None
        if extra is None or verdict.blocked:
            return verdict
        return dataclasses.replace(verdict, findings=(*verdict.findings, extra))


def _read_only(verdict: Verdict) -> Verdict:
    """`verdict`, refused when its statement writes (the client asked for a read)."""
    if verdict.query_type not in WRITES:
        return verdict
    finding = Finding(
        "SEC.WRITE",
        Severity.ERROR,
        "writing in read access mode is not allowed: the request asked for accessMode Read "
        "and the statement writes. Send a read-only query, or open the transaction with "
        "accessMode Write",
        (0, 0),
        rule="access-mode",
    )
    return dataclasses.replace(verdict, action=Action.BLOCK, findings=(*verdict.findings, finding))
