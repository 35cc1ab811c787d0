"""SQL on the SQL backend, for the runner: the judged query rendered in the backend's dialect,
run read-only, an empty result repaired (the repair loop with
`query_guard.repair.sql.SqlStrategy`). Its rows come back whole (the backend fetches at most
`[limits] max_result_rows` + 1 of them; a repair candidate at most 1,000 + 1)."""

from __future__ import annotations

import asyncio
from typing import Any

from query_guard.backend import BackendError, ResultStream
from query_guard.model import Verdict
from query_guard.repair.loop import SUGGEST_COUNT
from query_guard.repair.model import RepairSettings
from query_guard.repair.repairer import Repairer
from query_guard.repair.sql import SqlStrategy
from query_guard.run.cuts import ListStream
from query_guard.run.request import Outcome, QueryRequest
from query_guard.run.sql_service import SqlService

PROBE_ROWS = 60  # rows a grounding probe reads (it asks for at most 50)


class SqlExecution:
    def __init__(self, service: SqlService | None, max_rows: int) -> None:
        self.service = service
        self.max_rows = max_rows  # rows fetched per attempt: one past the cut, to report it
        self.repairer: Repairer | None = None
        if service is not None:  # `[repair]` of the service, the guard's guard_repair hook
            guard = service.guard
            settings = service.repair if service.repair is not None else RepairSettings()
            self.repairer = Repairer(settings, guard.pm, lambda: guard.ctx)

    async def prepare(self) -> None:
        """The SQL schema reaches the guard before its first SQL verdict."""
        if self.service is not None:
            await self.service.try_ready()

    async def execute(
        self, req: QueryRequest, verdict: Verdict, judge: Any, record: dict[str, Any]
    ) -> Outcome:
        service, repairer = self.service, self.repairer
        try:
            if service is None or repairer is None:
                raise BackendError("no SQL database behind this front")
            if service.backend is None:
                raise BackendError('no SQL database is configured ([backend] sql = "off")')
            await service.ready()
        except BackendError as exc:
            return Outcome(verdict, error=exc, ran=verdict.to_run)
        backend, loop = service.backend, asyncio.get_running_loop()

        async def run(text: str, rows: int, bound: bool = True) -> ListStream:
            rendered = await loop.run_in_executor(None, service.judged_text, text)
            fields, found = await backend.run(rendered, req.parameters if bound else None, rows)
            return ListStream(fields, found)

        async def candidate(text: str) -> ResultStream:
            return await run(text, SUGGEST_COUNT)

        async def probe(text: str) -> list[list[Any]]:  # already in the backend's dialect
            return (await backend.run(text, None, PROBE_ROWS))[1]

        async def check(text: str) -> Verdict:
            return await judge(text, req.parameters)  # type: ignore[no-any-return]

        first: ResultStream | BackendError
        try:
            first = await run(verdict.to_run, self.max_rows)
        except BackendError as exc:
            first = exc
        ctx = service.guard.ctx
        strategy = SqlStrategy(
            dialect=ctx.settings.sql_dialect, backend_dialect=backend.dialect,
            catalog=ctx.sql_schema, execute=candidate, probe=probe, params=req.parameters,
        )  # fmt: skip
        outcome = await repairer.run(
            verdict.to_run, strategy=strategy, check=check, parameters=req.parameters,
            question=req.question, first=first, retry_errors=False,
        )  # fmt: skip
        attempts = [a.to_dict() for a in outcome.attempts] if len(outcome.attempts) > 1 else []
        if attempts:
            record["repair"] = attempts
            record["repaired"] = outcome.repaired
        judged = outcome.verdict(verdict)
        ran = await loop.run_in_executor(None, service.judged_text, outcome.query)
        if outcome.error is not None or outcome.stream is None:
            error = outcome.error or BackendError("the repair loop produced no result")
            return Outcome(judged, error=error, ran=ran, attempts=attempts)
        return Outcome(judged, outcome.stream, ran=ran, attempts=attempts)
