"""The Bolt frontend: an asyncio server that neo4j drivers connect to instead of the database.

`BoltFrontend` listens (plain or TLS) and makes one `BoltProtocol`
(`query_guard.frontends.bolt.connection`) per client connection; the server and the other
connections carry on whatever one client does.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import ssl
from collections.abc import Iterable
from typing import TYPE_CHECKING

from query_guard.backend import Backend
from query_guard.frontends.bolt.connection import HANDSHAKE_TIMEOUT, BoltProtocol
from query_guard.frontends.bolt.context import Authenticate, Guard, OnQuery, ServerContext
from query_guard.run.guard_pool import GuardPool
from query_guard.run.limits import Limits
from query_guard.run.runner import Runner
from query_guard.wire import bolt_messages as m
from query_guard.wire.bolt_handshake import SUPPORTED_VERSIONS, Version

if TYPE_CHECKING:
    from query_guard.repair.repairer import Repairer

log = logging.getLogger("query_guard.bolt")
# On shutdown, open transactions get this long to finish before their connections close (the
# rest of the 10 s a SIGTERM may take goes to aborting what is left and closing the backend).
DRAIN_SECONDS = 3.0


class BoltFrontend:
    """A Bolt server guarding every query: `await start()`, then point drivers at `.port`."""

    def __init__(
        self,
        host: str,
        port: int,
        guard: Guard,
        backend: Backend,
        advertised_address: tuple[str, ...] = (),
        *,
        on_query: OnQuery | None = None,
        authenticate: Authenticate | None = None,
        server_agent: str = "Neo4j/5.26.0",
        home_database: str = "neo4j",
        max_message_size: int = m.DEFAULT_MAX_MESSAGE,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
        fetch_batch: int = 1000,
        versions: tuple[Version, ...] = SUPPORTED_VERSIONS,
        repairer: Repairer | None = None,
        telemetry: bool | None = None,
        limits: Limits | None = None,
        ssl_context: ssl.SSLContext | None = None,
        databases: Iterable[str] | None = None,
        runner: Runner | None = None,  # the proxy's request path (None: one of its own)
    ) -> None:
        unknown = set(versions) - set(SUPPORTED_VERSIONS)
        if unknown or not versions:
            raise ValueError(f"unsupported Bolt versions: {sorted(unknown) or 'none given'}")
        self.versions = tuple(sorted(versions, reverse=True))
        self.host = host
        self.port = port
        self.advertised_address = advertised_address
        self.limits = limits or Limits()
        # the guard runs here, off the event loop (`[limits] guard_workers`)
        self._guard_pool = GuardPool(self.limits.guard_workers)
        self._ctx = ServerContext(
            guard=guard,
            backend=backend,
            on_query=on_query,
            authenticate=authenticate,
            server_agent=server_agent,
            home_database=home_database,
            fetch_batch=fetch_batch,
            repairer=repairer,
            # None: as the backend says (the relay forwards no telemetry, so it asks for none)
            telemetry=getattr(backend, "telemetry", True) if telemetry is None else telemetry,
            limits=self.limits,
            guard_pool=self._guard_pool,
            databases=None if databases is None else frozenset(databases),
            runner=runner,  # type: ignore[arg-type]
        )
        # With a context the listener speaks TLS only (bolt+s:// / neo4j+s://): a plaintext
        # client fails the TLS handshake and is disconnected.
        self.ssl_context = ssl_context
        self._max_message_size = max_message_size
        self._handshake_timeout = handshake_timeout
        self._server: asyncio.Server | None = None
        self._connections: set[BoltProtocol] = set()
        self._ids = itertools.count(1)

    @property
    def connections(self) -> int:
        return len(self._connections)

    async def start(self, reuse_port: bool = False) -> None:
        """Listen; `reuse_port`: beside the other worker processes of `[server] workers`."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            self._protocol,
            self.host,
            self.port,
            ssl=self.ssl_context,
            # a client that never finishes the TLS handshake is dropped like a slow Bolt one
            ssl_handshake_timeout=self._handshake_timeout if self.ssl_context else None,
            start_serving=False,
            reuse_port=reuse_port or None,
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ctx.advertised_address = self.advertised_address or (_address(self.host, self.port),)
        await self._server.start_serving()
        log.info(
            "bolt frontend listening on %s:%d%s",
            self.host, self.port, " (TLS)" if self.ssl_context else "",
        )  # fmt: skip

    def _protocol(self) -> BoltProtocol:
        return BoltProtocol(
            self._ctx,
            self._ids,
            self._connections,
            self._max_message_size,
            self._handshake_timeout,
            self.versions,
        )

    async def close(self) -> None:
        if self._server is None:
            self._guard_pool.shutdown()
            return
        self._server.close()  # no new connections; open ones finish their transaction first
        for conn in list(self._connections):
            conn.close_when_idle()
        workers = {conn.worker for conn in self._connections if conn.worker is not None}
        if workers:
            await asyncio.wait(workers, timeout=DRAIN_SECONDS)
        workers = set()
        for conn in list(self._connections):
            conn.abort("server shutting down", graceful=True)
            if conn.worker is not None:
                workers.add(conn.worker)
        if workers:
            await asyncio.wait(workers, timeout=5)
        self._guard_pool.shutdown()
        await self._server.wait_closed()
        self._server = None


def _address(host: str, port: int) -> str:
    if host in ("", "0.0.0.0", "::"):
        host = "localhost"
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{port}"
