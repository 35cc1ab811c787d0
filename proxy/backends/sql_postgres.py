"""PostgreSQL behind the SQL guard (asyncpg). Every session is opened with
`default_transaction_read_only = on` — a write that got past `sql_read_only` would still be
refused by the server (defence in depth) — and `statement_timeout` (`[limits]
query_timeout_ms`) stops a runaway query (`LIM.TIMEOUT`). Rows are read through a cursor in
batches against `[limits] max_result_bytes` (`LIM.RESULT_SIZE`; one value is still received
whole: PostgreSQL has no per-value bound).

Parameters: a mapping fills `:name` / `%(name)s` placeholders and a sequence fills `?` or
`$n`; the judged text is re-written with sqlglot to asyncpg's `$n` form.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import asyncpg
import sqlglot
from sqlglot import exp

from query_guard.backend import BackendError, BackendUnavailable
from query_guard.backends.limits import result_size_error, row_bytes, timeout_error
from query_guard.schema.sql_catalog import SqlCatalog
from query_guard.sql.backend import Params

SCHEMA_QUERY = """
SELECT c.table_name, c.column_name, c.data_type
FROM information_schema.columns AS c
WHERE c.table_schema = ANY (current_schemas(false))
ORDER BY c.table_name, c.ordinal_position
"""
QUERY_CANCELED = "57014"  # statement_timeout (or a cancel request) stopped the query
FETCH_BATCH = 256  # rows read between two looks at the byte budget
CLOSE_GRACE = 2.0  # seconds close() waits for queries in flight before cutting them off


class PostgresBackend:
    name = "postgresql"
    dialect = "postgres"

    def __init__(
        self,
        url: str,
        *,
        statement_timeout_ms: int = 30_000,
        max_result_bytes: int = 256 * 1024 * 1024,
    ) -> None:
        self.url = url
        self.timeout_ms = statement_timeout_ms  # 0: none
        self.max_result_bytes = max_result_bytes  # 0: none
        self.settings = {
            "default_transaction_read_only": "on",
            "statement_timeout": str(statement_timeout_ms),
            "application_name": "query-guard",
        }
        self._pool: asyncpg.Pool | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    async def start(self) -> None:
        self._closed = False  # started again after close()
        await self._get_pool()

    async def close(self) -> None:
        """Close the connections: queries in flight get `CLOSE_GRACE` seconds, then are cut."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            try:
                await asyncio.wait_for(pool.close(), CLOSE_GRACE)
            except TimeoutError:
                pool.terminate()

    async def _get_pool(self) -> asyncpg.Pool:
        async with self._lock:
            if self._closed:
                raise BackendUnavailable("PostgreSQL: the proxy is shutting down")
            if self._pool is None:
                try:
                    self._pool = await asyncpg.create_pool(
                        self.url, min_size=0, max_size=4, server_settings=self.settings
                    )
                except (OSError, asyncpg.PostgresError) as exc:
                    raise BackendUnavailable(f"PostgreSQL: {exc}") from None
            return self._pool

    async def run(
        self, text: str, params: Params = None, max_rows: int = -1
    ) -> tuple[list[str], list[list[Any]]]:
        sql, args = positional(text, params)
        pool = await self._get_pool()
        try:
            async with pool.acquire() as conn, conn.transaction(readonly=True):
                statement = await conn.prepare(sql)
                fields = [a.name for a in statement.get_attributes()]
                cursor = await statement.cursor(*args)
                return fields, await self._fetch(cursor, max_rows)
        except asyncpg.PostgresError as exc:
            if getattr(exc, "sqlstate", "") == QUERY_CANCELED:
                raise timeout_error(self.timeout_ms, f"PostgreSQL: {exc}") from None
            raise BackendError(
                f"PostgreSQL: {exc}", "Neo.ClientError.Statement.ExecutionFailed"
            ) from None
        except (OSError, asyncpg.InterfaceError) as exc:
            raise BackendUnavailable(f"PostgreSQL: {exc}") from None

    async def _fetch(self, cursor: Any, max_rows: int) -> list[list[Any]]:
        """At most `max_rows` + 1 rows (all when negative), within the byte budget."""
        wanted = max_rows + 1 if max_rows >= 0 else None
        rows: list[list[Any]] = []
        size = 0
        while wanted is None or len(rows) < wanted:
            count = FETCH_BATCH if wanted is None else min(FETCH_BATCH, wanted - len(rows))
            batch = await cursor.fetch(count)
            for record in batch:
                row = [_value(v) for v in record]
                size += row_bytes(row)
                if self.max_result_bytes and size > self.max_result_bytes:
                    raise result_size_error(self.max_result_bytes, f"after {len(rows)} rows")
                rows.append(row)
            if len(batch) < count:
                break
        return rows

    async def schema(self) -> SqlCatalog:
        pool = await self._get_pool()
        async with pool.acquire() as conn:
            rows = await conn.fetch(SCHEMA_QUERY)
        return SqlCatalog.from_rows(((r[0], r[1], r[2]) for r in rows), self.dialect)


def positional(text: str, params: Params) -> tuple[str, list[Any]]:
    """`text` with named and `?` placeholders as `$n`, and the argument list for them."""
    if not params:
        return text, []
    tree = sqlglot.parse_one(text, read="postgres")
    args: list[Any] = []
    if isinstance(params, Mapping):
        numbers: dict[str, int] = {}
        for node in list(tree.find_all(exp.Placeholder)):
            name = "" if node.args.get("jdbc") else node.name
            if not name:
                raise BackendError("a '?' placeholder needs a list of parameters")
            if name not in params:
                raise BackendError(f"no value for parameter {name!r}")
            if name not in numbers:
                args.append(params[name])
                numbers[name] = len(args)
            node.replace(exp.Parameter(this=exp.Literal.number(numbers[name])))
        return tree.sql(dialect="postgres"), args
    marks = [n for n in tree.find_all(exp.Placeholder) if n.args.get("jdbc")]
    for i, node in enumerate(marks, start=1):
        node.replace(exp.Parameter(this=exp.Literal.number(i)))
    return (tree.sql(dialect="postgres") if marks else text), list(params)


def _value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)  # JSON has no decimals
    return value
