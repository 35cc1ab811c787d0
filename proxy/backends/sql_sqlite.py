"""SQLite behind the SQL guard: the stdlib `sqlite3` in the backend's own bounded thread pool
(never the event loop's default pool, which checks passwords), every connection opened
read-only (`mode=ro` URI, `PRAGMA query_only`) — defence in depth under `sql_read_only`.

Each query is bounded: SQLite's progress handler stops it once `[limits] query_timeout_ms` has
passed since it was sent (`LIM.TIMEOUT`; a query still waiting for a thread then fails at
once), or when the backend closes (`serve` stopping), so no thread stays busy; a string or
blob longer than `[limits] max_result_bytes` fails inside SQLite (`SQLITE_LIMIT_LENGTH`), and
rows are read in batches against the same byte budget (`LIM.RESULT_SIZE`).

The embedded default is Northwind (proxy/data/northwind, see PROVENANCE.md there), written to
`<data_dir>/northwind.sqlite` on first start: one table per CSV (`order_details`,
`employee_territories`, … with the CSVs' column names), each column typed INTEGER, REAL or
TEXT by its values, `NULL` read as SQL NULL.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import csv
import gzip
import io
import math
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from query_guard.backend import BackendError, BackendUnavailable
from query_guard.backends.limits import result_size_error, row_bytes, timeout_error
from query_guard.schema.sql_catalog import SqlCatalog
from query_guard.sql.backend import Params

_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)\.[0-9]+")  # "01581" stays text
NORTHWIND = Path(__file__).resolve().parent.parent / "data" / "northwind"
WORKERS = 8  # queries SQLite runs at once; more wait for a thread (within their timeout)
PROGRESS_OPS = 10_000  # SQLite virtual-machine steps between two looks at the clock
FETCH_BATCH = 256  # rows read between two looks at the byte budget
FAILED = "Neo.ClientError.Statement.ExecutionFailed"


def northwind_path(data_dir: Path) -> Path:
    return data_dir / "northwind.sqlite"


class SqliteBackend:
    name = "sqlite"
    dialect = "sqlite"

    def __init__(
        self,
        path: Path,
        *,
        northwind: bool = False,
        trace: Callable[[str], None] | None = None,
        timeout_ms: int = 30_000,
        max_result_bytes: int = 256 * 1024 * 1024,
    ) -> None:
        self.path = path
        self.northwind = northwind
        self.trace = trace  # SQLite's statement trace: every statement it runs, as run
        self.timeout_ms = timeout_ms  # [limits] query_timeout_ms (0: none)
        self.max_result_bytes = max_result_bytes  # [limits] max_result_bytes (0: none)
        self._open()

    def _open(self) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(WORKERS, "sqlite")
        self._closing = threading.Event()  # set: every running query stops at its next step

    async def start(self) -> None:
        if self._closing.is_set():  # started again after close()
            self._open()
        if self.northwind and not self.path.exists():
            await self._in_pool(build_northwind, self.path)
        if not self.path.exists():
            raise BackendUnavailable(f"SQLite database {self.path} does not exist")

    async def close(self) -> None:
        """Stop every running query (at its next progress step) and the threads with it."""
        self._closing.set()
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def run(
        self, text: str, params: Params = None, max_rows: int = -1
    ) -> tuple[list[str], list[list[Any]]]:
        timeout = self.timeout_ms / 1000 if self.timeout_ms else math.inf
        deadline = time.monotonic() + timeout  # from now: time waiting for a thread counts
        return await self._in_pool(self._run, text, params, max_rows, deadline)

    async def schema(self) -> SqlCatalog:
        return await self._in_pool(self._schema)

    async def _in_pool(self, call: Callable[..., Any], *args: Any) -> Any:
        if self._closing.is_set():
            raise BackendUnavailable("SQLite: the proxy is shutting down")
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, call, *args)
        except (RuntimeError, concurrent.futures.CancelledError):  # shut down meanwhile
            if not self._closing.is_set():
                raise
            raise BackendUnavailable("SQLite: the proxy is shutting down") from None

    def _connect(self) -> sqlite3.Connection:
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        except sqlite3.Error as exc:
            raise BackendUnavailable(f"SQLite {self.path}: {exc}") from None
        conn.execute("PRAGMA query_only = ON")
        if self.max_result_bytes:  # no string or blob longer than the whole result may be
            conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self.max_result_bytes)
        if self.trace is not None:
            conn.set_trace_callback(self.trace)
        return conn

    def _run(
        self, text: str, params: Params, max_rows: int, deadline: float
    ) -> tuple[list[str], list[list[Any]]]:
        if time.monotonic() > deadline:  # waited for a thread past the timeout
            raise timeout_error(self.timeout_ms, "SQLite: still waiting for a free thread")
        conn = self._connect()
        stopped = self._closing.is_set

        def stop() -> bool:
            return stopped() or time.monotonic() > deadline

        conn.set_progress_handler(stop, PROGRESS_OPS)
        try:
            cursor = conn.execute(text, params if params is not None else ())
            fields = [d[0] for d in cursor.description or ()]
            return fields, self._fetch(cursor, max_rows)
        except sqlite3.Error as exc:
            raise self._error(exc, deadline) from None
        finally:
            conn.close()

    def _fetch(self, cursor: sqlite3.Cursor, max_rows: int) -> list[list[Any]]:
        """At most `max_rows` + 1 rows (all when negative), within the byte budget."""
        wanted = max_rows + 1 if max_rows >= 0 else math.inf
        rows: list[list[Any]] = []
        size = 0
        while len(rows) < wanted:
            batch = cursor.fetchmany(int(min(FETCH_BATCH, wanted - len(rows))))
            if not batch:
                break
            for row in batch:
                size += row_bytes(row)
                if self.max_result_bytes and size > self.max_result_bytes:
                    raise result_size_error(self.max_result_bytes, f"after {len(rows)} rows")
                rows.append(list(row))
        return rows

    def _error(self, exc: sqlite3.Error, deadline: float) -> BackendError:
        name = getattr(exc, "sqlite_errorname", "")
        if name == "SQLITE_INTERRUPT" and self._closing.is_set():
            return BackendUnavailable("SQLite: the proxy is shutting down")
        if name == "SQLITE_INTERRUPT" and time.monotonic() > deadline:
            return timeout_error(self.timeout_ms, "SQLite")
        if name == "SQLITE_TOOBIG" and self.max_result_bytes:
            return result_size_error(self.max_result_bytes, f"SQLite: {exc}")
        return BackendError(f"SQLite: {exc}", FAILED)

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
