"""The Gremlin side of one `ProxyServer`: its backend (a remote Gremlin Server, bytecode only,
or the embedded graphersal), a guard with that graph's own catalog, and the repair settings;
`route()` hands them to the runner (`query_guard.run.gremlin`), which every front calls."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from query_guard.config import Config
from query_guard.errors import ConfigError
from query_guard.gremlin.similarity import gremlin_settings
from query_guard.pipeline import Guard, build_guard
from query_guard.repair.model import RepairSettings
from query_guard.run.gremlin import GremlinExecution
from query_guard.run.guards import LanguageGuard
from query_guard.run.limits import Limits
from query_guard.run.runner import Route
from query_guard.schema import SchemaCatalog

log = logging.getLogger(__name__)


class GremlinService:
    def __init__(
        self,
        guard: Guard,
        backend: Any,
        repair: RepairSettings | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.guard = guard
        self.backend = backend
        self.repair_settings = repair or RepairSettings()
        self.limits = limits or Limits()

    @classmethod
    async def create(cls, config: Config, extra_plugins: tuple[object, ...] = ()) -> GremlinService:
        backend = await _backend(config)
        # The Gremlin graph is not the Cypher backend's: its rules get its own catalog.
        try:
            schema: SchemaCatalog | None = SchemaCatalog.from_dict(
                await backend.schema(),
                reciprocity_threshold=config.guard.reciprocity_threshold,
            )
        except Exception as exc:  # the security and limit rules still guard
            log.warning("Gremlin schema discovery failed, Gremlin schema rules are off: %s", exc)
            schema = None
        guard = build_guard(config, schema, extra_plugins=extra_plugins, skip_broken=True)
        repair = RepairSettings.from_config(config.repair)
        return cls(guard, backend, repair, Limits.from_config(config.limits))

    def route(self) -> Route:
        """This graph's route for the runner: its guard (its own catalog) and execution."""
        ctx = self.guard.ctx
        execution = GremlinExecution(
            self.backend, self.repair_settings,
            lambda: gremlin_settings(ctx.gremlin).schema.catalog() or ctx.schema,
        )  # fmt: skip
        return Route(LanguageGuard(self.guard, "gremlin"), execution)

    async def close(self) -> None:
        await self.backend.close()


async def _backend(config: Config) -> Any:
    url = str(config.backend["gremlin"])
    if url:
        from query_guard.backends.gremlin_remote import RemoteGremlinBackend

        env = str(config.backend["gremlin_password_env"])
        if env and env not in os.environ:
            problem = f"environment variable {env} is not set"
            raise ConfigError("backend.gremlin_password_env", problem)
        return RemoteGremlinBackend(
            url,
            username=str(config.backend["gremlin_user"]),
            password=os.environ.get(env, "") if env else "",
        )
    from query_guard.backends.graphersal import GraphersalBackend

    data_dir = Path(str(config.server["data_dir"])).expanduser() / "graphersal"
    data = [str(p) for p in config.backend["gremlin_data"]]
    options: dict[str, Any] = {"read_only": config.guard.read_only}
    timeout = int(config.limits["query_timeout_ms"])  # as on every backend (0: the engine's)
    if timeout:
        options["timeout_ms"] = timeout
    return await asyncio.to_thread(GraphersalBackend.open, data_dir, data, **options)
