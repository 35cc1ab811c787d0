"""Where a running proxy's schema catalog comes from (DESIGN §3), and when.

* a schema file (`[guard] schema`);
* discovery at start with the backend's configured account, or — behind a pass-through
  backend (`[backend] credentials = "passthrough"`) — with a discovery account
  (`[backend] discovery_user` / `discovery_password_env`);
* behind a pass-through backend without either: discovery with the **first authenticated
  client session's** credentials, before that session's first query (`FirstSessionDiscovery`);
* none (`[guard] discover_schema = false`).

Discovered schemas are refreshed every `[guard] schema_ttl_seconds`; a write through the proxy
makes them stale (`written`, called by the Cypher execution after a write that ran; with
`[server] workers = N` it tells the other workers too, `query_guard.run.peers`): they
are re-discovered in the background, and before the next proxy-answered schema procedure
(`ensure_fresh`), which also re-discovers a catalog older than `[compat]
schema_max_age_seconds` (writes made elsewhere). Until a schema exists,
every verdict the proxy lets through carries `SCH.NO_SCHEMA` (info): the schema rules are
inactive. `description` says which of these applies (`serve` prints it).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import time
from collections.abc import Callable
from typing import Any, Protocol

from query_guard.backend import BackendError
from query_guard.config.load import Config
from query_guard.errors import ConfigError
from query_guard.model import Finding
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.refresh import (
    FirstSessionDiscovery,
    SchemaHolder,
    SchemaRefresher,
    no_schema_finding,
)

log = logging.getLogger(__name__)
STALE = "schema-stale"  # what a worker that ran a write asks the others (`share`)


class Peers(Protocol):
    """The other workers of one `serve` (`query_guard.run.peers.Peers`)."""

    def provide(self, question: str, answer: Callable[[], bytes]) -> None: ...

    async def ask(self, question: str) -> list[tuple[str, bytes]]: ...

AuthHook = Callable[[dict[str, Any]], Any]


class SchemaSource:
    """`await load()` at start, `start(guard, on_schema)` once the guard exists, `close()`."""

    def __init__(self, config: Config, backend: Any, auth_hook: AuthHook | None) -> None:
        self.config = config
        self.backend = backend
        self.auth_hook = auth_hook  # the backend's pass-through hook: sets a task's credentials
        self.description = ""
        self.refresher: SchemaRefresher | None = None
        self.first_session: FirstSessionDiscovery | None = None
        self._lazy = False
        self._guard: SchemaHolder | None = None
        self._on_schema: Callable[[SchemaCatalog], None] | None = None
        self._peers: Peers | None = None  # the other workers of one `serve`
        self._stale = False
        self._discovered_at = time.monotonic()
        self._lock = asyncio.Lock()
        self._pending: asyncio.Task[None] | None = None  # a background refresh after a write

    @property
    def threshold(self) -> float:
        return self.config.guard.reciprocity_threshold

    async def load(self) -> SchemaCatalog | None:
        path = str(self.config.guard_raw["schema"])
        if path:
            self.description = f"from {path}"
            return SchemaCatalog.load(path, reciprocity_threshold=self.threshold)
        if not self.config.guard_raw["discover_schema"]:
            self.description = "none (guard.discover_schema = false)"
            return None
        account = self.discovery_account()
        pass_through = bool(getattr(self.backend, "passthrough", False))
        if pass_through and account is None and getattr(self.backend, "auth", None) is None:
            self._lazy = True
            self.description = (
                "discovered with the first authenticated client session's credentials "
                "(pass-through), then every guard.schema_ttl_seconds"
            )
            return None
        try:
            data = await self.discover()
        except Exception as exc:  # a proxy without a schema still guards security and limits
            log.warning("schema discovery failed, schema rules are off: %s", exc)
            self.description = f"none: discovery failed ({exc})"
            if pass_through and account is None:  # a client's credentials may do better
                self._lazy = True
                self.description += "; retried with the first client session's credentials"
            return None
        who = f" with the discovery account {account['principal']}" if account else ""
        self.description = f"discovered at start{who}"
        return SchemaCatalog.from_dict(data, reciprocity_threshold=self.threshold)

    def discovery_account(self) -> dict[str, Any] | None:
        """`[backend] discovery_user` / `discovery_password_env` as a Bolt auth map (only a
        pass-through backend needs one: otherwise its configured account discovers)."""
        user = str(self.config.backend["discovery_user"])
        if not user or not getattr(self.backend, "passthrough", False):
            return None
        env = str(self.config.backend["discovery_password_env"])
        if env and env not in os.environ:
            raise ConfigError("backend.discovery_password_env", f"{env} is not set")
        password = os.environ.get(env, "") if env else ""
        return {"scheme": "basic", "principal": user, "credentials": password}

    async def discover(self) -> dict[str, Any]:
        """One discovery round: with the discovery account when there is one (in a task of
        its own, so its credentials stay there), else with the credentials of the caller."""
        from query_guard.schema.discovery import discover_schema

        account = self.discovery_account()
        check = self.auth_hook
        if account is None or check is None:
            return await discover_schema(self.backend, reciprocity_threshold=self.threshold)

        async def as_account() -> dict[str, Any]:
            assert check is not None and account is not None
            if not await _accepted(check, account):
                raise BackendError(
                    "the discovery account was refused by the database",
                    "Neo.ClientError.Security.Unauthorized",
                )
            return await discover_schema(self.backend, reciprocity_threshold=self.threshold)

        return await asyncio.create_task(as_account())

    def start(self, guard: SchemaHolder, on_schema: Callable[[SchemaCatalog], None]) -> None:
        """Refresh a discovered schema every `guard.schema_ttl_seconds` (0: never), or wait
        for the first client session when only a client's credentials can discover it."""
        self._guard = guard
        self._on_schema = on_schema
        self._discovered_at = time.monotonic()
        ttl = int(self.config.guard_raw["schema_ttl_seconds"])
        if self._lazy:
            self.first_session = FirstSessionDiscovery(
                guard, self.discover, ttl, self.threshold, on_schema=on_schema
            )
            return
        if guard.ctx.schema is None or self.config.guard_raw["schema"] or ttl <= 0:
            return
        self.refresher = SchemaRefresher(guard, self.discover, ttl, self.threshold)
        self.refresher.start()

    @property
    def refreshable(self) -> bool:
        """Is the catalog discovered (not a schema file, discovery on), with a guard to use it?"""
        raw = self.config.guard_raw
        return self._guard is not None and bool(raw["discover_schema"]) and not raw["schema"]

    def share(self, peers: Peers) -> None:
        """With several workers: a write through one makes every worker's catalog stale."""
        self._peers = peers
        peers.provide(STALE, self._stale_elsewhere)

    def _stale_elsewhere(self) -> bytes:
        self.mark_stale()
        return b"stale"

    async def written(self, *, background: bool = True) -> None:
        """A write ran through this proxy: `mark_stale`, and tell the other workers before the
        client hears back (so its next schema question finds every worker's catalog stale,
        whichever worker it reaches; each may have refreshed since the last write)."""
        self.mark_stale(background=background)
        if self._peers is not None and self.refreshable:
            await self._peers.ask(STALE)

    def mark_stale(self, *, background: bool = True) -> None:
        """A write went through the proxy: the catalog may lack its labels, types and keys.
        Re-discovered in the background (`background`; not for a write inside an open
        transaction, which other sessions cannot see yet) and before the next `ensure_fresh`."""
        if not self.refreshable:
            return
        self._stale = True
        if background and (self._pending is None or self._pending.done()):
            self._pending = asyncio.create_task(self._refresh_soon(), name="schema-stale")

    async def ensure_fresh(self) -> bool:
        """Before a proxy-answered schema procedure: re-discover a stale catalog, or one older
        than `[compat] schema_max_age_seconds`. True when the catalog changed."""
        if not self.refreshable:
            return False
        if self._lock.locked():  # a refresh under way: wait for its catalog
            async with self._lock:
                pass
        max_age = self.config.compat.schema_max_age_seconds
        if not self._stale and time.monotonic() - self._discovered_at < max_age:
            return False
        return await self.refresh()

    async def refresh(self) -> bool:
        """One discovery round now; swaps the catalog in (the guard's rules use it too) when it
        changed. A failure keeps the catalog we have (and says so in the log)."""
        guard = self._guard
        if guard is None or (self.first_session is not None and not self.first_session.done):
            return False  # the first client session discovers it
        async with self._lock:
            self._stale = False
            try:
                changed = await SchemaRefresher(guard, self.discover, 0, self.threshold).refresh()
            except Exception as exc:  # the database may be down: keep the schema we have
                log.warning("schema refresh failed, keeping the current schema: %s", exc)
                return False
            self._discovered_at = time.monotonic()
        if changed and self._on_schema is not None and guard.ctx.schema is not None:
            self._on_schema(guard.ctx.schema)
        return changed

    async def _refresh_soon(self, delay: float = 0.2) -> None:
        await asyncio.sleep(delay)  # writes come in bursts: one discovery for the burst
        if self._stale:
            await self.refresh()

    def note(self) -> Finding | None:
        """`SCH.NO_SCHEMA` while the guard has no schema, else None."""
        if self._guard is None or self._guard.ctx.schema is not None:
            return None
        if self.first_session is not None:
            return no_schema_finding("waiting for the first authenticated client session")
        return no_schema_finding(self.description or "none")

    def wrap_authenticate(self, check: AuthHook | None) -> AuthHook | None:
        """The frontend's authenticate hook: `check` (the backend's), then — while the schema
        waits for a client's credentials — discovery inside the session that got in (its task
        holds its credentials), before it can send a query."""
        first = self.first_session
        if check is None or first is None:
            return check

        async def authenticate(auth: dict[str, Any]) -> bool:
            accepted = await _accepted(check, auth)
            if accepted and auth.get("scheme") not in (None, "none"):
                await first.on_session()
            return accepted

        return authenticate

    async def close(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pending
        if self.refresher is not None:
            refresher, self.refresher = self.refresher, None
            await refresher.close()
        if self.first_session is not None:
            first, self.first_session = self.first_session, None
            await first.close()


async def _accepted(check: AuthHook, auth: dict[str, Any]) -> bool:
    accepted = check(auth)
    if inspect.isawaitable(accepted):
        accepted = await accepted
    return bool(accepted)
