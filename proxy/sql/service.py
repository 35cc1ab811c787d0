"""SQL for the whole-query fronts (HTTP `/v1/query` with `language: "sql"`, MCP `read_sql`):
the SQL backend started on first use, its schema handed to the guard (`GuardContext.sql_schema`)
before the first SQL verdict, and the judged query rendered for the database.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from typing import Any

from proxy.backends.base import BackendError
from proxy.model import Verdict
from proxy.pipeline import Guard
from proxy.sql.backend import Params, SqlBackend
from proxy.sql.query import SqlQuery


class SqlService:
    def __init__(self, guard: Guard, backend: SqlBackend | None) -> None:
        self.guard = guard
        self.backend = backend
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

    async def execute(
        self, verdict: Verdict, params: Params, max_rows: int
    ) -> tuple[str, list[str], list[list[Any]]]:
        if self.backend is None:
            raise BackendError("no SQL database is configured ([backend] sql = \"off\")")
        await self.ready()
        loop = asyncio.get_running_loop()
        text = await loop.run_in_executor(None, self.judged_text, verdict)
        fields, rows = await self.backend.run(text, params, max_rows)
        return text, fields, rows

    async def close(self) -> None:
        if self.backend is not None and self._ready:
            await self.backend.close()
