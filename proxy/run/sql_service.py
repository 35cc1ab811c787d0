"""SQL for the whole-query fronts (HTTP `/v1/query` with `language: "sql"`, MCP `read_sql`):
the SQL backend started on first use, its schema handed to the guard (`GuardContext.sql_schema`)
before the first SQL verdict, the judged query rendered for the database, and the repair loop
(`query_guard.sql.repair`) on an empty result.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from typing import Any

from query_guard.backend import BackendError
from query_guard.guard.pipeline import Guard
from query_guard.model import Verdict
from query_guard.repair.model import RepairSettings
from query_guard.sql.backend import Params, SqlBackend
from query_guard.sql.query import SqlQuery
from query_guard.sql.repair import SqlOutcome, SqlRepairLoop


class SqlService:
    def __init__(
        self, guard: Guard, backend: SqlBackend | None, repair: RepairSettings | None = None
    ) -> None:
        self.guard = guard
        self.backend = backend
        if backend is not None:  # calls run there: its dialect's function allow-list applies
            guard.ctx = replace(guard.ctx, sql_backend_dialect=backend.dialect)
        self.repair = repair if repair is not None else RepairSettings()  # `[repair]`
        self._ready = False
        self._lock = asyncio.Lock()

    async def ready(self) -> None:
        """Start the backend and load its schema into the guard (once; raises BackendError)."""
        if self._ready or self.backend is None:
            return
        async with self._lock:
            if self._ready:
                return
            await self.backend.start()
            catalog = await self.backend.schema()
            guard = self.guard
            guard.ctx = replace(guard.ctx, sql_schema=catalog)
            guard.use_schema(guard.ctx.schema)  # drops verdicts cached without the SQL schema
            self._ready = True

    async def try_ready(self) -> None:
        """`ready`, for checks: without a reachable database SQL is still judged (no schema)."""
        with contextlib.suppress(BackendError):
            await self.ready()

    def judged_text(self, verdict: Verdict) -> str:
        """What the database receives: the judged query as sqlglot writes it in the backend's
        dialect (comments and quoting tricks of the client's text do not survive)."""
        assert self.backend is not None
        query = SqlQuery.parse(verdict.to_run, self.guard.ctx.settings.sql_dialect)
        return query.emit(self.backend.dialect)

    async def run(
        self, verdict: Verdict, params: Params, max_rows: int, question: str | None = None
    ) -> SqlOutcome:
        """Execute the judged query and, on an empty result, the repair loop (`[repair]`):
        every candidate judged by the guard again and run read-only here. Raises
        BackendError only when no database is configured or reachable."""
        if self.backend is None:
            raise BackendError("no SQL database is configured ([backend] sql = \"off\")")
        await self.ready()
        loop = asyncio.get_running_loop()
        backend = self.backend

        async def check(text: str) -> Verdict:
            return await loop.run_in_executor(None, self.guard.check, text, "sql")

        async def render(judged: Verdict) -> str:
            return await loop.run_in_executor(None, self.judged_text, judged)

        async def run(text: str, rows: int, bound: bool) -> tuple[list[str], list[list[Any]]]:
            return await backend.run(text, params if bound else None, rows)

        repair = SqlRepairLoop(
            self.repair, dialect=self.guard.ctx.settings.sql_dialect,
            backend_dialect=backend.dialect, catalog=self.guard.ctx.sql_schema,
            check=check, render=render, run=run, question=question, params=params,
        )  # fmt: skip
        return await repair.run(verdict.to_run, await render(verdict), max_rows)

    async def close(self) -> None:
        if self.backend is not None and self._ready:
            await self.backend.close()
