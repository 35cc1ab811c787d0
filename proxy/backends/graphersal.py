"""The embedded Gremlin backend: graphersal (a Rust Gremlin engine in-process, no JVM).

A guarded traversal AST is printed in graphersal's dialect (`proxy.gremlin.graphersal_dialect`)
and executed in a worker thread (graphersal releases the GIL), under graphersal's read-only
access policy when `[guard] read_only` (a second line of defence behind `gremlin_read_only`)
and an evaluation timeout. Results are converted to gremlinpython's types (Vertex, Edge) so the
Gremlin front's serializers carry them as Gremlin Server would.

Data: the GraphSON files named by `[backend] gremlin_data`, else the IT-support demo graph
(`proxy.data.it_support`, SEGRA's case graph); kept as a snapshot under
`<data_dir>/graphersal/graph.gsnap` after the first start.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import graphersal as gs
from gremlin_python.structure.graph import Edge, Vertex

from proxy.backends.base import BackendError
from proxy.gremlin import ast
from proxy.gremlin.graphersal_dialect import Rendered, Unsupported, render
from proxy.gremlin.terminal import finish

log = logging.getLogger(__name__)

SNAPSHOT = "graph.gsnap"


class GremlinBackendError(BackendError):
    """A traversal the engine refused or failed (status 597 / 500 at the front)."""


class GraphersalBackend:
    """`await submit(traversal, bindings)` → a list of results (gremlinpython types)."""

    def __init__(
        self,
        graph: gs.Graph,
        *,
        read_only: bool = True,
        timeout_ms: int = 30_000,
        workers: int = 4,
        description: str = "graphersal",
    ) -> None:
        self.graph = graph
        self.read_only = read_only
        self.timeout_ms = timeout_ms
        self.description = description
        base = gs.AccessPolicy.read_only() if read_only else gs.AccessPolicy.allow_all()
        # the evaluation timeout is an option the proxy itself sets on every traversal
        self._policy = base.allow("update", "option")
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="graphersal")

    @classmethod
    def open(
        cls, data_dir: Path | None, data: Sequence[str] = (), **options: Any
    ) -> GraphersalBackend:
        """Load the snapshot under `data_dir`, else the GraphSON files, else the IT-support
        demo graph (and write the snapshot for the next start)."""
        snapshot = data_dir / SNAPSHOT if data_dir is not None else None
        if snapshot is not None and snapshot.exists():
            graph = gs.Graph.load(str(snapshot))
            return cls(graph, description=f"graphersal {snapshot}", **options)
        if data:
            what = ", ".join(str(p) for p in data)
        else:
            from proxy.data import it_support

            folder = data_dir if data_dir is not None else Path(tempfile.mkdtemp())
            data = [str(it_support.write(folder / "it-support.json"))]
            what = "IT-support demo graph"
        graph = gs.Graph()
        for path in data:
            with warnings.catch_warnings(record=True) as caught:
                graph.import_graphson(str(path))
            for w in caught:
                log.warning("%s: %s", path, w.message)
        if snapshot is not None:
            snapshot.parent.mkdir(parents=True, exist_ok=True)
            graph.save(str(snapshot))
        return cls(graph, description=f"graphersal ({what})", **options)

    async def submit(
        self, traversal: ast.Traversal, bindings: Mapping[str, Any] | None = None
    ) -> list[Any]:
        try:
            rendered = render(traversal)
        except Unsupported as exc:
            raise GremlinBackendError(str(exc), code="Gremlin.Unsupported") from exc
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._run, rendered, dict(bindings or {}))

    def _run(self, rendered: Rendered, bindings: dict[str, Any]) -> list[Any]:
        script = f'g.with("evaluationTimeout", {self.timeout_ms}).' + rendered.script[2:]
        try:
            values = self.graph.execute(script, bindings, policy=self._policy)
        except gs.PermissionDeniedError as exc:
            raise GremlinBackendError(
                f"the embedded engine refused a write: {_first_line(exc)}", code="SEC.WRITE"
            ) from exc
        except gs.GraphersalError as exc:
            raise GremlinBackendError(_first_line(exc), code="Gremlin.Evaluation") from exc
        return finish([to_gremlin(v) for v in values or ()], rendered.terminal)

    async def schema(self) -> dict[str, Any]:
        """The graph's labels, property keys and edge endpoints in the catalog's JSON shape
        (DESIGN §3), from graphersal's schema inference: the Gremlin rules' schema."""
        loop = asyncio.get_running_loop()
        inferred = await loop.run_in_executor(self._pool, self.graph.infer_schema)
        nodes = {
            label: sorted((spec.get("schema") or {}).get("properties") or {})
            for label, spec in (inferred.get("vertices") or {}).items()
        }
        rels = [
            {
                "start": c["from"],
                "type": label,
                "end": c["to"],
                "properties": sorted((spec.get("schema") or {}).get("properties") or {}),
            }
            for label, spec in (inferred.get("edges") or {}).items()
            for c in spec.get("connections") or ()
        ]
        return {"nodes": nodes, "relationships": rels}

    async def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def to_gremlin(value: Any) -> Any:
    """graphersal's result values as gremlinpython's structure types."""
    if isinstance(value, gs.Vertex):
        return Vertex(value.id, value.label)
    if isinstance(value, gs.Edge):
        return Edge(value.id, to_gremlin(value.out_v), value.label, to_gremlin(value.in_v))
    if isinstance(value, list):
        return [to_gremlin(v) for v in value]
    if isinstance(value, dict):
        return {_key(k): to_gremlin(v) for k, v in value.items()}
    return value


def _key(key: Any) -> Any:
    converted = to_gremlin(key)
    return converted if not isinstance(converted, list) else tuple(converted)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().split("\n")[0]
