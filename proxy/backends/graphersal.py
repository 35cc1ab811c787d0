"""The embedded Gremlin backend: graphersal (a Rust Gremlin engine in-process, no JVM).

A guarded traversal AST is printed in graphersal's dialect
(`query_guard.gremlin.graphersal_dialect`) and executed in a worker thread (graphersal
releases the GIL) — or on the event loop when its runs are quicker than the hand-off
(`INLINE_BELOW`), together with the other quick traversals of the same loop turn
(`query_guard.backends.graphersal_batch`) —, under graphersal's read-only access policy when
`[guard] read_only` (a second line of defence behind `gremlin_read_only`) and an evaluation
timeout. Results are converted to gremlinpython's types (Vertex, Edge) so the Gremlin front's
serializers carry them as Gremlin Server would.

Data: the GraphSON files named by `[backend] gremlin_data`, else the IT-support demo graph
(`query_guard.data.it_support`, SEGRA's case graph); kept as a snapshot under
`<data_dir>/graphersal/graph.gsnap` after the first start.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import tempfile
import time
import uuid
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import graphersal as gs
from gremlin_python.structure.graph import Edge, Vertex
from gremlin_python.structure.io.util import HashableDict

from query_guard.backend import BackendError
from query_guard.backends.graphersal_batch import LoopBatch, batchable
from query_guard.backends.graphersal_json import (
    NON_STRING_KEYS as _NON_STRING_KEYS,
)
from query_guard.backends.graphersal_json import JsonEdge, JsonVertex, from_json
from query_guard.backends.limits import timeout_error
from query_guard.gremlin import ast
from query_guard.gremlin.graphersal_dialect import Rendered, Unsupported, render
from query_guard.gremlin.result_shape import id_keys, reshape, shape_of, with_ids
from query_guard.gremlin.terminal import finish

log = logging.getLogger(__name__)

SNAPSHOT = "graph.gsnap"
INT_IDS = "graph.int-ids"  # beside the snapshot: the GraphSON's ids were integers
# binding values graphersal takes as parameters; others are printed into the script
_PARAMETER_TYPES = (int, float, str, bool, type(None), uuid.UUID, dt.datetime, dt.date)
# A read-only traversal whose last run took less than THREAD_QUICK seconds in a worker thread
# (whose time includes waiting for the GIL back while the loop is busy) runs on the event
# loop: handing it to a worker thread (a queue, two thread switches, the GIL back) costs more
# than running it. It stays there until SLOW_RUNS runs in a row took INLINE_BELOW seconds or
# more (one slow run is more often the machine's other work than the traversal's). On the
# loop it gets INLINE_TIMEOUT_MS; past that it runs again in a thread with the full timeout
# (a read may run twice).
INLINE_BELOW = 0.001
THREAD_QUICK = 0.005
SLOW_RUNS = 3
INLINE_TIMEOUT_MS = 20
_REMEMBERED = 4096  # traversal texts whose last duration is kept


class _TooSlow(Exception):
    """An inline run passed INLINE_TIMEOUT_MS."""


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
        int_ids: bool = False,
    ) -> None:
        self.graph = graph
        # graphersal keeps integer ids (TinkerPop's test graphs) as strings: give them back
        # to clients as the integers the GraphSON had
        self.int_ids = int_ids
        self.read_only = read_only
        self.timeout_ms = timeout_ms
        self.description = description
        base = gs.AccessPolicy.read_only() if read_only else gs.AccessPolicy.allow_all()
        # the evaluation timeout is an option the proxy itself sets on every traversal
        self._policy = base.allow("update", "option")
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="graphersal")
        self._slow: dict[str, int] = {}  # script -> its slow runs in a row (SLOW_RUNS: thread)
        self._batch = LoopBatch(self._run_batch, INLINE_TIMEOUT_MS)
        self._renders: dict[int, tuple[ast.Traversal, Rendered, Any]] = {}  # by id(traversal)

    @classmethod
    def open(
        cls, data_dir: Path | None, data: Sequence[str] = (), **options: Any
    ) -> GraphersalBackend:
        """Load the snapshot under `data_dir`, else the GraphSON files, else the IT-support
        demo graph (and write the snapshot for the next start)."""
        snapshot = data_dir / SNAPSHOT if data_dir is not None else None
        marker = data_dir / INT_IDS if data_dir is not None else None
        if snapshot is not None and snapshot.exists():
            graph = gs.Graph.load(str(snapshot))
            int_ids = marker is not None and marker.exists()
            return cls(graph, description=f"graphersal {snapshot}", int_ids=int_ids, **options)
        if data:
            what = ", ".join(str(p) for p in data)
        else:
            from query_guard.data import it_support

            folder = data_dir if data_dir is not None else Path(tempfile.mkdtemp())
            data = [str(it_support.write(folder / "it-support.json"))]
            what = "IT-support demo graph"
        graph = gs.Graph()
        for path in data:
            with warnings.catch_warnings(record=True) as caught:
                graph.import_graphson(str(path))
            for w in caught:
                log.warning("%s: %s", path, w.message)
        int_ids = bool(data) and all(_integer_ids(Path(p)) for p in data)
        if snapshot is not None and marker is not None:
            snapshot.parent.mkdir(parents=True, exist_ok=True)
            graph.save(str(snapshot))
            if int_ids:
                marker.write_text("GraphSON ids were integers\n")
        return cls(graph, description=f"graphersal ({what})", int_ids=int_ids, **options)

    async def submit(
        self, traversal: ast.Traversal, bindings: Mapping[str, Any] | None = None
    ) -> list[Any]:
        params = {k: v for k, v in (bindings or {}).items() if isinstance(v, _PARAMETER_TYPES)}
        inline = {k: v for k, v in (bindings or {}).items() if k not in params}
        rendered, shape = self._rendered(traversal, inline)
        values = await self._execute(rendered, params)
        values = [reshape(to_gremlin(v, self.int_ids), shape, self._ident) for v in values]
        if self.int_ids and shape is None:
            keys = id_keys(traversal)
            values = [with_ids(v, keys, self._ident) for v in values]
        return finish(values, rendered.terminal)

    def _rendered(self, traversal: ast.Traversal, inline: dict[str, Any]) -> tuple[Rendered, Any]:
        """The traversal in graphersal's dialect and its result shape; kept for a traversal
        object seen before (the runner's parse cache hands a repeated one out again)."""
        kept = None if inline else self._renders.get(id(traversal))
        if kept is not None and kept[0] is traversal:
            return kept[1], kept[2]
        try:
            rendered = render(traversal, inline)
        except Unsupported as exc:
            raise GremlinBackendError(str(exc), code="Gremlin.Unsupported") from exc
        shape = shape_of(traversal)
        if not inline:
            if len(self._renders) >= _REMEMBERED:
                self._renders.clear()
            self._renders[id(traversal)] = (traversal, rendered, shape)
        return rendered, shape

    def _ident(self, value: Any) -> Any:
        return _id(value, self.int_ids)

    async def _execute(self, rendered: Rendered, params: dict[str, Any]) -> list[Any]:
        """The traversal's values: on the loop when it is known to be quick (with the other
        quick ones of this loop turn), else in a worker thread."""
        key = rendered.script
        if (
            self.read_only
            and self.timeout_ms > INLINE_TIMEOUT_MS
            and (self._slow.get(key, SLOW_RUNS) < SLOW_RUNS)
        ):
            if batchable(key, params):
                values, share = await self._batch.join(
                    key[2:], params, lambda: self._inline(rendered, params)
                )
                if share is not None:
                    self._seen(key, share < INLINE_BELOW)
            else:
                values = self._inline(rendered, params)
            if values is not None:
                return values  # type: ignore[no-any-return]
        loop = asyncio.get_running_loop()
        values, took = await loop.run_in_executor(self._pool, self._timed, rendered, params)
        if len(self._slow) >= _REMEMBERED:
            self._slow.clear()
        self._slow[key] = 0 if took < THREAD_QUICK else SLOW_RUNS
        return values

    def _inline(self, rendered: Rendered, params: dict[str, Any]) -> list[Any] | None:
        """The values of a run on the loop (None: it passed INLINE_TIMEOUT_MS)."""
        started = time.perf_counter()
        try:
            values = self._run(rendered, params, INLINE_TIMEOUT_MS)
        except _TooSlow:
            self._slow[rendered.script] = SLOW_RUNS
            return None
        self._seen(rendered.script, time.perf_counter() - started < INLINE_BELOW)
        return values

    def _seen(self, key: str, quick: bool) -> None:
        slow = self._slow.get(key)
        if slow is not None:  # (forgotten meanwhile: the next run goes to a thread)
            self._slow[key] = 0 if quick else slow + 1

    def _run_batch(self, script: str, params: dict[str, Any]) -> Any:
        return self.graph.execute(script, params, policy=self._policy)

    def _timed(self, rendered: Rendered, bindings: dict[str, Any]) -> tuple[list[Any], float]:
        started = time.perf_counter()
        values = self._run(rendered, bindings)
        return values, time.perf_counter() - started

    def _run(self, rendered: Rendered, bindings: dict[str, Any], inline_ms: int = 0) -> list[Any]:
        body = rendered.script[2:]
        timeout_ms = inline_ms or self.timeout_ms
        script = f'g.with("evaluationTimeout", {timeout_ms}).' + body
        try:
            try:
                return list(self.graph.execute(script, bindings, policy=self._policy) or ())
            except gs.GraphersalError as exc:
                if _NON_STRING_KEYS not in str(exc):
                    raise
            # maps with non-string keys only come back as graphersal's JSON rendering
            as_json = script.removesuffix(".to_list()") + ".to_json().to_string()"
            text = self.graph.execute(as_json, bindings, policy=self._policy)
            return [from_json(v) for v in json.loads(text)]
        except gs.PermissionDeniedError as exc:
            raise GremlinBackendError(
                f"the embedded engine refused a write: {_first_line(exc)}", code="SEC.WRITE"
            ) from exc
        except gs.GraphersalError as exc:
            if "exceeded evaluationTimeout" in str(exc):  # its own evaluation timeout fired
                if inline_ms:
                    raise _TooSlow from exc
                error = timeout_error(self.timeout_ms, f"graphersal: {_first_line(exc)}")
                raise GremlinBackendError(error.message, code=error.code) from exc
            raise GremlinBackendError(_first_line(exc), code="Gremlin.Evaluation") from exc

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


def to_gremlin(value: Any, int_ids: bool = False) -> Any:
    """graphersal's result values as gremlinpython's structure types; a vector (no Gremlin
    type) as its list of numbers, a duration with months (`Interval`, which TinkerPop's
    Duration cannot hold) as its ISO 8601 text."""
    if isinstance(value, gs.Vertex | JsonVertex):
        return Vertex(_id(value.id, int_ids), value.label)
    if isinstance(value, gs.Edge | JsonEdge):
        out_v, in_v = to_gremlin(value.out_v, int_ids), to_gremlin(value.in_v, int_ids)
        return Edge(_id(value.id, int_ids), out_v, value.label, in_v)
    if isinstance(value, list):
        return [to_gremlin(v, int_ids) for v in value]
    if isinstance(value, dict):
        return {_key(k, int_ids): to_gremlin(v, int_ids) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return {_key(v, int_ids) for v in value}
    if isinstance(value, gs.Vector):
        return value.tolist()
    if isinstance(value, gs.Interval):
        return value.to_iso()
    return value


def _key(key: Any, int_ids: bool) -> Any:
    converted = to_gremlin(key, int_ids)
    if isinstance(converted, list):
        return tuple(converted)
    if isinstance(converted, dict):
        return HashableDict.of(converted)
    return converted


def _id(value: Any, int_ids: bool) -> Any:
    if int_ids and isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return value


def _integer_ids(path: Path) -> bool:
    """Are the vertex ids of a GraphSON file integers (`g:Int32`/`g:Int64`)? (first vertex)"""
    try:
        with path.open(encoding="utf-8") as fp:
            first = json.loads(fp.readline())
    except (OSError, ValueError):
        return False
    ident = first.get("id") if isinstance(first, dict) else None
    return isinstance(ident, dict) and ident.get("@type") in ("g:Int32", "g:Int64")


def _first_line(exc: Exception) -> str:
    return str(exc).strip().split("\n")[0]
