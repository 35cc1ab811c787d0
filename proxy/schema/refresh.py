"""Keeps a running guard's schema fresh: re-discovers it from the backend every
`[guard] schema_ttl_seconds` and swaps it in when it changed (the verdict cache is cleared).

Behind a backend that takes each client's own credentials (`credentials = "passthrough"`)
and has no configured account, the proxy cannot discover the schema at start:
`FirstSessionDiscovery` discovers it with the first authenticated client session's
credentials, before that session's first query, then keeps it fresh on the TTL. Until a schema
exists, every verdict says the schema rules are inactive (`no_schema_finding`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from query_guard.model import Finding, Severity
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.context import GuardContext

log = logging.getLogger(__name__)

Discover = Callable[[], Awaitable[dict[str, Any]]]



class SchemaHolder(Protocol):
    """What keeping a schema fresh needs of a guard (`query_guard.guard.pipeline.Guard` is one,
    handed in by the server): the catalog its context holds, and a way to swap a new one in."""

    ctx: GuardContext

    def use_schema(self, schema: SchemaCatalog) -> None: ...

class SchemaRefresher:
    """`start()` a background task; `close()` cancels it. `refresh()` is one round, for tests."""

    def __init__(
        self,
        guard: SchemaHolder,
        discover: Discover,
        ttl_seconds: float,
        reciprocity_threshold: float,
    ) -> None:
        self.guard = guard
        self.discover = discover
        self.ttl = ttl_seconds
        self.threshold = reciprocity_threshold
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.ttl > 0 and self._task is None:
            self._task = asyncio.create_task(self._loop(), name="schema-refresh")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def refresh(self) -> bool:
        """Discover once; True when the schema changed and was swapped in."""
        data = await self.discover()
        fresh = SchemaCatalog.from_dict(data, reciprocity_threshold=self.threshold)
        current = self.guard.ctx.schema
        if current is not None and _same(current, fresh):
            return False
        self.guard.use_schema(fresh)
        log.info(
            "schema refreshed: %d labels, %d relationship types",
            len(fresh.labels), len(fresh.relationship_types),
        )  # fmt: skip
        return True

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.ttl)
            try:
                await self.refresh()
            except Exception as exc:  # the database may be down: keep the schema we have
                log.warning("schema refresh failed, keeping the current schema: %s", exc)


def _same(a: SchemaCatalog, b: SchemaCatalog) -> bool:
    """The same schema, in the same order (the procedures list labels and types in it)."""
    in_order = (a.label_order, a.type_order, a.relationships)
    return in_order == (b.label_order, b.type_order, b.relationships) and a.to_dict() == b.to_dict()


def no_schema_finding(why: str) -> Finding:
    """The info finding every verdict carries while the guard has no schema."""
    return Finding(
        "SCH.NO_SCHEMA",
        Severity.INFO,
        f"no schema catalog yet ({why}): the schema rules (relationship types, directions, "
        "unknown names) are inactive for this query",
        (0, 0),
        rule="schema",
    )


class FirstSessionDiscovery:
    """Discovers the schema inside the first authenticated client session (whose task holds
    that client's backend credentials), then starts a `SchemaRefresher` from there, so the
    TTL rounds use the same credentials. A failed attempt (a client whose account may not
    read the schema) is retried by a later session, at most every `retry_seconds`."""

    def __init__(
        self,
        guard: SchemaHolder,
        discover: Discover,
        ttl_seconds: float,
        reciprocity_threshold: float,
        on_schema: Callable[[SchemaCatalog], None] | None = None,
        retry_seconds: float = 10.0,
    ) -> None:
        self.guard = guard
        self.discover = discover
        self.ttl = ttl_seconds
        self.threshold = reciprocity_threshold
        self.on_schema = on_schema
        self.retry = retry_seconds
        self.refresher: SchemaRefresher | None = None
        self._lock = asyncio.Lock()
        self._failed_at: float | None = None

    @property
    def done(self) -> bool:
        return self.guard.ctx.schema is not None

    async def on_session(self) -> None:
        """Call in the task of a client session that just authenticated."""
        if self.done:
            return
        async with self._lock:
            failed = self._failed_at
            if self.done or (failed is not None and time.monotonic() - failed < self.retry):
                return
            try:
                data = await self.discover()
            except Exception as exc:  # this client may not read the schema: a later one may
                self._failed_at = time.monotonic()
                log.warning("schema discovery with a client session's credentials failed: %s", exc)
                return
            schema = SchemaCatalog.from_dict(data, reciprocity_threshold=self.threshold)
            self.guard.use_schema(schema)
            log.info(
                "schema discovered with the first client session's credentials: %d labels, "
                "%d relationship types",
                len(schema.labels), len(schema.relationship_types),
            )  # fmt: skip
            if self.on_schema is not None:
                self.on_schema(schema)
            if self.ttl > 0:  # its task inherits this session's credentials
                self.refresher = SchemaRefresher(self.guard, self.discover, self.ttl,
                                                 self.threshold)  # fmt: skip
                self.refresher.start()

    async def close(self) -> None:
        if self.refresher is not None:
            await self.refresher.close()
            self.refresher = None
