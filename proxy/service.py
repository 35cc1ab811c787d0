"""One guarded query, start to end, for the fronts that answer a whole result at once (HTTP,
MCP): guard (off the event loop), block or execute what was judged, the repair loop when it is
on, the rows (bounded), and one audit line — the same steps the Bolt front takes per RUN.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from proxy.backends.base import BackendError, ResultStream
from proxy.model import Verdict
from proxy.pipeline import Guard

OnQuery = Callable[[Mapping[str, Any]], None]


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
    ) -> None:
        self.guard = guard
        self.backend = backend
        self.repairer = repairer
        self.on_query = on_query
        self.sql = sql

    async def check(self, text: str, language: str = "cypher") -> Verdict:
        """The guard's verdict, computed in a worker thread (never on the event loop)."""
        if language == "sql" and self.sql is not None:
            await self.sql.try_ready()  # the SQL schema reaches the guard before its verdict
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.guard.check, text, language)

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
    ) -> QueryResult:
        """Guard and run `text` (in `tx`, an open backend transaction, when given); `language`
        "sql" runs on the SQL backend instead (its own repair loop, no transaction)."""
        params = dict(parameters or {})
        started = time.perf_counter()
        event: dict[str, Any] = {
            "front": front, "client": client, "language": language, "query": text,
            "database": database, "backend_ms": None, "error": None,
        }  # fmt: skip
        try:
            verdict = await self.check(text, language)
            event.update(action=str(verdict.action), codes=verdict.codes, guard_ms=_ms(started))
            if verdict.blocked:
                event["final_query"] = None
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
            event["backend_ms"] = _ms(started)
            return QueryResult(verdict, error=exc, query=verdict.to_run)
        event["backend_ms"] = _ms(started)
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
                event["backend_ms"] = _ms(started)
                return QueryResult(verdict, error=error, attempts=attempts, query=outcome.query)
            stream, ran = outcome.stream, outcome.query
        else:
            attempts, ran = [], final
            try:
                stream = await execute(final, params)
            except BackendError as exc:
                event["backend_ms"] = _ms(started)
                return QueryResult(verdict, error=exc, query=final)
        try:
            rows = await stream.fetch(max_rows + 1)
            truncated = len(rows) > max_rows or stream.has_more()
            if truncated:
                await stream.discard()
        except BackendError as exc:
            event["backend_ms"] = _ms(started)
            return QueryResult(verdict, error=exc, attempts=attempts, query=ran)
        event["backend_ms"] = _ms(started)
        return QueryResult(
            verdict, list(stream.keys), rows[:max_rows], truncated, None, attempts, ran
        )


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
