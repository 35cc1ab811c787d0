"""FalkorDB over its native RESP protocol (`GRAPH.QUERY … --compact`), decoded into the neutral
result model. Used for an upstream FalkorDB and for the embedded default (DESIGN §8: FalkorDB's
own Bolt listener is unreliable, RESP is not).

Transport is `query_guard.wire.resp`: our own connections and pool, hiredis as the reply parser
(`benchmarks/resp_client.py`: redis-py's asyncio client cost ~100 µs more per small reply,
our earlier pure-Python parser 3x more on big ones). We decode the compact reply ourselves
(lazily, one fetched batch at a time) because the `falkordb` package's decoder loses types the
proxy must keep: points become plain maps, local date-times get a UTC zone, durations become
`relativedelta`s, and its label/property-id cache ignores the graph's schema version (a graph
deleted and re-created under the same name would decode to the wrong names).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from query_guard.backend import BackendError, BackendUnavailable, ResultSummary
from query_guard.backends.falkordb_codec import (
    DEFAULT_GRAPH,
    DEFAULT_PORT,
    EXECUTION_FAILED,
    GraphSchemaIds,
    UnknownSchemaId,
    backend_error,
    params_header,
    parse_statistics,
    parse_url,
    plan_tree,
    query_type,
    text,
)
from query_guard.backends.limits import is_timeout, timeout_error, wait_bound
from query_guard.wire.resp import (
    RespConnectionError,
    RespError,
    RespPool,
    RespTimeout,
    bulk,
    command_around,
)

REWIND_LIMIT = 16  # a result read to its end keeps at most this many rows for `rewind`


# ---------------------------------------------------------------------- results


class FalkorDBResult:
    """A whole FalkorDB reply handed out in `fetch(n)` batches.

    RESP has no cursor: FalkorDB computes and sends the complete result at once (its
    `RESULTSET_SIZE` config caps it), so the records are buffered here and only the batching
    is incremental. With `decode`, the buffered rows are the compact reply's and each batch
    is decoded as it is fetched, so a big result never exists twice in memory. Until its rows
    are let go (read to the end past `REWIND_LIMIT`, or discarded) it can `rewind`.
    """

    def __init__(
        self,
        keys: list[str],
        rows: list[list[Any]],
        summary: ResultSummary,
        decode: Callable[[list[list[Any]]], Awaitable[list[list[Any]]]] | None = None,
    ) -> None:
        self.keys = keys
        self._rows = rows
        self._pos = 0
        self._summary = summary
        self._decode = decode
        self._rewindable = True
        # the first rows as decoded (at most REWIND_LIMIT): after the runner's peek and a
        # `rewind`, the client's fetch gets them again without a second decoding
        self._head: list[list[Any]] = []

    async def fetch(self, n: int) -> list[list[Any]]:
        rows = self._rows
        start = self._pos
        if n < 0 and start == 0:
            batch = rows
        else:
            end = len(rows) if n < 0 else min(len(rows), start + n)
            batch = rows[start:end]
        self._pos += len(batch)
        if self._pos >= len(rows) and self._pos > REWIND_LIMIT:
            self._release()  # let the reply go as soon as its last batch is out
        if self._decode is None or not batch:
            return batch
        if start != 0:
            return await self._decode(batch)
        head = self._head
        if len(head) >= len(batch):
            return head[: len(batch)]
        decoded = (
            head + await self._decode(batch[len(head) :]) if head else await self._decode(batch)
        )
        if self._rewindable and len(decoded) <= REWIND_LIMIT:
            self._head = decoded
        return decoded

    def rewind(self) -> bool:
        """Start again from the first record (the runner's peek at a result that plainly
        has rows, `query_guard.run.cypher`); False once the rows were let go."""
        if not self._rewindable:
            return False
        self._pos = 0
        return True

    async def discard(self) -> None:
        self._release()

    def _release(self) -> None:
        self._rows, self._pos, self._rewindable, self._head = [], 0, False, []

    def has_more(self) -> bool:
        return self._pos < len(self._rows)

    def summary(self) -> ResultSummary:
        return self._summary


# ---------------------------------------------------------------------- backend


class FalkorDBBackend:
    """One FalkorDB server; `database` in `run`/`begin` names another graph on it.

    `read_only=True` sends every statement as `GRAPH.RO_QUERY`, so FalkorDB itself refuses
    writes (`Neo.ClientError.Statement.AccessMode`) even if one got past the guard.
    """

    name = "falkordb"
    explain_never_runs = True  # GRAPH.EXPLAIN plans, whatever the statement (compat.explain)

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
        # Queries may legitimately run long (FalkorDB's own TIMEOUT / `query_timeout_ms`
        # bound them); this only catches a server that stopped answering. With a query
        # timeout the proxy stops waiting soon after it (within 2x, at most 5 s later):
        # FalkorDB does not apply its TIMEOUT while parsing (deeply nested text can take
        # minutes there) nor while building a huge list (`range(1, 2000000000)`).
        if query_timeout_ms:
            grace = wait_bound(query_timeout_ms)
            read_timeout = grace if read_timeout is None else min(read_timeout, grace)
        self.read_timeout = read_timeout
        self.server = "FalkorDB"
        self._pool: RespPool | None = None
        self._schemas: dict[str, GraphSchemaIds] = {}
        self._framings: dict[tuple[str, str, int], tuple[bytes, bytes]] = {}

    def _client(self) -> RespPool:
        if self._pool is None:
            # No automatic resend anywhere: a write that died mid-flight may have been applied.
            self._pool = RespPool(
                self.host,
                self.port,
                username=self._user,
                password=self._password,
                max_connections=self.max_connections,
                connect_timeout=self.connect_timeout,
                read_timeout=self.read_timeout,
                wait_timeout=30.0,  # wait this long for a free pooled connection
            )
        return self._pool

    async def start(self) -> None:
        """Connect and learn the server version; raises `BackendUnavailable` if unreachable."""
        try:
            modules = await self._command("MODULE", "LIST")
        except RespError:
            return  # MODULE LIST may be disallowed for this user; not fatal
        for module in modules or []:
            fields = dict(zip(module[::2], module[1::2], strict=True))
            if fields.get("name") == "graph":
                version = int(fields.get("ver", 0))
                self.server = f"FalkorDB/{version // 10000}.{version // 100 % 100}.{version % 100}"

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    async def run(
        self, query: str, parameters: dict[str, Any], database: str | None = None
    ) -> FalkorDBResult:
        return await self.execute(query, parameters, database or self.graph)

    async def begin(
        self, database: str | None = None, metadata: dict[str, Any] | None = None
    ) -> FalkorDBTransaction:
        return FalkorDBTransaction(self, database or self.graph, metadata or {})

    async def explain(
        self, query: str, parameters: dict[str, Any] | None = None, database: str | None = None
    ) -> dict[str, Any] | None:
        """The plan of `query` (`GRAPH.EXPLAIN`: planned, never run; parameters need no
        values, so none are sent) in Neo4j's plan shape."""
        try:
            lines = await self._command("GRAPH.EXPLAIN", database or self.graph, query)
        except RespError as exc:
            raise backend_error(str(exc)) from exc
        return plan_tree([text(line) for line in lines or []])

    async def delete_graph(self, graph: str) -> None:
        """Drop a graph (tests, reloading demo data)."""
        try:
            await self._command("GRAPH.DELETE", graph)
        except RespError as exc:
            if "empty key" not in str(exc) and "not exist" not in str(exc):
                raise backend_error(str(exc)) from exc
        self._schemas.pop(graph, None)

    # ------------------------------------------------------------------ internals

    async def _command(self, *args: Any, encoded: bytes = b"") -> Any:
        """One RESP command (`encoded`: already in RESP form); transport failures become
        `BackendUnavailable`, no reply in time `LIM.TIMEOUT`."""
        try:
            if encoded:
                return await self._client().send(encoded)
            return await self._client().execute(*args)
        except RespTimeout as exc:
            raise timeout_error(self.query_timeout_ms, f"no reply: {exc}") from exc
        except RespConnectionError as exc:
            raise self._unavailable(exc) from exc

    def _error(self, message: str) -> BackendError:
        error = backend_error(message)
        if is_timeout(error.code):
            return timeout_error(self.query_timeout_ms, f"FalkorDB: {message}")
        return error

    def _unavailable(self, exc: Exception) -> BackendUnavailable:
        return BackendUnavailable(f"FalkorDB at {self.host}:{self.port} is unavailable: {exc}")

    async def execute(
        self,
        query: str,
        parameters: dict[str, Any] | None,
        graph: str,
        read_only: bool | None = None,
    ) -> FalkorDBResult:
        """Run one statement on `graph`; its rows are decoded as they are fetched."""
        started = time.monotonic()
        statement = params_header(parameters) + query if parameters else query
        schema = self._schemas.get(graph)
        if schema is None:
            schema = self._schemas[graph] = GraphSchemaIds()
        if read_only is None:
            read_only = self.read_only
        command = "GRAPH.RO_QUERY" if read_only else "GRAPH.QUERY"
        for _attempt in range(3):
            before, after = self._framing(command, graph, schema.version)
            try:
                reply = await self._command(encoded=before + bulk(statement) + after)
            except RespError as exc:
                raise self._error(str(exc)) from exc
            first = reply[0] if reply else None
            if isinstance(first, RespError):
                if str(first) != "version mismatch":
                    raise self._error(str(first))
                # The server refused before executing: refresh the id tables and resend.
                await self._refresh(graph, schema, int(reply[1]))
                continue
            last = reply[-1] if reply else None
            if isinstance(last, RespError):  # runtime error after the header
                raise self._error(str(last))
            return self._result(query, graph, schema, reply, started)
        raise BackendError("FalkorDB schema kept changing during the query", EXECUTION_FAILED)

    def _framing(self, command: str, graph: str, version: int) -> tuple[bytes, bytes]:
        """`command graph <statement> --compact version V [timeout T]` in RESP form around the
        statement, encoded once per graph and schema version (not per query)."""
        key = (command, graph, version)
        framing = self._framings.get(key)
        if framing is None:
            args: tuple[Any, ...] = (command, graph, "", "--compact", "version", version)
            if self.query_timeout_ms:
                args += ("timeout", self.query_timeout_ms)
            framing = command_around(args, 2)
            if len(self._framings) >= 64:
                self._framings.clear()
            self._framings[key] = framing
        return framing

    def _result(
        self, query: str, graph: str, schema: GraphSchemaIds, reply: list[Any], started: float
    ) -> FalkorDBResult:
        elapsed_ms = int((time.monotonic() - started) * 1000)
        if len(reply) > 1:
            keys = [text(column[1]) for column in reply[0]]
            raw_rows = reply[1]
        else:
            keys, raw_rows = [], []
        counters = parse_statistics(reply[-1]) if reply else {}
        summary = ResultSummary(
            query_type=query_type(query, counters, bool(keys)),
            counters=counters,
            database=graph,
            server=self.server,
            t_first_ms=elapsed_ms,
            t_last_ms=elapsed_ms,
        )

        async def decode(batch: list[list[Any]]) -> list[list[Any]]:
            try:
                return schema.decode_rows(batch)
            except UnknownSchemaId:  # the query created labels / types / keys we have not seen
                await self._refresh(graph, schema, schema.version)
                return schema.decode_rows(batch)

        return FalkorDBResult(keys, raw_rows, summary, decode if raw_rows else None)

    async def _refresh(self, graph: str, schema: GraphSchemaIds, version: int) -> None:
        """Re-read the id -> name tables (ids are positions in these procedure results);
        the three procedures go out in one write."""
        procedures = ("db.labels", "db.relationshipTypes", "db.propertyKeys")
        async with schema.lock:
            try:
                replies = await self._client().pipeline(
                    [("GRAPH.QUERY", graph, f"CALL {procedure}()") for procedure in procedures]
                )
            except RespTimeout as exc:
                raise timeout_error(self.query_timeout_ms, f"no reply: {exc}") from exc
            except RespConnectionError as exc:
                raise self._unavailable(exc) from exc
            tables = []
            for reply in replies:
                if isinstance(reply, RespError):
                    raise backend_error(str(reply))
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
