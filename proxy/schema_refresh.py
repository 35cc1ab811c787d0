"""Keeps a running guard's schema fresh: re-discovers it from the backend every
`[guard] schema_ttl_seconds` and swaps it in when it changed (the verdict cache is cleared)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from proxy.pipeline import Guard
from proxy.schema import SchemaCatalog

log = logging.getLogger(__name__)

Discover = Callable[[], Awaitable[dict[str, Any]]]


class SchemaRefresher:
    """`start()` a background task; `close()` cancels it. `refresh()` is one round, for tests."""

    def __init__(
        self, guard: Guard, discover: Discover, ttl_seconds: float, reciprocity_threshold: float
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
        if current is not None and current.to_dict() == fresh.to_dict():
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
