"""The Gremlin side of one `ProxyServer`: its backend (a remote Gremlin Server, bytecode only,
or the embedded graphersal), a guard with that graph's own catalog, and whole-result runs for
the MCP tool `read_gremlin`. The Gremlin front (`proxy.frontends.gremlin_ws`) uses the same
guard and backend."""

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
from proxy.model import Verdict
from proxy.pipeline import Guard, build_guard
from proxy.schema import SchemaCatalog

log = logging.getLogger(__name__)


class GremlinService:
    def __init__(self, guard: Guard, backend: Any) -> None:
        self.guard = guard
        self.backend = backend

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
        return cls(guard, backend)

    def check(self, text: str) -> Verdict:
        return self.guard.check(text, "gremlin")

    async def run(self, text: str, bindings: Mapping[str, Any]) -> dict[str, Any]:
        """Guard and run one traversal; the verdict's findings beside the results (MCP)."""
        loop = asyncio.get_running_loop()
        verdict = await loop.run_in_executor(None, self.check, text)
        findings = [f.to_dict() for f in verdict.findings]
        if verdict.blocked:
            return {"refused": True, "action": "block", "findings": findings}
        try:
            traversal = GremlinQuery.parse(verdict.to_run).traversal
            results = await self.backend.submit(traversal, bindings)
        except (GremlinSyntaxError, GremlinScriptError, BackendError) as exc:
            return {"error": str(exc), "query": verdict.to_run, "findings": findings}
        return {"query": verdict.to_run, "rows": [plain(r) for r in results],
                "findings": findings}  # fmt: skip

    async def close(self) -> None:
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
