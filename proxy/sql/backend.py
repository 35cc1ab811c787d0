"""SQL databases behind the guard: the small interface every SQL backend implements (the
backends are in `query_guard.backends`, built by `query_guard.backends.factory.make_sql_backend`).

A backend receives the text the guard judged, as sqlglot writes it (`SqlQuery.emit`), never
the client's text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from query_guard.schema.sql_catalog import SqlCatalog

Params = Mapping[str, Any] | Sequence[Any] | None


class SqlBackend(Protocol):
    name: str
    dialect: str  # the sqlglot dialect the database reads

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def run(
        self, text: str, params: Params = None, max_rows: int = -1
    ) -> tuple[list[str], list[list[Any]]]:
        """Column names and rows (at most `max_rows` + 1 when max_rows >= 0, so the caller
        sees that more existed); raises `query_guard.backend.BackendError`."""

    async def schema(self) -> SqlCatalog:
        """Tables and columns the queries can name (discovered from the database)."""

