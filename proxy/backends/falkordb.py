"""FalkorDB over its native RESP protocol (`GRAPH.QUERY … --compact`), decoded into the neutral
result model. Used for an upstream FalkorDB and for the embedded default (DESIGN §8: FalkorDB's
own Bolt listener is unreliable, RESP is not).

Transport is redis-py's asyncio client with a blocking connection pool — the same client the
`falkordb` package wraps. We decode the compact reply ourselves because the package's decoder
loses types the proxy must keep: points become plain maps, local date-times get a UTC zone,
durations become `relativedelta`s, and its label/property-id cache ignores the graph's schema
version (a graph deleted and re-created under the same name would decode to the wrong names).
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import unquote, urlsplit

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from proxy.backends.base import BackendError, BackendUnavailable, ResultSummary
from proxy.backends.falkordb_codec import (
    EXECUTION_FAILED,
    GraphSchemaIds,
    UnknownSchemaId,
    backend_error,
    params_header,
    parse_statistics,
    query_type,
    text,
)

DEFAULT_PORT = 6379
DEFAULT_GRAPH = "movies"


# ---------------------------------------------------------------------- results


class FalkorDBResult:
    """A whole FalkorDB reply handed out in `fetch(n)` batches.

    RESP has no cursor: FalkorDB computes and sends the complete result at once (its
    `RESULTSET_SIZE` config caps it), so the records are buffered here and only the batching
    is incremental.
    """

    def __init__(self, keys: list[str], rows: list[list[Any]], summary: ResultSummary) -> None:
        self.keys = keys
        self._rows = rows
        self._pos = 0
        self._summary = summary

    async def fetch(self, n: int) -> list[list[Any]]:
        end = len(self._rows) if n < 0 else min(len(self._rows), self._pos + n)
        batch = self._rows[self._pos : end]
        self._pos = end
        return batch

    async def discard(self) -> None:
        self._pos = len(self._rows)

    def has_more(self) -> bool:
        return self._pos < len(self._rows)

    def summary(self) -> ResultSummary:
        return self._summary


# ---------------------------------------------------------------------- backend


def parse_url(url: str) -> tuple[str, int, str, str | None, str | None]:
    """`falkordb://[user:password@]host[:port][/graph]` -> (host, port, graph, user, password)."""
    parts = urlsplit(url)
    if parts.scheme not in {"falkordb", "falkor", "redis"}:
        raise ValueError(f"not a FalkorDB URL (falkordb://host:port/graph): {url}")
    graph = unquote(parts.path.lstrip("/")) or DEFAULT_GRAPH
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    return parts.hostname or "127.0.0.1", parts.port or DEFAULT_PORT, graph, user, password


class FalkorDBBackend:
    """One FalkorDB server; `database` in `run`/`begin` names another graph on it.

    `read_only=True` sends every statement as `GRAPH.RO_QUERY`, so FalkorDB itself refuses
    writes (`Neo.ClientError.Statement.AccessMode`) even if one got past the guard.
    """

    name = "falkordb"

    def __init__(
        self,
        url: str = f"falkordb://127.0.0.1:{DEFAULT_PORT}/{DEFAULT_GRAPH}",
        *,
        max_connections: int = 16,
        query_timeout_ms: int | None = None,
        connect_timeout: float = 2.0,
        read_timeout: float | None = 300.0,
        read_only: bool = False,
    ) -> None:
        self.url = url
        self.read_only = read_only
        self.host, self.port, self.graph, self._user, self._password = parse_url(url)
        self.max_connections = max_connections
        self.query_timeout_ms = query_timeout_ms
        self.connect_timeout = connect_timeout
        # redis-py gives up reading after 5 s by default; queries may legitimately run longer
        # (FalkorDB's own TIMEOUT / `query_timeout_ms` bound them), so wait much longer.
        self.read_timeout = read_timeout
        self.server = "FalkorDB"
        self._redis: aioredis.Redis | None = None
        self._schemas: dict[str, GraphSchemaIds] = {}

    def _client(self) -> aioredis.Redis:
        if self._redis is None:
            pool = aioredis.BlockingConnectionPool(
                host=self.host,
                port=self.port,
                username=self._user,
                password=self._password,
                max_connections=self.max_connections,
                timeout=30,  # wait this long for a free pooled connection
                socket_connect_timeout=self.connect_timeout,
                socket_timeout=self.read_timeout,
                # No automatic resend: a write that died mid-flight may have been applied.
                retry=Retry(NoBackoff(), 0),
            )
            self._redis = aioredis.Redis.from_pool(pool)
        return self._redis

    async def start(self) -> None:
        """Connect and learn the server version; raises `BackendUnavailable` if unreachable."""
        try:
            modules = await self._command("MODULE", "LIST")
        except ResponseError:
            return  # MODULE LIST may be disallowed for this user; not fatal
        for module in modules or []:
            # redis-py parses the RESP2 reply into dicts; older versions leave flat lists.
            if isinstance(module, dict):
                fields = module
            else:
                fields = dict(zip(module[::2], module[1::2], strict=True))
            if text(fields.get(b"name", b"")) == "graph":
                version = int(fields.get(b"ver", 0))
                self.server = f"FalkorDB/{version // 10000}.{version // 100 % 100}.{version % 100}"

    async def close(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def run(
        self, query: str, parameters: dict[str, Any], database: str | None = None
    ) -> FalkorDBResult:
        return await self.execute(query, parameters, database or self.graph)

    async def begin(
        self, database: str | None = None, metadata: dict[str, Any] | None = None
    ) -> FalkorDBTransaction:
        return FalkorDBTransaction(self, database or self.graph, metadata or {})

    async def list_graphs(self) -> list[str]:
        return sorted(text(name) for name in await self._command("GRAPH.LIST"))

    async def delete_graph(self, graph: str) -> None:
        """Drop a graph (tests, reloading demo data)."""
        try:
            await self._command("GRAPH.DELETE", graph)
        except ResponseError as exc:
            if "empty key" not in str(exc) and "not exist" not in str(exc):
                raise backend_error(str(exc)) from exc
        self._schemas.pop(graph, None)

    # ------------------------------------------------------------------ internals

    async def _command(self, *args: Any) -> Any:
        """One RESP command; transport failures become `BackendUnavailable`."""
        try:
            return await self._client().execute_command(*args)
        except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
            raise BackendUnavailable(
                f"FalkorDB at {self.host}:{self.port} is unavailable: {exc}"
            ) from exc

    async def execute(
        self,
        query: str,
        parameters: dict[str, Any] | None,
        graph: str,
        read_only: bool | None = None,
    ) -> FalkorDBResult:
        """Run one statement on `graph` and decode the whole reply."""
        started = time.monotonic()
        statement = params_header(parameters) + query
        schema = self._schemas.setdefault(graph, GraphSchemaIds())
        read_only = self.read_only if read_only is None else read_only
        command = "GRAPH.RO_QUERY" if read_only else "GRAPH.QUERY"
        for _attempt in range(3):
            args: list[Any] = [command, graph, statement, "--compact", "version", schema.version]
            if self.query_timeout_ms:
                args += ["timeout", self.query_timeout_ms]
            try:
                reply = await self._command(*args)
            except ResponseError as exc:
                raise backend_error(str(exc)) from exc
            if reply and isinstance(reply[0], ResponseError):
                if str(reply[0]) != "version mismatch":
                    raise backend_error(str(reply[0]))
                # The server refused before executing: refresh the id tables and resend.
                await self._refresh(graph, schema, int(reply[1]))
                continue
            if reply and isinstance(reply[-1], ResponseError):  # runtime error after header
                raise backend_error(str(reply[-1]))
            return await self._result(query, graph, schema, reply, started)
        raise BackendError("FalkorDB schema kept changing during the query", EXECUTION_FAILED)

    async def _result(
        self, query: str, graph: str, schema: GraphSchemaIds, reply: list[Any], started: float
    ) -> FalkorDBResult:
        first_ms = int((time.monotonic() - started) * 1000)
        keys = [text(column[1]) for column in reply[0]] if len(reply) > 1 else []
        raw_rows = reply[1] if len(reply) > 1 else []
        try:
            rows = [[schema.decode(cell) for cell in row] for row in raw_rows]
        except UnknownSchemaId:  # the query created labels / types / keys we have not seen
            await self._refresh(graph, schema, schema.version)
            rows = [[schema.decode(cell) for cell in row] for row in raw_rows]
        counters = parse_statistics(reply[-1])
        summary = ResultSummary(
            query_type=query_type(query, counters, bool(keys)),
            counters=counters,
            database=graph,
            server=self.server,
            t_first_ms=first_ms,
            t_last_ms=int((time.monotonic() - started) * 1000),
        )
        return FalkorDBResult(keys, rows, summary)

    async def _refresh(self, graph: str, schema: GraphSchemaIds, version: int) -> None:
        """Re-read the id -> name tables (ids are positions in these procedure results)."""
        async with schema.lock:
            tables = []
            for procedure in ("db.labels", "db.relationshipTypes", "db.propertyKeys"):
                try:
                    reply = await self._command("GRAPH.QUERY", graph, f"CALL {procedure}()")
                except ResponseError as exc:
                    raise backend_error(str(exc)) from exc
                tables.append([text(row[0]) for row in reply[1]])
            schema.labels, schema.types, schema.keys = tables
            schema.version = version


class FalkorDBTransaction:
    """FalkorDB has no multi-statement transactions; this is the honest stand-in.

    Each `run` executes at once and atomically, so reads see earlier writes and a write's
    RETURN rows arrive when the client expects them. Nothing is held back: buffering writes
    until commit would hide their results and still not make a multi-statement commit
    atomic. `commit()` therefore has nothing left to do (and returns no bookmark).
    `rollback()` is fine while nothing changed — a read-only transaction, or writes that
    matched nothing — but once a statement changed data it raises a `BackendError` saying
    the changes stay: pretending to roll back would be worse than failing loudly.
    """

    def __init__(self, backend: FalkorDBBackend, graph: str, metadata: dict[str, Any]) -> None:
        self.backend = backend
        self.graph = graph
        self.metadata = metadata
        self.applied_changes = 0  # statements whose counters show a change
        self._open = True

    async def run(self, query: str, parameters: dict[str, Any]) -> FalkorDBResult:
        if not self._open:
            raise BackendError(
                "the transaction is already closed",
                "Neo.ClientError.Transaction.TransactionNotFound",
            )
        result = await self.backend.execute(query, parameters, self.graph)
        if any(result.summary().counters.values()):
            self.applied_changes += 1
        return result

    async def commit(self) -> str | None:
        self._open = False
        return None

    async def rollback(self) -> None:
        self._open = False
        if self.applied_changes:
            raise BackendError(
                f"FalkorDB has no multi-statement transactions: {self.applied_changes} "
                "statement(s) of this transaction already changed the graph and cannot be "
                "rolled back",
                "Neo.DatabaseError.Transaction.TransactionRollbackFailed",
            )
