"""SQLite behind the SQL guard: the stdlib `sqlite3` in a worker thread, every connection opened
read-only (`mode=ro` URI, `PRAGMA query_only`) — defence in depth under `sql_read_only`.

The embedded default is Northwind (proxy/data/northwind, see PROVENANCE.md there), written to
`<data_dir>/northwind.sqlite` on first start: one table per CSV (`order_details`,
`employee_territories`, … with the CSVs' column names), each column typed INTEGER, REAL or
TEXT by its values, `NULL` read as SQL NULL.
"""

from __future__ import annotations

import asyncio
import csv
import gzip
import io
import os
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from proxy.backends.base import BackendError, BackendUnavailable
from proxy.sql.backend import Params
from proxy.sql.catalog import SqlCatalog

_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)\.[0-9]+")  # "01581" stays text
NORTHWIND = Path(__file__).resolve().parent.parent / "data" / "northwind"


def northwind_path(data_dir: Path) -> Path:
    return data_dir / "northwind.sqlite"


class SqliteBackend:
    name = "sqlite"
    dialect = "sqlite"

    def __init__(
        self, path: Path, *, northwind: bool = False, trace: Callable[[str], None] | None = None
    ) -> None:
        self.path = path
        self.northwind = northwind
        self.trace = trace  # SQLite's statement trace: every statement it runs, as run

    async def start(self) -> None:
        if self.northwind and not self.path.exists():
            await asyncio.to_thread(build_northwind, self.path)
        if not self.path.exists():
            raise BackendUnavailable(f"SQLite database {self.path} does not exist")

    async def close(self) -> None:
        return None

    async def run(
        self, text: str, params: Params = None, max_rows: int = -1
    ) -> tuple[list[str], list[list[Any]]]:
        return await asyncio.to_thread(self._run, text, params, max_rows)

    async def schema(self) -> SqlCatalog:
        return await asyncio.to_thread(self._schema)

    def _connect(self) -> sqlite3.Connection:
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        except sqlite3.Error as exc:
            raise BackendUnavailable(f"SQLite {self.path}: {exc}") from None
        conn.execute("PRAGMA query_only = ON")
        if self.trace is not None:
            conn.set_trace_callback(self.trace)
        return conn

    def _run(self, text: str, params: Params, max_rows: int) -> tuple[list[str], list[list[Any]]]:
        conn = self._connect()
        try:
            cursor = conn.execute(text, params if params is not None else ())
            fields = [d[0] for d in cursor.description or ()]
            rows = cursor.fetchall() if max_rows < 0 else cursor.fetchmany(max_rows + 1)
            return fields, [list(r) for r in rows]
        except sqlite3.Error as exc:
            code = "Neo.ClientError.Statement.ExecutionFailed"
            raise BackendError(f"SQLite: {exc}", code) from None
        finally:
            conn.close()

    def _schema(self) -> SqlCatalog:
        conn = self._connect()
        try:
            tables = conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            ).fetchall()
            rows = []
            for (table,) in tables:
                for info in conn.execute("SELECT name, type FROM pragma_table_info(?)", (table,)):
                    rows.append((table, info[0], info[1]))
            return SqlCatalog.from_rows(rows, self.dialect)
        finally:
            conn.close()


def build_northwind(path: Path, source: Path = NORTHWIND) -> None:
    """Write the Northwind database to `path` (atomically: a temporary file renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp)
    try:
        for csv_file in sorted(source.glob("*.csv.gz")):
            table = csv_file.name.removesuffix(".csv.gz")
            text = gzip.decompress(csv_file.read_bytes()).decode("utf-8")
            header, *records = list(csv.reader(io.StringIO(text)))
            values = [[None if v == "NULL" else v for v in r] for r in records]
            types = [_column_type([r[i] for r in values]) for i in range(len(header))]
            columns = ", ".join(f'"{h}" {t}' for h, t in zip(header, types, strict=True))
            conn.execute(f'CREATE TABLE "{table}" ({columns})')
            marks = ", ".join("?" * len(header))
            conn.executemany(f'INSERT INTO "{table}" VALUES ({marks})', values)
        conn.commit()
    finally:
        conn.close()
    os.replace(tmp, path)


def _column_type(values: list[str | None]) -> str:
    present = [v for v in values if v is not None and v != ""]
    if present and all(_is_int(v) for v in present):
        return "INTEGER"
    if present and all(_is_real(v) for v in present):
        return "REAL"
    return "TEXT"


def _is_int(value: str) -> bool:
    digits = value.removeprefix("-")
    return digits.isdigit() and (digits == "0" or not digits.startswith("0"))


def _is_real(value: str) -> bool:
    return _is_int(value) or _DECIMAL.fullmatch(value) is not None
