"""SQL for the whole-query fronts (HTTP `/v1/query` with `language: "sql"`, MCP `read_sql`):
the SQL backend started on first use, its schema handed to the guard (`GuardContext.sql_schema`)
before the first SQL verdict, and the judged query rendered for the database; the runner
(`query_guard.run.sql`) runs it and repairs an empty result under `repair` (`[repair]`).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from typing import Any

from query_guard.backend import BackendError
from query_guard.guard.pipeline import Guard
from query_guard.sql.backend import SqlBackend
from query_guard.sql.query import SqlQuery


class SqlService:
    def __init__(self, guard: Guard, backend: SqlBackend | None, repair: Any = None) -> None:
        self.guard = guard
        self.backend = backend
        if backend is not None:  # calls run there: its dialect's function allow-list applies
            guard.ctx = replace(guard.ctx, sql_backend_dialect=backend.dialect)
        # `[repair]` (`query_guard.repair.model.RepairSettings`; None: the defaults)
        self.repair = repair
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

    def judged_text(self, text: str) -> str:
        """What the database receives for a verdict's `to_run`: the judged query as sqlglot
        writes it in the backend's dialect (comments and quoting tricks of the client's text
        do not survive)."""
        assert self.backend is not None
        query = SqlQuery.parse(text, self.guard.ctx.settings.sql_dialect)
        return query.emit(self.backend.dialect)

    async def close(self) -> None:
        if self.backend is not None and self._ready:
            await self.backend.close()
