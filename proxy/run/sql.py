"""SQL on the SQL backend, for the runner: the judged query rendered in the backend's dialect,
run read-only, an empty result repaired (`query_guard.sql.repair`, through `SqlService`). Its rows
come back whole (the backend fetches at most `[limits] max_result_rows` + 1 of them)."""

from __future__ import annotations

from typing import Any

from query_guard.backend import BackendError
from query_guard.model import Verdict
from query_guard.run.cuts import ListStream
from query_guard.run.request import Outcome, QueryRequest
from query_guard.run.sql_service import SqlService


class SqlExecution:
    def __init__(self, service: SqlService | None, max_rows: int) -> None:
        self.service = service
        self.max_rows = max_rows  # rows fetched per attempt: one past the cut, to report it

    async def prepare(self) -> None:
        """The SQL schema reaches the guard before its first SQL verdict."""
        if self.service is not None:
            await self.service.try_ready()

    async def execute(
        self, req: QueryRequest, verdict: Verdict, judge: Any, record: dict[str, Any]
    ) -> Outcome:
        if self.service is None:
            error = BackendError("no SQL database behind this front")
            return Outcome(verdict, error=error, ran=verdict.to_run)
        try:
            outcome = await self.service.run(verdict, req.parameters, self.max_rows, req.question)
        except BackendError as exc:
            return Outcome(verdict, error=exc, ran=verdict.to_run)
        chosen = outcome.chosen
        attempts = [a.to_dict() for a in outcome.attempts] if len(outcome.attempts) > 1 else []
        if attempts:
            record["repair"] = attempts
            record["repaired"] = outcome.repaired
        judged = outcome.verdict(verdict)
        if chosen.error is not None:
            return Outcome(judged, error=chosen.error, ran=chosen.ran, attempts=attempts)
        stream = ListStream(list(chosen.fields), chosen.rows)
        return Outcome(judged, stream, ran=chosen.ran, attempts=attempts)
