"""A remote Gremlin Server as the Gremlin backend (`[backend] gremlin = "ws://host:8182/gremlin"`:
JanusGraph, Neptune, TinkerGraph Server, Cosmos DB — or another query-guard).

Bytecode only: the judged traversal AST is translated to gremlinpython `Bytecode`
(`query_guard.gremlin.bytecode.to_bytecode`, variables as bindings) and submitted with
gremlinpython's own client (GraphBinary, pooled); no script text ever leaves the proxy, so the
server's Groovy engine never sees anything the guard did not judge. The terminal step is
applied to the returned list the way Gremlin Server would (`query_guard.gremlin.terminal`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Mapping
from typing import Any

from gremlin_python.driver.client import Client
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.driver.serializer import GraphBinarySerializersV1
from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import Traverser
from gremlin_python.structure.graph import Graph

from query_guard.backend import BackendError, BackendUnavailable
from query_guard.gremlin import ast
from query_guard.gremlin.bytecode import to_bytecode
from query_guard.gremlin.errors import BytecodeError
from query_guard.gremlin.terminal import UnsupportedTerminal, finish, terminal_of

log = logging.getLogger(__name__)


class RemoteGremlinBackend:
    """`await submit(traversal, bindings)` → a list of results (gremlinpython types)."""

    def __init__(
        self,
        url: str,
        *,
        username: str = "",
        password: str = "",
        traversal_source: str = "g",
        pool_size: int = 4,
    ) -> None:
        self.url = url
        self.description = f"remote Gremlin Server {url}"
        self._client = Client(
            url,
            traversal_source,
            message_serializer=GraphBinarySerializersV1(),
            username=username,
            password=password,
            pool_size=pool_size,
        )
        # gremlinpython blocks: its calls wait in threads of their own, never in the event
        # loop's default pool (password checks, the guard)
        self._threads = concurrent.futures.ThreadPoolExecutor(pool_size, "gremlin-remote")

    async def submit(
        self, traversal: ast.Traversal, bindings: Mapping[str, Any] | None = None
    ) -> list[Any]:
        try:
            terminal = terminal_of(traversal)
            bytecode = to_bytecode(traversal, dict(bindings or {}))
        except (UnsupportedTerminal, BytecodeError) as exc:
            raise BackendError(str(exc), code="Gremlin.Unsupported") from exc
        values = await self._run(bytecode)
        return finish(values, terminal)

    async def _run(self, bytecode: Any) -> list[Any]:
        def call() -> list[Any]:
            return list(self._client.submit(bytecode).all().result())

        try:
            results = await asyncio.get_running_loop().run_in_executor(self._threads, call)
        except GremlinServerError as exc:
            code = f"Gremlin.{exc.status_code}"
            raise BackendError(str(exc.status_message or exc), code=code) from exc
        except (OSError, RuntimeError) as exc:  # connection refused, closed pool
            raise BackendUnavailable(f"{self.url}: {exc}") from exc
        out: list[Any] = []
        for item in results:
            if isinstance(item, Traverser):
                out.extend([item.object] * max(int(item.bulk or 1), 1))
            else:
                out.append(item)
        return out

    async def schema(self) -> dict[str, Any]:
        """Labels, keys and edge endpoints discovered with two bounded traversals."""
        g = GraphTraversalSource(Graph(), None)
        edges = await self._run(
            g.E().limit(10_000).project("a", "t", "b")
            .by(__.out_v().label()).by(__.label()).by(__.in_v().label()).dedup().bytecode
        )  # fmt: skip
        keys = await self._run(
            g.V().limit(10_000).group().by(__.label())
            .by(__.properties().key().dedup().fold()).bytecode
        )  # fmt: skip
        nodes = {str(k): sorted(map(str, v)) for k, v in (keys[0] if keys else {}).items()}
        rels = [{"start": e["a"], "type": e["t"], "end": e["b"]} for e in edges]
        return {"nodes": nodes, "relationships": rels}

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._client.close)
        self._threads.shutdown(wait=False, cancel_futures=True)
