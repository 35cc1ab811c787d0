"""SQL databases behind the guard: the small interface every SQL backend implements, and the
factory for the `[backend] sql` setting.

    ""                      embedded SQLite with Northwind, built on first start in data_dir
    "off"                   no SQL backend (SQL can still be checked, not run)
    "sqlite:///abs/path.db" an existing SQLite file, opened read-only
    "postgresql://…"        PostgreSQL (asyncpg), every transaction read-only

A backend receives the text the guard judged, as sqlglot writes it (`SqlQuery.emit`), never
the client's text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from proxy.errors import ConfigError
from proxy.sql.catalog import SqlCatalog

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
        sees that more existed); raises `proxy.backends.base.BackendError`."""

    async def schema(self) -> SqlCatalog:
        """Tables and columns the queries can name (discovered from the database)."""


def make_sql_backend(url: str, data_dir: str | Path) -> SqlBackend | None:
    url = url.strip()
    if url == "off":
        return None
    if url == "":
        from proxy.backends.sql_sqlite import SqliteBackend, northwind_path

        return SqliteBackend(northwind_path(Path(data_dir)), northwind=True)
    if url.startswith("sqlite:"):
        from proxy.backends.sql_sqlite import SqliteBackend

        path = url.removeprefix("sqlite:").removeprefix("//")
        return SqliteBackend(Path(path))
    if url.startswith(("postgresql://", "postgres://")):
        from proxy.backends.sql_postgres import PostgresBackend

        return PostgresBackend(url)
    raise ConfigError("backend.sql", "use '', 'off', 'sqlite:///path' or 'postgresql://…'")
