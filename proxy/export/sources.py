"""Reading a whole graph in pages of `[export] page_size`, so memory stays bounded by one
page: Cypher backends (FalkorDB, Bolt servers such as Neo4j and ArcadeDB) by keyset on
`id()` — `MATCH (n:L) WHERE id(n) > $after … ORDER BY id(n) LIMIT $page` — and the embedded
Gremlin engine (graphersal) by `g.V().hasLabel(L).has(T.id, P.gt(after))…order().by(T.id)`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any, Protocol

import graphersal as gs

from query_guard.backend import Backend, collect
from query_guard.schema.discovery import discover_schema, quote_name

Node = tuple[Any, list[str], dict[str, Any]]  # id, labels, properties
Edge = tuple[Any, Any, list[str], dict[str, Any]]  # start id, end id, labels of both, properties


class Source(Protocol):
    """One graph to export."""

    async def labels(self) -> list[str]: ...

    async def types(self) -> list[str]: ...

    def nodes(self, label: str) -> AsyncIterator[list[Node]]: ...

    def edges(self, rel_type: str) -> AsyncIterator[list[Edge]]: ...

    async def schema(self) -> dict[str, Any]: ...


class _OnDatabase:
    """A backend whose every query runs on one database (for schema discovery)."""

    def __init__(self, backend: Backend, database: str | None) -> None:
        self.backend, self.database = backend, database

    async def run(self, query: str, parameters: dict[str, Any], database: str | None = None
                  ) -> Any:  # fmt: skip
        return await self.backend.run(query, parameters, self.database)


class CypherSource:
    def __init__(self, backend: Backend, database: str | None, page: int) -> None:
        self.backend, self.database, self.page = backend, database, page

    async def _rows(self, query: str, parameters: dict[str, Any]) -> list[list[Any]]:
        return await collect(await self.backend.run(query, parameters, self.database))

    async def labels(self) -> list[str]:
        return sorted(str(r[0]) for r in await self._rows("CALL db.labels()", {}))

    async def types(self) -> list[str]:
        return sorted(str(r[0]) for r in await self._rows("CALL db.relationshipTypes()", {}))

    async def _pages(self, match: str, key: str, returns: str) -> AsyncIterator[list[list[Any]]]:
        after: Any = None
        while True:
            where = "" if after is None else f" WHERE id({key}) > $after"
            query = (f"MATCH {match}{where} RETURN id({key}), {returns} "
                     f"ORDER BY id({key}) LIMIT $page")  # fmt: skip
            rows = await self._rows(query, {"after": after, "page": self.page})
            if not rows:
                return
            yield rows
            after = rows[-1][0]
            if len(rows) < self.page:
                return

    async def nodes(self, label: str) -> AsyncIterator[list[Node]]:
        async for rows in self._pages(f"(n:{quote_name(label)})", "n", "labels(n), properties(n)"):
            yield [(r[0], list(r[1]), dict(r[2])) for r in rows]

    async def edges(self, rel_type: str) -> AsyncIterator[list[Edge]]:
        match = f"(a)-[r:{quote_name(rel_type)}]->(b)"
        returns = "id(a), id(b), labels(a) + labels(b), properties(r)"
        async for rows in self._pages(match, "r", returns):
            yield [(r[1], r[2], list(r[3]), dict(r[4])) for r in rows]

    async def schema(self) -> dict[str, Any]:
        return await discover_schema(_OnDatabase(self.backend, self.database))  # type: ignore[arg-type]


class GremlinSource:
    """The embedded graphersal graph (`GraphersalBackend`), read-only."""

    def __init__(self, backend: Any, page: int) -> None:
        self.backend, self.page = backend, page

    async def _run(self, script: str, bindings: dict[str, Any]) -> list[Any]:
        graph, policy = self.backend.graph, gs.AccessPolicy.read_only()

        def go() -> list[Any]:
            return list(graph.execute(script, bindings, policy=policy) or ())

        return await asyncio.get_running_loop().run_in_executor(None, go)

    async def labels(self) -> list[str]:
        return sorted(map(str, await self._run("g.V().label().dedup().to_list()", {})))

    async def types(self) -> list[str]:
        return sorted(map(str, await self._run("g.E().label().dedup().to_list()", {})))

    async def _pages(self, start: str, label: str, project: str) -> AsyncIterator[list[Any]]:
        after: Any = None
        while True:
            seek = "" if after is None else ".has(T.id, P.gt(after))"
            script = (f"{start}.hasLabel({json.dumps(label)}){seek}.order().by(T.id)"
                      f".limit({self.page}){project}.to_list()")  # fmt: skip
            rows = await self._run(script, {} if after is None else {"after": after})
            if not rows:
                return
            yield rows
            after = rows[-1]["id"]
            if len(rows) < self.page:
                return

    async def nodes(self, label: str) -> AsyncIterator[list[Node]]:
        project = ('.project("id", "props").by(T.id)'
                   ".by(__.valueMap().by(__.unfold()))")  # fmt: skip
        async for rows in self._pages("g.V()", label, project):
            yield [(r["id"], [label], dict(r["props"])) for r in rows]

    async def edges(self, rel_type: str) -> AsyncIterator[list[Edge]]:
        project = ('.project("id", "out", "in", "labels", "props").by(T.id)'
                   ".by(__.outV().id()).by(__.inV().id())"
                   ".by(__.bothV().label().fold()).by(__.valueMap().by(__.unfold()))")  # fmt: skip
        async for rows in self._pages("g.E()", rel_type, project):
            yield [(r["out"], r["in"], list(r["labels"]), dict(r["props"])) for r in rows]

    async def schema(self) -> dict[str, Any]:
        return dict(await self.backend.schema())
