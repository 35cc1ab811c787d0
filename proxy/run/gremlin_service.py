"""The Gremlin side of one `ProxyServer`: its backend (a remote Gremlin Server, bytecode only,
or the embedded graphersal), a guard with that graph's own catalog, and the repair settings;
`route()` hands them to the runner (`query_guard.run.gremlin`), which every front calls.
`[backend] gremlin_graphs` adds named graphs (traversal sources such as `gmodern`), each an
embedded graphersal graph with its own guard and catalog, routed by the request's alias."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from query_guard.build import build_guard
from query_guard.config.load import Config
from query_guard.errors import ConfigError
from query_guard.gremlin.similarity import gremlin_settings
from query_guard.guard.pipeline import Guard
from query_guard.repair.model import RepairSettings
from query_guard.run.gremlin import GremlinExecution
from query_guard.run.guards import LanguageGuard
from query_guard.run.limits import Limits
from query_guard.run.runner import Route
from query_guard.schema.catalog import SchemaCatalog

log = logging.getLogger(__name__)


class GremlinService:
    def __init__(
        self,
        guard: Guard,
        backend: Any,
        repair: RepairSettings | None = None,
        limits: Limits | None = None,
        graphs: dict[str, GremlinService] | None = None,
    ) -> None:
        self.guard = guard
        self.backend = backend
        self.repair_settings = repair or RepairSettings()
        self.limits = limits or Limits()
        self.graphs = graphs or {}  # the named traversal sources beside `g`

    @classmethod
    async def create(cls, config: Config, extra_plugins: tuple[object, ...] = ()) -> GremlinService:
        repair = RepairSettings.from_config(config.repair)
        limits = Limits.from_config(config.limits)
        graphs: dict[str, GremlinService] = {}
        try:
            for name, path in dict(config.backend["gremlin_graphs"]).items():
                if not Path(str(path)).expanduser().is_file():
                    raise ConfigError(f"backend.gremlin_graphs.{name}", f"no such file: {path}")
                named = await _graphersal(config, f"graphersal-{name}", [str(path)])
                guard = await _guard(config, named, extra_plugins)
                graphs[name] = cls(guard, named, repair, limits)
            backend = await _backend(config)
        except BaseException:
            for opened in graphs.values():
                await opened.close()
            raise
        guard = await _guard(config, backend, extra_plugins)
        return cls(guard, backend, repair, limits, graphs)

    def route(self) -> Route:
        """This graph's route for the runner: its guard (its own catalog) and execution, and
        the routes of the named graphs (`graphs`, by traversal source name)."""
        ctx = self.guard.ctx
        execution = GremlinExecution(
            self.backend, self.repair_settings,
            lambda: gremlin_settings(ctx.gremlin).schema.catalog() or ctx.schema,
            self.guard.pm, lambda: self.guard.ctx,
        )  # fmt: skip
        graphs = {name: graph.route() for name, graph in self.graphs.items()}
        return Route(LanguageGuard(self.guard, "gremlin"), execution, graphs)

    async def close(self) -> None:
        for graph in self.graphs.values():
            await graph.close()
        await self.backend.close()


async def _guard(config: Config, backend: Any, extra_plugins: tuple[object, ...]) -> Guard:
    """A guard for one Gremlin graph: the graph is not the Cypher backend's, so its rules get
    its own catalog."""
    try:
        schema: SchemaCatalog | None = SchemaCatalog.from_dict(
            await backend.schema(),
            reciprocity_threshold=config.guard.reciprocity_threshold,
        )
    except Exception as exc:  # the security and limit rules still guard
        log.warning("Gremlin schema discovery failed, Gremlin schema rules are off: %s", exc)
        schema = None
    return build_guard(config, schema, extra_plugins=extra_plugins, skip_broken=True)


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
    return await _graphersal(config, "graphersal", [str(p) for p in config.backend["gremlin_data"]])


async def _graphersal(config: Config, folder: str, data: list[str]) -> Any:
    """An embedded graphersal graph, its snapshot under `<data_dir>/<folder>`."""
    from query_guard.backends.graphersal import GraphersalBackend

    data_dir = Path(str(config.server["data_dir"])).expanduser() / folder
    options: dict[str, Any] = {"read_only": config.guard.read_only}
    timeout = int(config.limits["query_timeout_ms"])  # as on every backend (0: the engine's)
    if timeout:
        options["timeout_ms"] = timeout
    return await asyncio.to_thread(GraphersalBackend.open, data_dir, data, **options)
