"""An upstream Neo4j (or any Bolt server) through the official async driver, mapped into the
neutral result model. Records are pulled from the server in `fetch(n)` batches through the
driver's own result cursor, so big results stream with bounded memory.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

import neo4j
from neo4j import exceptions as neo4j_errors
from neo4j import graph as neo4j_graph
from neo4j import spatial as neo4j_spatial
from neo4j import time as neo4j_time

from proxy.backends.base import (
    BackendError,
    BackendUnavailable,
    Duration,
    GraphNode,
    GraphPath,
    GraphRelationship,
    Point,
    ResultSummary,
)

_UNAVAILABLE = (
    neo4j_errors.ServiceUnavailable,
    neo4j_errors.SessionExpired,
    neo4j_errors.DatabaseUnavailable,
    # driver 6 only (5.x reports a pool timeout as a ClientError)
    getattr(neo4j_errors, "ConnectionAcquisitionTimeoutError", neo4j_errors.ServiceUnavailable),
    OSError,
)
_COUNTER_FIELDS = (
    "nodes_created", "nodes_deleted", "relationships_created", "relationships_deleted",
    "properties_set", "labels_added", "labels_removed", "indexes_added", "indexes_removed",
    "constraints_added", "constraints_removed", "system_updates",
)  # fmt: skip
_SRID_POINTS: dict[int, type[neo4j_spatial.Point]] = {
    4326: neo4j_spatial.WGS84Point,
    4979: neo4j_spatial.WGS84Point,
    7203: neo4j_spatial.CartesianPoint,
    9157: neo4j_spatial.CartesianPoint,
}


def map_error(exc: BaseException) -> BackendError:
    """A driver exception as a `BackendError` carrying the server's status code."""
    if isinstance(exc, _UNAVAILABLE):
        return BackendUnavailable(f"Bolt upstream is unavailable: {exc}")
    if isinstance(exc, neo4j_errors.Neo4jError):
        return BackendError(
            exc.message or str(exc), exc.code or "Neo.DatabaseError.General.UnknownError"
        )
    return BackendError(str(exc) or type(exc).__name__)


# The credentials the current client connection logged on with (`credentials =
# "passthrough"`). The proxy's authenticate hook sets them inside the connection's task, and
# every backend call made for that connection runs in the same task, so it sees its own client's
# credentials and no other's.
CLIENT_AUTH: ContextVar[neo4j.Auth | None] = ContextVar("query_guard_client_auth", default=None)


def remember_client_auth(auth: Mapping[str, Any]) -> bool:
    """A Bolt frontend `authenticate` hook for pass-through: keep the HELLO / LOGON auth
    token for this connection's upstream sessions. Always accepts: the upstream judges the
    credentials when the first query runs (a wrong password fails that query with
    Neo.ClientError.Security.Unauthorized)."""
    CLIENT_AUTH.set(client_auth_token(auth))
    return True


def client_auth_token(auth: Mapping[str, Any]) -> neo4j.Auth | None:
    """A Bolt auth map (`scheme`, `principal`, `credentials`, `realm`, …) as a driver token;
    None for scheme "none" or a missing scheme."""
    scheme = auth.get("scheme")
    if not isinstance(scheme, str) or scheme == "none":
        return None
    extra = {
        k: v for k, v in auth.items() if k not in ("scheme", "principal", "credentials", "realm")
    }
    return neo4j.Auth(
        scheme, auth.get("principal"), auth.get("credentials"), auth.get("realm"), **extra
    )


# ---------------------------------------------------------------------- values


def _int_id(entity: neo4j_graph.Entity) -> int:
    """Neo4j 5 element ids end in the legacy integer id (`4:<db>:123`); `.id` is deprecated.

    Other servers' element ids need not (ArcadeDB's `#4:0` and `#1:0` share a tail), so only
    the three-part Neo4j shape is parsed; the server's own integer id is used otherwise."""
    parts = entity.element_id.split(":")
    if len(parts) == 3 and parts[0].isdigit() and parts[2].lstrip("-").isdigit():
        return int(parts[2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return int(entity.id)


def _node(node: neo4j_graph.Node) -> GraphNode:
    props = {k: to_neutral(v) for k, v in node.items()}
    return GraphNode(_int_id(node), tuple(sorted(node.labels)), props, node.element_id)


def _relationship(rel: neo4j_graph.Relationship) -> GraphRelationship:
    start, end = rel.start_node, rel.end_node
    assert start is not None and end is not None  # the driver always hydrates both ends
    return GraphRelationship(
        _int_id(rel),
        rel.type,
        _int_id(start),
        _int_id(end),
        {k: to_neutral(v) for k, v in rel.items()},
        rel.element_id,
        start.element_id,
        end.element_id,
    )


def to_neutral(value: Any) -> Any:
    """A driver value (graph, spatial, temporal, containers) as a neutral-model value.

    Temporal values become Python's own types; Neo4j's nanoseconds are cut to microseconds
    there, except in durations, which keep them.
    """
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [to_neutral(v) for v in value]
    if isinstance(value, dict):
        return {k: to_neutral(v) for k, v in value.items()}
    if isinstance(value, neo4j_graph.Node):
        return _node(value)
    if isinstance(value, neo4j_graph.Relationship):
        return _relationship(value)
    if isinstance(value, neo4j_graph.Path):
        return GraphPath(
            tuple(_node(n) for n in value.nodes),
            tuple(_relationship(r) for r in value.relationships),
        )
    if isinstance(value, neo4j_spatial.Point):
        return Point(int(value.srid or 0), value[0], value[1], value[2] if len(value) > 2 else None)
    if isinstance(value, neo4j_time.Duration):
        return Duration(value.months, value.days, value.seconds, value.nanoseconds)
    if isinstance(value, neo4j_time.DateTime | neo4j_time.Date | neo4j_time.Time):
        return value.to_native()
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, tuple):  # after Point and Duration, which are tuples too
        return [to_neutral(v) for v in value]
    return value


def to_driver(value: Any) -> Any:
    """A neutral-model parameter value as the driver wants it (points, durations)."""
    if isinstance(value, Point):
        coords = (value.x, value.y) if value.z is None else (value.x, value.y, value.z)
        return _SRID_POINTS.get(value.srid, neo4j_spatial.CartesianPoint)(coords)
    if isinstance(value, Duration):
        return neo4j_time.Duration(
            months=value.months, days=value.days, seconds=value.seconds,
            nanoseconds=value.nanoseconds,
        )  # fmt: skip
    if isinstance(value, list | tuple):
        return [to_driver(v) for v in value]
    if isinstance(value, dict):
        return {k: to_driver(v) for k, v in value.items()}
    if isinstance(value, GraphNode | GraphRelationship | GraphPath):
        raise BackendError(
            "graph entities cannot be query parameters", "Neo.ClientError.Statement.TypeError"
        )
    return value  # None, bool, int, float, str, bytes, date/time: the driver takes them as-is


def to_summary(summary: neo4j.ResultSummary) -> ResultSummary:
    counters = summary.counters
    stats = {
        name.replace("_", "-"): getattr(counters, name)
        for name in _COUNTER_FIELDS
        if getattr(counters, name, 0)
    }
    with warnings.catch_warnings():  # deprecated in driver 6 in favour of GQL statuses
        warnings.simplefilter("ignore", DeprecationWarning)
        notifications = [dict(n) for n in (summary.notifications or [])]
    return ResultSummary(
        query_type=summary.query_type or "r",
        counters=stats,
        notifications=notifications,
        database=summary.database,
        server=summary.server.agent or "",
        t_first_ms=summary.result_available_after or 0,
        t_last_ms=summary.result_consumed_after or 0,
        plan=summary.plan if isinstance(summary.plan, dict) else None,
    )


# ---------------------------------------------------------------------- results


class BoltResult:
    """The driver's result cursor behind the `ResultStream` protocol."""

    def __init__(
        self,
        result: neo4j.AsyncResult,
        keys: list[str],
        on_done: Callable[[], Awaitable[None]] | None = None,
        session: neo4j.AsyncSession | None = None,
    ) -> None:
        self.keys = keys
        self._result = result
        self._on_done = on_done  # closes the auto-commit session that owns the result
        self._session = session  # auto-commit: its bookmark goes into the summary
        self._summary: ResultSummary | None = None

    async def fetch(self, n: int) -> list[list[Any]]:
        if self._summary is not None:
            return []
        try:
            if n < 0:
                records = [record async for record in self._result]
                exhausted = True
            else:
                records = await self._result.fetch(n)
                # peek pulls the next batch if needed, so has_more() is exact.
                exhausted = len(records) < n or await self._result.peek() is None
            rows = [[to_neutral(v) for v in record.values()] for record in records]
            if exhausted:
                await self._finish()
            return rows
        except Exception as exc:
            await self._abandon()
            raise map_error(exc) from exc

    async def discard(self) -> None:
        if self._summary is None:
            try:
                await self._finish()
            except Exception as exc:
                await self._abandon()
                raise map_error(exc) from exc

    def has_more(self) -> bool:
        return self._summary is None

    def summary(self) -> ResultSummary:
        return self._summary if self._summary is not None else ResultSummary()

    async def _finish(self) -> None:
        summary = to_summary(await self._result.consume())
        if self._session is not None:
            summary.bookmark = _latest(await self._session.last_bookmarks())
        self._summary = summary
        await self._close_owner()

    async def _abandon(self) -> None:
        self._summary = self._summary or ResultSummary()
        await self._close_owner()

    async def _close_owner(self) -> None:
        if self._on_done is not None:
            on_done, self._on_done = self._on_done, None
            await on_done()


# ---------------------------------------------------------------------- backend


class BoltBackend:
    """A Neo4j-compatible server behind the proxy (one driver, one pool, many sessions).

    `read_only=True` opens every session in READ access mode: Neo4j then refuses writes
    itself (and a cluster routes the work to readers). `passthrough=True` opens each session
    with the credentials of the client being served (`CLIENT_AUTH`), when it sent any; `auth`
    is then only the default (schema discovery, clients that sent none).
    """

    name = "bolt"

    def __init__(
        self,
        uri: str,
        auth: tuple[str, str] | None = None,
        database: str | None = None,
        *,
        read_only: bool = False,
        passthrough: bool = False,
        **driver_config: Any,
    ) -> None:
        self.uri = uri
        self.read_only = read_only
        self.passthrough = passthrough
        self.auth = auth
        self.database = database
        self.driver_config = driver_config
        self.server = ""
        self._driver: neo4j.AsyncDriver | None = None

    @property
    def driver(self) -> neo4j.AsyncDriver:
        if self._driver is None:
            self._driver = neo4j.AsyncGraphDatabase.driver(
                self.uri, auth=self.auth, **self.driver_config
            )
        return self._driver

    def _session(self, database: str | None) -> neo4j.AsyncSession:
        mode = neo4j.READ_ACCESS if self.read_only else neo4j.WRITE_ACCESS
        auth = CLIENT_AUTH.get() if self.passthrough else None
        return self.driver.session(
            database=database or self.database, default_access_mode=mode, auth=auth
        )

    async def start(self) -> None:
        try:
            info = await self.driver.get_server_info()
        except neo4j_errors.AuthError as exc:
            if self.passthrough:  # reachable; the clients will bring their own credentials
                return
            raise map_error(exc) from exc
        except Exception as exc:
            raise map_error(exc) from exc
        self.server = info.agent or ""

    async def close(self) -> None:
        if self._driver is not None:
            await self._driver.close()
            self._driver = None

    async def run(
        self, query: str, parameters: dict[str, Any], database: str | None = None
    ) -> BoltResult:
        session = self._session(database)
        try:
            result = await session.run(query, to_driver(parameters or {}))
            keys = list(result.keys())
        except Exception as exc:
            await session.close()
            raise map_error(exc) from exc
        return BoltResult(result, keys, session.close, session)

    async def explain(
        self, query: str, parameters: dict[str, Any] | None = None, database: str | None = None
    ) -> dict[str, Any] | None:
        """The upstream's plan for `query`, sent as `EXPLAIN …` (planned, never run)."""
        result = await self.run("EXPLAIN " + query, parameters or {}, database)
        await result.fetch(-1)
        return result.summary().plan

    async def begin(
        self, database: str | None = None, metadata: dict[str, Any] | None = None
    ) -> BoltTransaction:
        session = self._session(database)
        try:
            tx = await session.begin_transaction(metadata=metadata or None)
        except Exception as exc:
            await session.close()
            raise map_error(exc) from exc
        return BoltTransaction(session, tx)


class BoltTransaction:
    """An explicit upstream transaction; its session closes with it."""

    def __init__(self, session: neo4j.AsyncSession, tx: neo4j.AsyncTransaction) -> None:
        self._session = session
        self._tx = tx

    async def run(self, query: str, parameters: dict[str, Any]) -> BoltResult:
        try:
            result = await self._tx.run(query, to_driver(parameters or {}))
            keys = list(result.keys())
        except Exception as exc:
            raise map_error(exc) from exc
        return BoltResult(result, keys)

    async def commit(self) -> str | None:
        try:
            await self._tx.commit()
            bookmarks = await self._session.last_bookmarks()
        except Exception as exc:
            raise map_error(exc) from exc
        finally:
            await self._session.close()
        return _latest(bookmarks)

    async def rollback(self) -> None:
        try:
            await self._tx.rollback()
        except Exception as exc:
            raise map_error(exc) from exc
        finally:
            await self._session.close()


def _latest(bookmarks: neo4j.Bookmarks) -> str | None:
    values = sorted(bookmarks.raw_values)
    return values[-1] if values else None
