"""THE request path: every front hands its queries to one `Runner` (a `QueryRequest`) and gets
an `Outcome` back; fronts only translate their wire format to the request and the outcome back.

In one place and in this order: the query's language is routed (Cypher, Gremlin, SQL); its
parameters are checked against `[limits]` and the guard runs in its pool within its time
budget (`query_guard.run.guard_pool.judge`: `LIM.PARAMETERS`, `LIM.TIMEOUT`), failing closed when it
raises; the client's access mode is applied (a write in a read transaction is refused); a
block stops here; the backend runs what was judged (with its timeout) and the repair loop
sees failed or empty results (the language's `Execution`); one audit record with one schema
(`query_guard.run.record.KEYS`) goes to the `on_query` hook (the audit log and the metrics). The
result is cut by `[limits]` where it is read (`query_guard.run.cuts`). Every run gets a query
id (`QueryRequest.id`, the audit record's `detail.id`) that the fronts hand back to the client,
and reaches the `on_result` hook once (`query_guard.run.seen`: the experience library)."""

from __future__ import annotations

import dataclasses
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from query_guard.backend import BackendError
from query_guard.clock import elapsed_ms
from query_guard.model import Action, Finding, Severity, Verdict
from query_guard.run.guard_pool import GuardPool, blocked, judge
from query_guard.run.limits import Limits
from query_guard.run.record import OnQuery, new_record
from query_guard.run.request import Outcome, QueryRequest
from query_guard.run.seen import OnResult, Seen
from query_guard.run.status import UNKNOWN_ERROR, block_code

log = logging.getLogger("query_guard.run")

WRITES = ("w", "rw", "s")  # Neo4j's query types that write (data or schema)
GuardCall = Callable[[str, dict[str, Any]], Verdict]  # may have `.cached(text, params)`


class Execution(Protocol):
    """How one language's judged queries run (`query_guard.run.cypher`, `.gremlin`, `.sql`)."""

    async def execute(
        self, req: QueryRequest, verdict: Verdict, judge: Any, record: dict[str, Any]
    ) -> Outcome: ...


class Unserved:
    """The execution of a language with no database behind this proxy: judged, never run."""

    def __init__(self, why: str) -> None:
        self.why = why

    async def execute(
        self, req: QueryRequest, verdict: Verdict, judge: Any, record: dict[str, Any]
    ) -> Outcome:
        return Outcome(verdict, error=BackendError(self.why))


@dataclass(frozen=True)
class Route:
    """One language: its guard and how its judged queries run; `graphs` (Gremlin's traversal
    sources) are named graphs of the language with their own route, picked by the request's
    `database` (None: the language's requests name no graph, `database` goes to the backend)."""

    guard: GuardCall
    execution: Execution
    graphs: Mapping[str, Route] | None = None


class Runner:
    """One per proxy (and per front built on its own, as tests do); shared by every front."""

    def __init__(
        self,
        routes: Mapping[str, Route],
        *,
        limits: Limits | None = None,
        pool: GuardPool | None = None,
        on_query: OnQuery | None = None,
        on_result: OnResult | None = None,
    ) -> None:
        self.routes = dict(routes)
        self.limits = limits or Limits()
        self.pool = pool
        self.on_query = on_query
        self.on_result = on_result
        self._ids = QueryIds()

    def route(self, language: str, database: str | None = None) -> Route | None:
        """The route of `language`, or of its graph named `database` when the language has
        named graphs (None: no such language or graph here)."""
        route = self.routes.get(language)
        if route is None or database is None or route.graphs is None:
            return route
        return route.graphs.get(database)

    async def judge(
        self, language: str, text: str, parameters: dict[str, Any], database: str | None = None
    ) -> Verdict:
        """The guard's verdict within `[limits]` (raises what the guard raises)."""
        route = self.route(language, database)
        if route is None:
            raise KeyError(f"no {language} graph {database!r}")
        prepare = getattr(route.execution, "prepare", None)
        if prepare is not None:
            await prepare()
        return await judge(route.guard, text, parameters, self.limits, self.pool)

    async def run(self, req: QueryRequest) -> Outcome:
        req.id = req.id or self._ids.next()
        record = new_record(req)
        record["detail"]["id"] = req.id
        started = time.perf_counter()
        try:
            outcome = await self._run(req, record, started)
            if outcome.stream is None:  # nothing for a front to read: the run ends here
                self.finished(Seen(req, outcome))
            return outcome
        except BaseException:
            record["error"] = record["error"] or UNKNOWN_ERROR
            raise
        finally:
            self._emit(record)

    async def _run(self, req: QueryRequest, record: dict[str, Any], started: float) -> Outcome:
        route = self.route(req.language, req.database)
        if route is None:
            verdict = Verdict(Action.ALLOW, req.text, (), req.text)
            what = "database" if req.language not in self.routes else f"graph {req.database!r}"
            error = BackendError(f"no {req.language} {what} behind this proxy")
            record.update(action="error", error=error.code)
            return Outcome(verdict, error=error)
        try:
            verdict = await self.judge(req.language, req.text, req.parameters, req.database)
        except Exception:  # fail closed: a query the guard could not judge is not forwarded
            log.exception("%s: the guard raised on a query", req.front)
            record.update(action="error", guard_ms=elapsed_ms(started), error=UNKNOWN_ERROR)
            failed = blocked(req.text, "GUARD.RULE_ERROR", "the query guard failed on this query")
            return Outcome(failed, guard_failed=True)
        if req.read_access and not verdict.blocked and not verdict.explain:
            verdict = read_access(verdict)
        record.update(action=str(verdict.action), codes=verdict.codes,
                      guard_ms=elapsed_ms(started))  # fmt: skip
        if verdict.blocked:
            record["error"] = block_code(verdict)
            return Outcome(verdict)
        record["final_query"] = verdict.to_run
        began = time.perf_counter()

        async def judge_again(text: str, parameters: dict[str, Any]) -> Verdict:
            """Repair candidates pass the same guard within the same limits."""
            return await self.judge(req.language, text, parameters, req.database)

        outcome = await route.execution.execute(req, verdict, judge_again, record)
        codes = record["codes"] if outcome.verdict is verdict else outcome.verdict.codes
        record.update(backend_ms=elapsed_ms(began), final_query=outcome.ran, codes=codes)
        outcome.backend_ms = record["backend_ms"]
        if outcome.error is not None:
            record["error"] = outcome.error.code
        return outcome

    def finished(self, seen: Seen) -> None:
        """A front read a result to its end (or the run had none): tell `on_result`."""
        if self.on_result is None:
            return
        try:
            self.on_result(seen)
        except Exception:  # learning must never break the query path
            log.exception("%s: the on_result hook raised", seen.request.front)

    def refused(self, req: QueryRequest, verdict: Verdict | None, code: str) -> None:
        """The record of a request its front refused before it reached the runner (an
        unreadable request, a bytecode holding a lambda): `verdict` when the refusal is the
        guard's kind (blocked), `code` the status the client got."""
        record = new_record(req)
        if verdict is not None:
            record.update(action=str(verdict.action), codes=verdict.codes)
        else:
            record["action"] = "error"
        record["error"] = code
        self._emit(record)

    def _emit(self, record: dict[str, Any]) -> None:
        if self.on_query is None:
            return
        try:
            self.on_query(record)
        except Exception:  # auditing must never break the query path
            log.exception("%s: the on_query hook raised", record.get("front"))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()


class QueryIds:
    """Query ids: 16 hex digits from the system's random source (as `secrets.token_hex(8)`),
    read 4 KiB at a time (one system call per 512 queries, not one per query)."""

    SIZE, BATCH = 8, 512

    def __init__(self) -> None:
        self._pool = b""
        self._at = 0

    def next(self) -> str:
        at = self._at
        if at >= len(self._pool):
            self._pool, at = secrets.token_bytes(self.SIZE * self.BATCH), 0
        self._at = at + self.SIZE
        return self._pool[at : at + self.SIZE].hex()


def read_access(verdict: Verdict) -> Verdict:
    """`verdict`, refused when its statement writes (the client asked for a read)."""
    if verdict.query_type not in WRITES:
        return verdict
    finding = Finding(
        "SEC.WRITE",
        Severity.ERROR,
        "writing in read access mode is not allowed: the request asked for accessMode Read "
        "and the statement writes. Send a read-only query, or open the transaction with "
        "accessMode Write",
        (0, 0),
        rule="access-mode",
    )
    return dataclasses.replace(verdict, action=Action.BLOCK, findings=(*verdict.findings, finding))
