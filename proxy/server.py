"""`query-guard serve`: one proxy instance — backend, schema, guard, audit log and frontends.

Everything is built per `ProxyServer` (plugin manager, config, caches); nothing is global, so
tests run several servers in one process.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from pathlib import Path
from typing import Any

from proxy.audit import AuditLog
from proxy.config import Config
from proxy.errors import ConfigError
from proxy.pipeline import Guard, build_guard
from proxy.schema import SchemaCatalog

log = logging.getLogger(__name__)


def split_address(value: str, key: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ConfigError(key, f"must look like 'host:port', got {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


class ProxyServer:
    """Start with `await start()`; `bolt_port` is known afterwards; `await close()` stops all."""

    def __init__(self, config: Config, *, extra_plugins: tuple[object, ...] = ()) -> None:
        self.config = config
        self.extra_plugins = extra_plugins
        self.embedded: Any = None  # EmbeddedFalkorDB when no backend is configured
        self.backend: Any = None
        self.guard: Guard | None = None
        self.schema: SchemaCatalog | None = None
        self.bolt: Any = None
        self.audit = AuditLog(
            str(config.audit["path"]), include_parameters=bool(config.audit["include_parameters"])
        )

    @property
    def bolt_port(self) -> int:
        return int(self.bolt.port)

    async def start(self) -> None:
        try:
            self.backend = await self._start_backend()
            self.schema = await self._load_schema()
            self.guard = build_guard(self.config, self.schema, extra_plugins=self.extra_plugins)
            await self._start_frontends()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        if self.bolt is not None:
            await self.bolt.close()
            self.bolt = None
        if self.backend is not None:
            await self.backend.close()
            self.backend = None
        if self.embedded is not None:
            await self.embedded.astop()
            self.embedded = None
        self.audit.close()

    # ------------------------------------------------------------------ parts

    async def _start_backend(self) -> Any:
        url = str(self.config.backend["cypher"])
        if not url:
            from proxy.backends.embedded import EmbeddedFalkorDB

            self.embedded = EmbeddedFalkorDB(Path(str(self.config.server["data_dir"])) / "falkordb")
            await self.embedded.astart()
            log.info("embedded FalkorDB on port %d", self.embedded.port)
            url = self.embedded.url
        backend = make_backend(url, self.config)
        await backend.start()
        return backend

    async def _load_schema(self) -> SchemaCatalog | None:
        threshold = self.config.guard.reciprocity_threshold
        path = str(self.config.guard_raw["schema"])
        if path:
            return SchemaCatalog.load(path, reciprocity_threshold=threshold)
        if not self.config.guard_raw["discover_schema"]:
            return None
        from proxy.discovery import discover_schema

        try:
            data = await discover_schema(self.backend, reciprocity_threshold=threshold)
        except Exception as exc:  # a proxy without a schema still guards security and limits
            log.warning("schema discovery failed, schema rules are off: %s", exc)
            return None
        return SchemaCatalog.from_dict(data, reciprocity_threshold=threshold)

    async def _start_frontends(self) -> None:
        from proxy.frontends.bolt import BoltFrontend

        bolt = str(self.config.server["bolt"])
        if bolt:
            host, port = split_address(bolt, "server.bolt")
            advertised = str(self.config.server["advertised_address"]) or None
            assert self.guard is not None
            self.bolt = BoltFrontend(
                host, port, self.guard, self.backend, advertised, on_query=self.audit
            )
            await self.bolt.start()


def make_backend(url: str, config: Config) -> Any:
    """The backend for a `[backend] cypher` URL."""
    scheme = url.split("://", 1)[0].lower()
    if scheme in ("falkordb", "redis"):
        from proxy.backends.falkordb import FalkorDBBackend

        return FalkorDBBackend(url)
    if scheme.startswith(("bolt", "neo4j")):
        from proxy.backends.bolt import BoltBackend

        auth = None
        if config.backend["credentials"] == "configured":
            env = str(config.backend["password_env"])
            auth = (str(config.backend["user"]), os.environ.get(env, "") if env else "")
        return BoltBackend(url, auth=auth, database=str(config.backend["database"]) or None)
    raise ConfigError("backend.cypher", f"unsupported URL scheme {scheme!r}")


def serve(config: Config) -> int:
    """Run until SIGINT / SIGTERM; returns the process exit status."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    return asyncio.run(_serve(config))


async def _serve(config: Config) -> int:
    server = ProxyServer(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await server.start()
    where = f"bolt://{config.server['bolt']}"
    backend = config.backend["cypher"] or f"embedded FalkorDB ({server.embedded.url})"
    print(f"query-guard listening on {where} -> {backend}", flush=True)
    try:
        await stop.wait()
    finally:
        await server.close()
    return 0
