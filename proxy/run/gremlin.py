"""Gremlin on the Gremlin backend, for the runner: the judged traversal (printed from the
guard's AST, never the client's script) submitted as a traversal, an empty result repaired
(the repair loop with `query_guard.repair.gremlin.GremlinStrategy`). Results come back as
one-column rows (`result`) of gremlinpython values; the Gremlin front sends them as they are,
the MCP tool as JSON. A result that plainly has rows skips the repair loop, as Cypher's does
(`query_guard.run.cypher.plainly_has_rows`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any

import pluggy
from cachetools import LRUCache
from gremlin_python.structure.graph import Edge, Vertex
from gremlin_python.structure.graph import Path as GremlinPath

from query_guard.backend import BackendError
from query_guard.gremlin.errors import GremlinScriptError, GremlinSyntaxError
from query_guard.gremlin.language import GremlinQuery
from query_guard.guard.caches import parse_cache
from query_guard.model import Verdict
from query_guard.repair.gremlin import GremlinStrategy
from query_guard.repair.model import RepairSettings
from query_guard.repair.repairer import Repairer
from query_guard.run.cuts import ListStream
from query_guard.run.cypher import plainly_has_rows
from query_guard.run.request import Outcome, QueryRequest
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.context import GuardContext

RESULT = ["result"]


class GremlinExecution:
    def __init__(
        self,
        backend: Any,
        repair: RepairSettings,
        catalog: Callable[[], SchemaCatalog | None] = lambda: None,
        pm: pluggy.PluginManager | None = None,
        ctx: Callable[[], GuardContext] | None = None,
    ) -> None:
        self.backend = backend
        self.repairer = Repairer(repair, pm, ctx)  # `pm`: the graph's guard_repair hook
        self.catalog = catalog  # the Gremlin graph's own (the repair's flips read it)
        self._parses: LRUCache[str, GremlinQuery] = parse_cache(0)

    def query(self, final: str) -> GremlinQuery:
        """`final` (a verdict's `to_run`) parsed, kept for a repeated traversal."""
        parsed = self._parses.get(final)
        if parsed is None:
            parsed = GremlinQuery.parse(final)
            with contextlib.suppress(ValueError):  # larger than the whole cache
                self._parses[final] = parsed
        return parsed

    def parse(self, text: str) -> GremlinQuery | None:
        try:
            return self.query(text)
        except (GremlinSyntaxError, GremlinScriptError):
            return None

    async def submit(self, text: str, bindings: Mapping[str, Any]) -> ListStream:
        try:
            traversal = self.query(text).traversal
        except (GremlinSyntaxError, GremlinScriptError) as exc:  # the guard's own output
            raise BackendError(f"internal: the judged traversal does not parse: {exc}") from exc
        return ListStream(RESULT, [[r] for r in await self.backend.submit(traversal, bindings)])

    async def execute(
        self, req: QueryRequest, verdict: Verdict, judge: Any, record: dict[str, Any]
    ) -> Outcome:
        final = verdict.to_run
        try:
            first = await self.submit(final, req.parameters)
        except BackendError as exc:
            return Outcome(verdict, error=exc, ran=final)
        if not self.repairer.settings.enabled or await plainly_has_rows(first):
            return Outcome(verdict, first, ran=final)  # rows plainly: the loop changes nothing
        catalog = self.catalog()
        if catalog is None:
            return Outcome(verdict, first, ran=final)

        async def run(text: str) -> ListStream:
            return await self.submit(text, req.parameters)

        async def check(text: str) -> Verdict:
            return await judge(text, req.parameters)  # type: ignore[no-any-return]

        outcome = await self.repairer.run(
            final, strategy=GremlinStrategy(catalog, run, self.parse), check=check,
            parameters=req.parameters, question=req.question, first=first, retry_errors=False,
        )  # fmt: skip
        attempts = [a.to_dict() for a in outcome.attempts] if len(outcome.attempts) > 1 else []
        if attempts:
            record.update(repair=attempts, repaired=outcome.repaired)
        return Outcome(outcome.verdict(verdict), outcome.stream, ran=outcome.query,
                       attempts=attempts)  # fmt: skip


def plain(value: Any) -> Any:
    """gremlinpython values as JSON-ready data (HTTP, MCP)."""
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
