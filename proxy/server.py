"""`query-guard serve`: one proxy instance — backend, schema, guard, audit log and frontends.

Everything is built per `ProxyServer` (plugin manager, config, caches); nothing is global, so
tests run several servers in one process.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from proxy.audit import AuditLog
from proxy.backends.base import BackendError
from proxy.config import Config
from proxy.errors import ConfigError, QueryGuardError
from proxy.metrics import Metrics, fan_out
from proxy.model import Finding, Verdict
from proxy.pipeline import Guard, build_guard
from proxy.repair import build_repairer
from proxy.schema import SchemaCatalog
from proxy.schema_source import SchemaSource

log = logging.getLogger(__name__)

CREDENTIAL_MODES = ("passthrough", "configured")
BOLT_CLIENTS = ("relay", "driver")  # our own Bolt client (records relayed raw), the neo4j driver
T = TypeVar("T")


def split_address(value: str, key: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ConfigError(key, f"must look like 'host:port', got {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def cypher_guard(
    guard: Guard, note: Callable[[], Finding | None] | None = None
) -> Callable[[str, dict[str, Any]], Verdict]:
    """The Bolt frontend's guard callable: every RUN is Cypher. `note` adds a finding to each
    verdict the guard lets through (`SCH.NO_SCHEMA` while there is no schema)."""

    def check(query: str, parameters: dict[str, Any]) -> Verdict:
        verdict = guard.check(query, "cypher")
        extra = note() if note is not None else None
        if extra is None or verdict.blocked:
            return verdict
        return dataclasses.replace(verdict, findings=(*verdict.findings, extra))

    return check


class ProxyServer:
    """Start with `await start()`; `bolt_port` is known afterwards; `await close()` stops all."""

    def __init__(
        self, config: Config, *, extra_plugins: tuple[object, ...] = (), listen: bool = True
    ) -> None:
        self.config = config
        self.listen = listen  # False: build backends and guards, open no listener (MCP stdio)
        self.extra_plugins = extra_plugins
        self.embedded: Any = None  # EmbeddedFalkorDB when no backend is configured
        self.backend: Any = None
        self.guard: Guard | None = None
        self.schema: SchemaCatalog | None = None
        self.bolt: Any = None
        self.audit: AuditLog | None = None
        self.source: SchemaSource | None = None  # where the schema comes from, and when
        self.gremlin: Any = None  # GremlinFrontend when [server] gremlin is set
        self.gremlin_service: Any = None  # GremlinService when a Gremlin graph is configured
        self.http: Any = None  # HttpFrontend when [server] http is set
        self.metrics = Metrics()
        self.on_query: Callable[..., None] = self.metrics

    @property
    def bolt_port(self) -> int:
        return int(self.bolt.port)

    @property
    def bolt_address(self) -> str:
        """Where clients connect (`host:port`, the real port when the config said 0)."""
        return f"{self.bolt.host}:{self.bolt.port}"

    @property
    def schema_source(self) -> str:
        """How the schema was (or will be) obtained (`serve` prints it)."""
        return self.source.description if self.source is not None else ""

    @property
    def backend_description(self) -> str:
        if self.embedded is not None:
            return f"embedded FalkorDB {self.embedded.url} (data {self.embedded.data_dir})"
        return str(self.config.backend["cypher"])

    async def start(self) -> None:
        try:
            self.audit = AuditLog(
                str(self.config.audit["path"]),
                include_parameters=bool(self.config.audit["include_parameters"]),
            )
            self.on_query = fan_out(self.audit, self.metrics)
            self.backend = await self._start_backend()
            self.source = SchemaSource(self.config, self.backend, self._backend_auth_hook())
            self.schema = await self.source.load()
            self.guard = build_guard(
                self.config, self.schema, extra_plugins=self.extra_plugins, skip_broken=True
            )
            self.guard.warm_up()  # the first client query must not pay for building parsers
            self.source.start(self.guard, self._found_schema)
            log.info("schema: %s", self.schema_source)
            await self._start_frontends()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Stop listening, then the backend, then the embedded database (each step runs even
        when an earlier one fails)."""
        try:
            if self.source is not None:
                await self.source.close()
            if self.bolt is not None:
                bolt, self.bolt = self.bolt, None
                await bolt.close()
            if self.gremlin is not None:
                gremlin, self.gremlin = self.gremlin, None
                await gremlin.close()
            if self.http is not None:
                http, self.http = self.http, None
                await http.close()
        finally:
            if self.gremlin_service is not None:
                gremlin_service, self.gremlin_service = self.gremlin_service, None
                await gremlin_service.close()
            try:
                if self.backend is not None:
                    backend, self.backend = self.backend, None
                    await backend.close()
            finally:
                if self.embedded is not None:
                    embedded, self.embedded = self.embedded, None
                    await embedded.astop()
                if self.audit is not None:
                    self.audit.close()
                    self.audit = None

    async def __aenter__(self) -> ProxyServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ parts

    async def _start_backend(self) -> Any:
        url = str(self.config.backend["cypher"])
        if not url:
            from proxy.backends.embedded import EmbeddedFalkorDB

            data_dir = Path(str(self.config.server["data_dir"])).expanduser() / "falkordb"
            self.embedded = EmbeddedFalkorDB(data_dir)
            await self.embedded.astart()
            log.info("embedded FalkorDB on port %d", self.embedded.port)
            url = self.embedded.url
        backend = make_backend(url, self.config)
        await backend.start()
        return backend

    def _found_schema(self, schema: SchemaCatalog) -> None:
        self.schema = schema

    async def _start_frontends(self) -> None:
        await self._start_gremlin()
        if not self.listen:
            return
        await self._start_http()
        from proxy.frontends.bolt import BoltFrontend

        bolt = str(self.config.server["bolt"])
        if not bolt:
            return
        host, port = split_address(bolt, "server.bolt")
        advertised = str(self.config.server["advertised_address"]) or None
        assert self.guard is not None
        self.bolt = BoltFrontend(
            host,
            port,
            cypher_guard(self.guard, self.source.note if self.source else None),
            self.backend,
            advertised,
            on_query=self.on_query,
            authenticate=self._authenticate_hook(),
            repairer=build_repairer(self.guard, self.config),
        )
        await self.bolt.start()
        bolt_front = self.bolt
        self.metrics.watch_connections("bolt", lambda: bolt_front.connections)

    async def _start_gremlin(self) -> None:
        """The Gremlin Server front on `[server] gremlin` (see `proxy.gremlin_service`)."""
        address = str(self.config.server["gremlin"])
        if address or str(self.config.backend["gremlin"]):
            from proxy.gremlin_service import GremlinService

            self.gremlin_service = await GremlinService.create(self.config, self.extra_plugins)
        if not address or not self.listen:
            return
        from proxy.frontends.gremlin_ws import GremlinFrontend

        host, port = split_address(address, "server.gremlin")
        service = self.gremlin_service
        assert service is not None
        self.gremlin = GremlinFrontend(
            host, port, service.check, service.backend.submit, on_query=self.on_query
        )
        await self.gremlin.start()

    async def _start_http(self) -> None:
        """Neo4j's Query API v2, the legacy tx endpoint and the guard API on `[server] http`."""
        address = str(self.config.server["http"])
        if not address:
            return
        from proxy.frontends.http import HttpFrontend
        from proxy.service import QueryService

        assert self.guard is not None
        host, port = split_address(address, "server.http")
        service = QueryService(
            self.guard,
            self.backend,
            repairer=build_repairer(self.guard, self.config),
            on_query=self.on_query,
        )
        database = str(self.config.backend["database"]) or "neo4j"
        from proxy.frontends.mcp import build_mcp

        gremlin = self.gremlin_service.run if self.gremlin_service is not None else None
        self.http = HttpFrontend(
            host, port, service, database=database, ready=self._readiness, metrics=self.metrics,
            mcp=build_mcp(service, gremlin=gremlin),
            max_body=int(self.config.server["http_max_body_bytes"]),
            cors_origins=tuple(map(str, self.config.server["http_cors_origins"])),
        )  # fmt: skip
        await self.http.start()

    async def _readiness(self) -> dict[str, Any]:
        """/ready: the backend answers `RETURN 1`, and whether a schema is loaded."""
        try:
            stream = await self.backend.run("RETURN 1", {}, None)
            await stream.fetch(-1)
            backend = True
        except Exception as exc:
            log.warning("readiness probe failed: %s", exc)
            backend = False
        schema = self.guard is not None and self.guard.ctx.schema is not None
        return {"backend": backend, "schema": schema}

    def _authenticate_hook(self) -> Callable[[dict[str, Any]], Any] | None:
        """The backend's hook, followed by schema discovery in the first session that gets in
        while the schema waits for a client's credentials (`SchemaSource`)."""
        check = self._backend_auth_hook()
        return self.source.wrap_authenticate(check) if self.source is not None else check

    def _backend_auth_hook(self) -> Callable[[dict[str, Any]], Any] | None:
        """Pass-through to a Bolt upstream: remember each connection's credentials (the relay
        backend also checks them upstream at LOGON)."""
        if not getattr(self.backend, "passthrough", False):
            return None
        authenticate = getattr(self.backend, "authenticate", None)
        if authenticate is not None:
            return authenticate  # type: ignore[no-any-return]
        from proxy.backends.bolt import remember_client_auth

        return remember_client_auth


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


def make_backend(url: str, config: Config) -> Any:
    """The backend for a `[backend] cypher` URL (writes refused upstream too when read-only)."""
    scheme = url.split("://", 1)[0].lower()
    read_only = config.guard.read_only
    if scheme in ("falkordb", "falkor", "redis"):
        from proxy.backends.falkordb import FalkorDBBackend

        return FalkorDBBackend(url, read_only=read_only)
    if scheme.startswith(("bolt", "neo4j")):
        mode = str(config.backend["credentials"])
        if mode not in CREDENTIAL_MODES:
            raise ConfigError("backend.credentials", f"must be one of {CREDENTIAL_MODES}")
        client = str(config.backend["client"])
        if client not in BOLT_CLIENTS:
            raise ConfigError("backend.client", f"must be one of {BOLT_CLIENTS}")
        options: dict[str, Any] = {
            "auth": configured_auth(config, required=mode == "configured"),
            "database": str(config.backend["database"]) or None,
            "read_only": read_only,
            "passthrough": mode == "passthrough",
        }
        if client == "driver":
            from proxy.backends.bolt import BoltBackend

            return BoltBackend(url, **options)
        from proxy.backends.bolt_relay import BoltRelayBackend

        return BoltRelayBackend(url, **options)
    raise ConfigError("backend.cypher", f"unsupported URL scheme {scheme!r}")


def configured_auth(config: Config, required: bool) -> tuple[str, str] | None:
    """(user, password from `password_env`); in pass-through mode they are optional and only
    serve schema discovery and clients that send no credentials."""
    user = str(config.backend["user"])
    env = str(config.backend["password_env"])
    if not user:
        if required:
            raise ConfigError("backend.user", 'credentials = "configured" needs a user')
        return None
    if env and env not in os.environ:
        raise ConfigError("backend.password_env", f"environment variable {env} is not set")
    return user, os.environ.get(env, "") if env else ""


def serve(config: Config) -> int:
    """Run until SIGINT / SIGTERM; returns the process exit status."""
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    try:  # libuv's loop: fewer microseconds per socket event, the proxy's hot path
        import uvloop
    except ImportError:
        return asyncio.run(_serve(config))
    return uvloop.run(_serve(config))


async def _serve(config: Config) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    server = ProxyServer(config)
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
        except (BackendError, QueryGuardError, OSError) as exc:
            print(f"query-guard: cannot start: {exc}", file=sys.stderr, flush=True)
            return 1
        where = f"bolt://{server.bolt_address}" if server.bolt is not None else "no listener"
        print(f"query-guard listening on {where} -> {server.backend_description}", flush=True)
        print(f"query-guard schema: {server.schema_source}", flush=True)
        if server.http is not None:
            print(f"query-guard listening on http://{server.http.host}:{server.http.port}",
                  flush=True)  # fmt: skip
        if server.gremlin is not None:
            print(
                f"query-guard listening on ws://{server.gremlin.host}:{server.gremlin.port}"
                f"/gremlin -> {server.gremlin_service.backend.description}",
                flush=True,
            )
        await stopping
        return 0
    finally:
        stopping.cancel()
        await server.close()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
