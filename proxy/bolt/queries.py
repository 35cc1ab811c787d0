"""RUN, PULL and DISCARD for one Bolt connection (`QueryHandler`, given the connection's
`Conversation`): every query passes the guard, runs on the backend (through the repair loop
when that is on), and its records stream to the client — relayed undecoded when the backend
offers them so (`raw_source`).

A RUN goes through named steps: `_judge` (the guard, failing closed), `_refused` (a BLOCK),
`_explain` (answered here), `_first_attempt` (the guarded text on the backend), `_stands`
(does the result go out as it is?), `_repair` (the repair loop), then `_open` (the result
waits for PULL)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from proxy.backends.base import (
    Backend,
    BackendError,
    BackendUnavailable,
    ResultStream,
    Transaction,
)
from proxy.bolt import diagnostics as diag
from proxy.bolt import messages as m
from proxy.bolt.conversation import Conversation, OpenResult
from proxy.bolt.state import State
from proxy.bolt.streaming import ResultPump, raw_source
from proxy.clock import elapsed_ms
from proxy.explain import answer_explain
from proxy.model import Action, Finding, Verdict
from proxy.repair.candidates import is_blank
from proxy.repair.repairer import PEEK

log = logging.getLogger("proxy.bolt")

PROXY_ANSWERED = "COMPAT.PROCEDURE"  # the finding on a proxy-answered procedure's rewrite
Ran = tuple[ResultStream, Verdict]  # what a RUN opens: its result and the verdict it ran under


@dataclass
class RunRequest:
    """One RUN on its way from the guard to the backend, and the audit event it fills in."""

    query: str
    parameters: dict[str, Any]
    database: str | None
    in_tx: bool
    tx: Transaction | None  # the explicit transaction it runs in (None: auto-commit)
    backend: Backend
    question: str | None  # the natural-language question, for the repair loop
    event: dict[str, Any]
    started: float = field(default_factory=time.perf_counter)

    async def execute(self, text: str, params: dict[str, Any]) -> ResultStream:
        if self.tx is not None:
            return await self.tx.run(text, params)
        return await self.backend.run(text, params, self.database)

    def elapsed(self) -> int:
        return elapsed_ms(self.started)


@dataclass(frozen=True)
class Plan:
    """What a verdict that lets a query through says to run."""

    verdict: Verdict
    final: str  # the query as judged (rewritten when the guard rewrote it)
    to_run: str  # what the database runs: the guard's emission of `final`
    repairable: bool  # a proxy-answered procedure's rows are the answer: never repaired

    @classmethod
    def of(cls, verdict: Verdict, query: str) -> Plan:
        final = verdict.query if verdict.action is Action.REWRITE else query
        return cls(
            verdict,
            final,
            # the database runs the guard's canonical emission of what it judged, never raw text
            verdict.to_run if verdict.forward else final,
            PROXY_ANSWERED not in verdict.codes,
        )


class QueryHandler:
    """RUN, PULL and DISCARD, on the state of one connection."""

    def __init__(self, conv: Conversation) -> None:
        self.conv = conv
        self.pump = ResultPump(conv)

    # -- RUN ------------------------------------------------------------------------------

    async def on_run(self, query: str, parameters: dict[str, Any], extra: dict[str, Any]) -> None:
        conv = self.conv
        in_tx = conv.in_tx
        database = conv.tx_db if in_tx else conv.database(extra)
        tx_metadata = conv.tx_metadata if in_tx else extra.get("tx_metadata")
        event: dict[str, Any] = {
            "client": conv.client,
            "connection_id": conv.connection_id,
            "bolt_version": f"{conv.version[0]}.{conv.version[1]}",
            "query": query,
            "database": database,
            "in_transaction": in_tx,
            # clients may attach the natural-language question here (DESIGN §6)
            "tx_metadata": tx_metadata,
            "backend_ms": None,
            "error": None,
        }
        run = RunRequest(
            query, parameters, database, in_tx, conv.tx if in_tx else None,
            conv.ctx.backend, _question(tx_metadata), event,
        )  # fmt: skip
        try:
            ran = await self._guarded_run(run)
        except Exception:
            event["error"] = event["error"] or diag.UNKNOWN_ERROR
            raise
        finally:
            conv.emit(event)
        if ran is not None:
            self._open(run, *ran, extra)

    async def _guarded_run(self, run: RunRequest) -> Ran | None:
        """The result to open for `run`, or None when a FAILURE was already sent."""
        plan = await self._judge(run)
        if plan is None or await self._refused(run, plan.verdict):
            return None
        verdict = plan.verdict
        run.started = time.perf_counter()
        if verdict.explain:
            return await self._explain(run, verdict)
        first = await self._first_attempt(run, plan)
        if first is None:
            return None
        if not isinstance(first, BackendError):
            try:
                if await self._stands(run, plan, first):
                    run.event["backend_ms"] = run.elapsed()
                    return first, verdict
            except BackendError as exc:  # the loop judges the error, as if it had peeked
                first = exc
        return await self._repair(run, plan, first)

    async def _judge(self, run: RunRequest) -> Plan | None:
        """The guard's verdict; None (and a FAILURE) when the guard itself failed."""
        try:
            verdict = await self.conv.ctx.judge(run.query, run.parameters)  # off the loop
        except Exception:
            # Fail closed: a query the guard could not judge is not forwarded.
            log.exception("bolt %s: guard raised", self.conv.connection_id)
            run.event.update(action="error", final_query=None, codes=[], guard_ms=run.elapsed())
            run.event["error"] = diag.UNKNOWN_ERROR
            await self.conv.abort_tx()
            self.conv.fail(diag.UNKNOWN_ERROR, "the query guard failed on this query")
            return None
        plan = Plan.of(verdict, run.query)
        run.event.update(
            action=str(verdict.action),
            final_query=None if verdict.blocked else plan.to_run,
            codes=verdict.codes,
            guard_ms=run.elapsed(),
        )
        return plan

    async def _refused(self, run: RunRequest, verdict: Verdict) -> bool:
        """A blocked query: its FAILURE names the findings (and ends a transaction)."""
        if not verdict.blocked:
            return False
        failure = diag.block_failure(verdict, self.conv.version)
        run.event["error"] = failure.get("code") or failure.get("neo4j_code")
        await self.conv.abort_tx()
        self.conv.failure(failure)
        return True

    async def _explain(self, run: RunRequest, verdict: Verdict) -> Ran:
        """EXPLAIN is answered here, never executed (and never repaired)."""
        backend = self.conv.ctx.backend
        answer = await answer_explain(backend, verdict, run.parameters, run.database)
        run.event.update(backend_ms=run.elapsed(), explain=True)
        return answer, verdict

    async def _first_attempt(
        self, run: RunRequest, plan: Plan
    ) -> ResultStream | BackendError | None:
        """The guarded query on the backend: its result, its error when the repair loop will
        see that, or None when the error went to the client."""
        try:
            return await run.execute(plan.to_run, run.parameters)
        except BackendError as exc:
            if plan.repairable and self._loop_sees(run, exc):
                return exc
            run.event.update(backend_ms=run.elapsed(), error=exc.code)
            await self.conv.backend_failed(exc)
            return None

    async def _stands(self, run: RunRequest, plan: Plan, stream: ResultStream) -> bool:
        """Does the first result go to the client as it is, without the repair loop?"""
        if not (plan.repairable and self._loop_sees(run, None)):
            return True
        return await _plainly_has_rows(stream)

    def _loop_sees(self, run: RunRequest, error: BackendError | None) -> bool:
        """Does the repair loop see this result? (It retries reads only, and only when they
        fail or come back empty; it parses the query only then.) Inside an explicit
        transaction only empty results are repaired: a failed statement ends the transaction
        on Neo4j, so a retry there could not run (FalkorDB would allow it; one rule for all)."""
        repairer = self.conv.ctx.repairer
        if repairer is None or not repairer.settings.enabled:
            return False
        return error is None or not (run.in_tx or isinstance(error, BackendUnavailable))

    async def _repair(
        self, run: RunRequest, plan: Plan, first: ResultStream | BackendError
    ) -> Ran | None:
        """The repair loop on a failed or empty first result (DESIGN §6)."""
        ctx = self.conv.ctx
        assert ctx.repairer is not None
        outcome = await ctx.repairer.run(
            plan.final,
            execute=run.execute,
            check=lambda text: ctx.judge(text, run.parameters),
            parameters=run.parameters,
            question=run.question,
            first=first,
            retry_errors=not run.in_tx,
            forward=plan.to_run,
        )
        run.event.update(backend_ms=run.elapsed(), final_query=outcome.query)
        if len(outcome.attempts) > 1:
            run.event["repair"] = [a.to_dict() for a in outcome.attempts]
        if outcome.error is not None or outcome.stream is None:
            exc = _with_suggestions(
                outcome.error or BackendError("the repair loop produced no result"),
                outcome.findings,
            )
            run.event["error"] = exc.code
            await self.conv.backend_failed(exc)
            return None
        if len(outcome.attempts) == 1 and _rewound(first):
            # the loop only peeked at the client's own result: relay it from its first record
            assert not isinstance(first, BackendError)
            return first, plan.verdict
        return outcome.stream, outcome.verdict(plan.verdict)

    def _open(
        self, run: RunRequest, stream: ResultStream, verdict: Verdict, extra: dict[str, Any]
    ) -> None:
        """Keep the result for PULL / DISCARD and answer the RUN with its fields."""
        conv, in_tx = self.conv, run.in_tx
        filters = (conv.tx_filter if in_tx else conv.filter).updated(extra)
        qid = conv.next_qid if in_tx else -1
        conv.next_qid += in_tx
        conv.results[qid] = OpenResult(
            stream, list(stream.keys), qid, verdict, filters, run.database, in_tx,
            raw=raw_source(stream, conv.version),
        )  # fmt: skip
        conv.last_qid = qid
        t_first = run.event["backend_ms"] or 0
        meta: dict[str, Any] = {"fields": list(stream.keys), "t_first": t_first}
        if in_tx:
            meta["qid"] = qid
        conv.state = State.TX_STREAMING if in_tx else State.STREAMING
        conv.success(meta)

    # -- PULL / DISCARD -------------------------------------------------------------------

    async def on_pull(self, extra: dict[str, Any]) -> None:
        await self._stream(extra, discard=False)

    async def on_discard(self, extra: dict[str, Any]) -> None:
        await self._stream(extra, discard=True)

    def _result_for(self, extra: dict[str, Any]) -> OpenResult | None:
        qid = extra.get("qid", -1)
        if not isinstance(qid, int) or isinstance(qid, bool):
            return None
        if qid == -1:
            qid = self.conv.last_qid
        return self.conv.results.get(qid)

    async def _stream(self, extra: dict[str, Any], discard: bool) -> None:
        conv = self.conv
        n = extra.get("n", -1)
        if type(n) is not int or not (n > 0 or n == -1):
            conv.fail(diag.REQUEST_INVALID, f"n must be a positive integer or -1, not {n!r}")
            return
        result = self._result_for(extra)
        if result is None:
            conv.fail(diag.REQUEST_INVALID, f"no open result for qid {extra.get('qid', -1)}")
            return
        done = await self.pump.run(result, n, discard)
        if done is None:  # interrupted by a RESET: that RESET's handling cleans up
            conv.write(m.IGNORED_MESSAGE)
            return
        if done:
            conv.results.pop(result.qid, None)
            if result.in_tx:
                conv.state = State.TX_STREAMING if conv.results else State.TX_READY
            else:
                conv.state = State.READY


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
