"""The Gremlin side of one `ProxyServer`: its backend (a remote Gremlin Server, bytecode only,
or the embedded graphersal), a guard with that graph's own catalog, the repair of empty
results (`proxy.repair.gremlin`, `[repair]`), and whole-result runs for the MCP tool
`read_gremlin`. The Gremlin front (`proxy.frontends.gremlin_ws`) uses the same guard, backend
and repair."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gremlin_python.structure.graph import Edge, Vertex
from gremlin_python.structure.graph import Path as GremlinPath

from proxy.backends.base import BackendError
from proxy.config import Config
from proxy.errors import ConfigError
from proxy.gremlin.errors import GremlinScriptError, GremlinSyntaxError
from proxy.gremlin.language import GremlinQuery
from proxy.gremlin.similarity import gremlin_settings
from proxy.guard_pool import GuardPool, QueryLimits, judge
from proxy.model import Verdict
from proxy.pipeline import Guard, build_guard
from proxy.repair.gremlin import GremlinRepair, repair_gremlin
from proxy.repair.model import RepairSettings
from proxy.schema import SchemaCatalog

log = logging.getLogger(__name__)


class GremlinService:
    def __init__(
        self,
        guard: Guard,
        backend: Any,
        repair: RepairSettings | None = None,
        limits: QueryLimits | None = None,
    ) -> None:
        self.guard = guard
        self.backend = backend
        self.repair_settings = repair or RepairSettings()
        self.limits = limits or QueryLimits()
        self._pool: GuardPool | None = None  # repair candidates are judged here

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
        return cls(guard, backend, repair, QueryLimits.from_config(config.limits))

    def check(self, text: str) -> Verdict:
        return self.guard.check(text, "gremlin")

    def cached(self, text: str) -> Verdict | None:
        """The guard's cached verdict on `text` (no guard work), if any."""
        return self.guard.cached(text, "gremlin")

    def _judge(self, text: str, bindings: dict[str, Any]) -> Verdict:
        return self.check(text)

    async def execute(self, text: str, bindings: Mapping[str, Any]) -> list[Any]:
        """Run a guarded traversal's text (a repair candidate's `to_run`)."""
        try:
            traversal = GremlinQuery.parse(text).traversal
        except (GremlinSyntaxError, GremlinScriptError) as exc:
            raise BackendError(f"the traversal does not parse: {exc}") from exc
        return list(await self.backend.submit(traversal, bindings))

    async def repair(
        self, query: str, results: list[Any], bindings: Mapping[str, Any], question: str | None
    ) -> GremlinRepair:
        """The repair of a traversal that came back empty (see `proxy.repair.gremlin`): each
        candidate judged like a client's traversal, within `[limits]`."""
        ctx = self.guard.ctx
        catalog = gremlin_settings(ctx.gremlin).schema.catalog() or ctx.schema
        if self._pool is None:
            self._pool = GuardPool(1)

        async def check(text: str) -> Verdict:
            assert self._pool is not None
            return await judge(self._judge, text, dict(bindings), self.limits, self._pool)

        return await repair_gremlin(
            query, results, settings=self.repair_settings, catalog=catalog, check=check,
            run=self.execute, bindings=bindings, question=question,
        )  # fmt: skip

    async def run(self, text: str, bindings: Mapping[str, Any]) -> dict[str, Any]:
        """Guard and run one traversal (an empty result repaired); the findings beside the
        results (MCP)."""
        loop = asyncio.get_running_loop()
        verdict = await loop.run_in_executor(None, self.check, text)
        findings = [f.to_dict() for f in verdict.findings]
        if verdict.blocked:
            return {"refused": True, "action": "block", "findings": findings}
        try:
            results = await self.execute(verdict.to_run, bindings)
        except BackendError as exc:
            return {"error": str(exc), "query": verdict.to_run, "findings": findings}
        query = verdict.to_run
        if self.repair_settings.enabled:  # an empty result is repaired as on the front
            repaired = await self.repair(query, results, bindings, None)
            query, results = repaired.query, repaired.results
            findings += [f.to_dict() for f in repaired.findings]
        return {"query": query, "rows": [plain(r) for r in results],
                "findings": findings}  # fmt: skip

    async def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
        await self.backend.close()


def plain(value: Any) -> Any:
    """gremlinpython values as JSON-ready data."""
    if isinstance(value, Vertex):
        return {"id": value.id, "label": value.label}
    if isinstance(value, Edge):
        return {"id": value.id, "label": value.label, "outV": plain(value.outV),
                "inV": plain(value.inV)}  # fmt: skip
    if isinstance(value, GremlinPath):
        return [plain(o) for o in value.objects]
    if isinstance(value, list | tuple | set):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(plain(k)): plain(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


async def _backend(config: Config) -> Any:
    url = str(config.backend["gremlin"])
    if url:
        from proxy.backends.gremlin_remote import RemoteGremlinBackend

        env = str(config.backend["gremlin_password_env"])
        if env and env not in os.environ:
            problem = f"environment variable {env} is not set"
            raise ConfigError("backend.gremlin_password_env", problem)
        return RemoteGremlinBackend(
            url,
            username=str(config.backend["gremlin_user"]),
            password=os.environ.get(env, "") if env else "",
        )
    from proxy.backends.graphersal import GraphersalBackend

    data_dir = Path(str(config.server["data_dir"])).expanduser() / "graphersal"
    data = [str(p) for p in config.backend["gremlin_data"]]
    return await asyncio.to_thread(
        GraphersalBackend.open, data_dir, data, read_only=config.guard.read_only
    )
