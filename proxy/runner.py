"""Running a `ProxyServer`: `query-guard serve` until a signal, and `ProxyThread` — the proxy
on its own event loop in a thread, for applications and tests next to synchronous code."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from query_guard.backend import BackendError
from query_guard.config.load import Config
from query_guard.errors import ConfigError, QueryGuardError
from query_guard.server import ProxyServer

T = TypeVar("T")


class ProxyThread:
    """A `ProxyServer` on its own event loop in a daemon thread, for applications (and tests)
    that embed the proxy next to synchronous code: `start()` returns once it listens."""

    def __init__(self, config: Config, **options: Any) -> None:
        self.server = ProxyServer(config, **options)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    @property
    def address(self) -> str:
        return self.server.bolt_address

    def start(self, timeout: float = 120.0) -> ProxyThread:
        self._thread.start()
        try:
            self.call(self.server.start(), timeout)
        except BaseException:
            self._halt()
            raise
        return self

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = 60.0) -> T:
        """Run a coroutine on the proxy's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        if self._thread.is_alive():
            try:
                self.call(self.server.close())
            finally:
                self._halt()

    def _halt(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        if not self.loop.is_running():
            self.loop.close()

    def __enter__(self) -> ProxyThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(config: Config, peers_dir: str | None = None) -> int:
    """Run until SIGINT / SIGTERM; returns the process exit status. `peers_dir`: the
    directory where a supervisor's workers share their consoles (`query_guard.workers`)."""
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    try:  # libuv's loop: fewer microseconds per socket event, the proxy's hot path
        import uvloop
    except ImportError:
        return asyncio.run(_serve(config, peers_dir))
    return uvloop.run(_serve(config, peers_dir))


async def _serve(config: Config, peers_dir: str | None = None) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    server = ProxyServer(config, peers_dir=peers_dir)
    starting = asyncio.create_task(server.start())
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not starting.done():  # a signal during start-up: give up starting
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await starting
            return 0
        try:
            starting.result()
        except ConfigError as exc:  # found while starting (an address, a TLS file): say where
            print(f"query-guard: cannot start: {config.located(exc)}", file=sys.stderr, flush=True)
            return 2
        except (BackendError, QueryGuardError, OSError) as exc:
            print(f"query-guard: cannot start: {exc}", file=sys.stderr, flush=True)
            return 1
        scheme = "bolt+s" if server.bolt is not None and server.bolt.ssl_context else "bolt"
        where = f"{scheme}://{server.bolt_address}" if server.bolt is not None else "no listener"
        print(f"query-guard listening on {where} -> {server.backend_description}", flush=True)
        print(f"query-guard schema: {server.schema_source}", flush=True)
        if server.http is not None:
            print(f"query-guard listening on http://{server.http.host}:{server.http.port}",
                  flush=True)  # fmt: skip
        if server.gremlin is not None:
            service = server.gremlin_service
            named = "".join(
                f", {name} -> {graph.backend.description}" for name, graph in service.graphs.items()
            )
            print(
                f"query-guard listening on ws://{server.gremlin.host}:{server.gremlin.port}"
                f"/gremlin -> {service.backend.description}{named}",
                flush=True,
            )
        await stopping
        return 0
    finally:
        stopping.cancel()
        await server.close()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


async def serve_stdio(config: Any) -> None:
    """`query-guard mcp`: backends and guards of a `ProxyServer` without listeners, and the
    MCP server on standard input/output (logs and the audit log go to standard error); a line
    that is no JSON-RPC message gets a JSON-RPC error and the next one is served."""
    # the MCP SDK loads only for this command
    from query_guard.frontends.mcp import build_mcp
    from query_guard.frontends.mcp_stdio import serve as serve_mcp

    server = ProxyServer(config, listen=False)
    await server.start()
    try:
        service = server.query_service()
        gremlin = server.gremlin_service is not None
        try:
            await serve_mcp(build_mcp(service, gremlin=gremlin))
        finally:
            service.close()
    finally:
        await server.close()
