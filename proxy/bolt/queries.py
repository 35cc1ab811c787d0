"""RUN, PULL and DISCARD for a `BoltSession`: every query passes the guard, runs on the
backend (through the repair loop when that is on), and its records stream to the client —
relayed undecoded when the backend offers them so (`raw_source`)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from proxy.backends.base import BackendError, BackendUnavailable, ResultStream
from proxy.bolt import diagnostics as diag
from proxy.bolt import messages as m
from proxy.bolt.state import State
from proxy.bolt.streaming import OpenResult, raw_source
from proxy.explain import answer_explain
from proxy.model import Action, Finding, Verdict
from proxy.repair.candidates import is_blank
from proxy.repair.repairer import PEEK

if TYPE_CHECKING:
    from proxy.backends.base import Transaction
    from proxy.bolt.session import NotificationFilter, ServerContext
    from proxy.bolt.streaming import ResultPump
    from proxy.bolt.values import ValueCodec

log = logging.getLogger("proxy.bolt")

PROXY_ANSWERED = "COMPAT.PROCEDURE"  # the finding on a proxy-answered procedure's rewrite


class QueryHandling:
    """The query half of the session state machine (mixed into `BoltSession`)."""

    if TYPE_CHECKING:
        ctx: ServerContext
        version: tuple[int, int]
        codec: ValueCodec
        client: str
        connection_id: str
        pump: ResultPump
        _state: State
        _tx: Transaction | None
        _tx_db: str | None
        _tx_metadata: dict[str, Any] | None
        _tx_filter: NotificationFilter
        _filter: NotificationFilter
        _results: dict[int, OpenResult]
        _next_qid: int
        _last_qid: int

        def write(self, data: bytes | bytearray) -> None: ...
        def success(self, metadata: dict[str, Any] | None = None) -> None: ...
        def fail(self, code: str, message: str) -> None: ...
        def _enter_failed(self) -> None: ...
        def _database(self, extra: dict[str, Any]) -> str | None: ...
        async def _abort_tx(self) -> None: ...
        async def _backend_failed(self, exc: BackendError) -> None: ...

    async def _on_run(self, query: str, parameters: dict[str, Any], extra: dict[str, Any]) -> None:
        in_tx = self._state in (State.TX_READY, State.TX_STREAMING)
        database = self._tx_db if in_tx else self._database(extra)
        event: dict[str, Any] = {
            "client": self.client,
            "connection_id": self.connection_id,
            "bolt_version": f"{self.version[0]}.{self.version[1]}",
            "query": query,
            "database": database,
            "in_transaction": in_tx,
            # clients may attach the natural-language question here (DESIGN §6)
            "tx_metadata": self._tx_metadata if in_tx else extra.get("tx_metadata"),
            "backend_ms": None,
            "error": None,
        }
        try:
            stream, verdict = await self._guarded_run(
                query, parameters, database, in_tx, event, extra.get("tx_metadata")
            )
        except Exception:
            event["error"] = event["error"] or diag.UNKNOWN_ERROR
            raise
        finally:
            self._emit(event)
        if stream is None or verdict is None:
            return
        filters = (self._tx_filter if in_tx else self._filter).updated(extra)
        qid = self._next_qid if in_tx else -1
        self._next_qid += in_tx
        self._results[qid] = OpenResult(
            stream, list(stream.keys), qid, verdict, filters, database, in_tx,
            raw=raw_source(stream, self.version),
        )  # fmt: skip
        self._last_qid = qid
        meta: dict[str, Any] = {"fields": list(stream.keys), "t_first": event["backend_ms"] or 0}
        if in_tx:
            meta["qid"] = qid
        self._state = State.TX_STREAMING if in_tx else State.STREAMING
        self.success(meta)

    async def _guarded_run(
        self,
        query: str,
        parameters: dict[str, Any],
        database: str | None,
        in_tx: bool,
        event: dict[str, Any],
        extra_metadata: Any = None,
    ) -> tuple[ResultStream | None, Verdict | None]:
        started = time.perf_counter()
        try:
            verdict = await self.ctx.judge(query, parameters)  # off the loop, within [limits]
        except Exception:
            # Fail closed: a query the guard could not judge is not forwarded.
            log.exception("bolt %s: guard raised", self.connection_id)
            event.update(action="error", final_query=None, codes=[], guard_ms=_ms(started))
            event["error"] = diag.UNKNOWN_ERROR
            await self._abort_tx()
            self.fail(diag.UNKNOWN_ERROR, "the query guard failed on this query")
            return None, None
        final = verdict.query if verdict.action is Action.REWRITE else query
        # the database runs the guard's canonical emission of what it judged, never raw text
        to_run = verdict.to_run if verdict.forward else final
        event.update(
            action=str(verdict.action),
            final_query=None if verdict.blocked else to_run,
            codes=verdict.codes,
            guard_ms=_ms(started),
        )
        if verdict.blocked:
            failure = diag.block_failure(verdict, self.version)
            event["error"] = failure.get("code") or failure.get("neo4j_code")
            await self._abort_tx()
            self.write(m.failure(failure, self.codec))
            self._enter_failed()
            return None, None
        started = time.perf_counter()
        if verdict.explain:  # answered here, never executed (and never repaired)
            answer = await answer_explain(self.ctx.backend, verdict, parameters, database)
            event.update(backend_ms=_ms(started), explain=True)
            return answer, verdict
        tx = self._tx if in_tx else None

        async def execute(text: str, params: dict[str, Any]) -> ResultStream:
            if tx is not None:
                return await tx.run(text, params)
            return await self.ctx.backend.run(text, params, database)

        repairs = _repairable(verdict)
        try:
            stream = await execute(to_run, parameters)
        except BackendError as exc:
            if not (repairs and self._repairs(final, in_tx, exc)):
                event.update(backend_ms=_ms(started), error=exc.code)
                await self._backend_failed(exc)
                return None, None
            stream = exc
        if not isinstance(stream, BackendError) and not (
            repairs and self._repairs(final, in_tx, None)
        ):
            event["backend_ms"] = _ms(started)
            return stream, verdict
        if not isinstance(stream, BackendError):
            try:
                plain = await _plainly_has_rows(stream)
            except BackendError as exc:  # the loop judges the error, as if it had peeked
                stream, plain = exc, False
            if plain:
                event["backend_ms"] = _ms(started)
                return stream, verdict
        assert self.ctx.repairer is not None
        outcome = await self.ctx.repairer.run(
            final,
            execute=execute,
            check=lambda text: self.ctx.judge(text, parameters),
            parameters=parameters,
            question=_question(self._tx_metadata if in_tx else extra_metadata),
            first=stream,
            retry_errors=not in_tx,
            forward=to_run,
        )
        event.update(backend_ms=_ms(started), final_query=outcome.query)
        if len(outcome.attempts) > 1:
            event["repair"] = [a.to_dict() for a in outcome.attempts]
        if outcome.error is not None or outcome.stream is None:
            exc = _with_suggestions(
                outcome.error or BackendError("the repair loop produced no result"),
                outcome.findings,
            )
            event["error"] = exc.code
            await self._backend_failed(exc)
            return None, None
        if len(outcome.attempts) == 1 and _rewound(stream):
            # the loop only peeked at the client's own result: relay it from its first record
            return stream, verdict  # type: ignore[return-value]
        return outcome.stream, outcome.verdict(verdict)

    def _repairs(self, query: str, in_tx: bool, error: BackendError | None) -> bool:
        """Does the repair loop see this result? (It retries reads only, and only when they
        fail or come back empty; it parses the query only then.) Inside an explicit
        transaction only empty results are repaired: a failed statement ends the transaction
        on Neo4j, so a retry there could not run (FalkorDB would allow it; one rule for all)."""
        repairer = self.ctx.repairer
        if repairer is None or not repairer.settings.enabled:
            return False
        return error is None or not (in_tx or isinstance(error, BackendUnavailable))

    def _emit(self, event: dict[str, Any]) -> None:
        if self.ctx.on_query is None:
            return
        try:
            self.ctx.on_query(event)
        except Exception:  # auditing must never break the query path
            log.exception("bolt %s: on_query hook raised", self.connection_id)

    def _result_for(self, extra: dict[str, Any]) -> OpenResult | None:
        qid = extra.get("qid", -1)
        if not isinstance(qid, int) or isinstance(qid, bool):
            return None
        if qid == -1:
            qid = self._last_qid
        return self._results.get(qid)

    async def _on_pull(self, extra: dict[str, Any]) -> None:
        await self._stream(extra, discard=False)

    async def _on_discard(self, extra: dict[str, Any]) -> None:
        await self._stream(extra, discard=True)

    async def _stream(self, extra: dict[str, Any], discard: bool) -> None:
        n = extra.get("n", -1)
        if type(n) is not int or not (n > 0 or n == -1):
            self.fail(diag.REQUEST_INVALID, f"n must be a positive integer or -1, not {n!r}")
            return
        result = self._result_for(extra)
        if result is None:
            self.fail(diag.REQUEST_INVALID, f"no open result for qid {extra.get('qid', -1)}")
            return
        done = await self.pump.run(result, n, discard)
        if done is None:  # interrupted by a RESET: that RESET's handling cleans up
            self.write(m.IGNORED_MESSAGE)
            return
        if done:
            self._results.pop(result.qid, None)
            if result.in_tx:
                self._state = State.TX_STREAMING if self._results else State.TX_READY
            else:
                self._state = State.READY


def _repairable(verdict: Verdict) -> bool:
    """A proxy-answered procedure's rows are the answer: never repaired (DESIGN §6)."""
    return PROXY_ANSWERED not in verdict.codes


def _with_suggestions(exc: BackendError, findings: list[Finding]) -> BackendError:
    """A failure carries no notifications: a suggested repair goes into its message."""
    offers = [f.message for f in findings if f.code == "REPAIR.SUGGESTED"]
    if not offers:
        return exc
    return BackendError(exc.message + "\nREPAIR.SUGGESTED: " + "\n".join(offers), exc.code)


def _question(metadata: Any) -> str | None:
    """The natural-language question a client attached as tx metadata (DESIGN §6)."""
    question = metadata.get("question") if isinstance(metadata, dict) else None
    return question if isinstance(question, str) and question.strip() else None


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


async def _plainly_has_rows(stream: ResultStream) -> bool:
    """The repair loop's judgement "rows", reached without it for a result that plainly has
    some: two records, or one with no blank value (DESIGN §6: "empty" is no rows, or one row
    whose aggregates are all 0, null or empty). Only for streams that can put their peeked
    records back (`rewind`), so they are still relayed raw; anything else goes to the loop."""
    rewind = getattr(stream, "rewind", None)
    if rewind is None:
        return False
    head = await stream.fetch(PEEK)
    rewind()
    if len(head) >= PEEK:
        return True
    return len(head) == 1 and not any(is_blank(v) for v in head[0])


def _rewound(stream: Any) -> bool:
    rewind = getattr(stream, "rewind", None)
    return rewind is not None and not isinstance(stream, BackendError) and rewind()
