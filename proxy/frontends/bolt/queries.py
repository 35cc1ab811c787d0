"""RUN, PULL and DISCARD for one Bolt connection (`QueryHandler`, given the connection's
`Conversation`). A RUN becomes a `QueryRequest` for the runner (`query_guard.run`: the guard, the
backend, the repair loop, the audit record), and its outcome becomes the RUN's SUCCESS (the
result then waits for PULL) or a FAILURE; records stream to the client relayed undecoded when
the backend offers them so (`raw_source`)."""

from __future__ import annotations

import logging
from typing import Any

from query_guard.backend import BackendError, ResultStream
from query_guard.frontends.bolt import diagnostics as diag
from query_guard.frontends.bolt.conversation import Conversation, OpenResult
from query_guard.frontends.bolt.state import State
from query_guard.frontends.bolt.streaming import ResultPump, raw_source
from query_guard.frontends.bolt.tx_timeout import (
    CLIENT_TIMEOUT_CODE,
    ClientTimeout,
    deadline,
    expired,
    within,
)
from query_guard.run.request import Outcome, QueryRequest
from query_guard.run.seen import Seen
from query_guard.wire import bolt_messages as m

log = logging.getLogger("query_guard.bolt")
REPLIES_KEPT = 32  # encoded RUN SUCCESS messages a connection keeps


class QueryHandler:
    """RUN, PULL and DISCARD, on the state of one connection."""

    def __init__(self, conv: Conversation) -> None:
        self.conv = conv
        self.pump = ResultPump(conv)
        self.version = f"{conv.version[0]}.{conv.version[1]}"  # the audit's bolt_version
        # an auto-commit RUN's SUCCESS by (fields, t_first): the same few recur
        self._replies: dict[tuple[tuple[str, ...], int], bytes] = {}

    # -- RUN ------------------------------------------------------------------------------

    async def on_run(self, query: str, parameters: dict[str, Any], extra: dict[str, Any]) -> None:
        conv = self.conv
        in_tx = conv.in_tx
        limit = conv.tx_deadline if in_tx else deadline(extra)
        if expired(limit):
            assert limit is not None
            await conv.fail_work(CLIENT_TIMEOUT_CODE, limit.message)
            return
        database = conv.tx_db if in_tx else conv.database(extra)
        tx_metadata = conv.tx_metadata if in_tx else extra.get("tx_metadata")
        req = QueryRequest(
            query, "bolt", "cypher", parameters,
            # clients may attach the natural-language question as tx metadata (DESIGN §6)
            question=_question(tx_metadata), database=database,
            tx=conv.tx if in_tx else None, client=conv.client, user=conv.user,
            detail={"connection_id": conv.connection_id, "bolt_version": self.version,
                    "tx_metadata": tx_metadata},
        )  # fmt: skip
        try:
            run = conv.ctx.runner.run(req)
            outcome = await (run if limit is None else within(run, limit))
        except ClientTimeout as exc:
            await conv.fail_work(CLIENT_TIMEOUT_CODE, str(exc))
            return
        if outcome.guard_failed:
            await conv.abort_tx()
            conv.fail(diag.UNKNOWN_ERROR, "the query guard failed on this query")
        elif outcome.blocked:  # its FAILURE names the findings (and ends a transaction)
            await conv.abort_tx()
            conv.failure(diag.block_failure(outcome.verdict, conv.version))
        elif outcome.error is not None or outcome.stream is None:
            await conv.backend_failed(outcome.error or _NO_RESULT)
        else:
            self._open(req, outcome, outcome.stream, database, in_tx, extra)
            conv.results[conv.last_qid].deadline = limit

    def _open(
        self,
        req: QueryRequest,
        outcome: Outcome,
        stream: ResultStream,
        database: str | None,
        in_tx: bool,
        extra: dict[str, Any],
    ) -> None:
        """Keep the result for PULL / DISCARD and answer the RUN with its fields."""
        conv = self.conv
        filters = (conv.tx_filter if in_tx else conv.filter).updated(extra)
        qid = conv.next_qid if in_tx else -1
        conv.next_qid += in_tx
        fields = list(stream.keys)
        conv.results[qid] = OpenResult(
            stream, fields, qid, outcome.verdict, filters, database, in_tx,
            raw=raw_source(stream, conv.version), seen=Seen(req, outcome),
        )  # fmt: skip
        conv.last_qid = qid
        if in_tx:
            conv.state = State.TX_STREAMING
            conv.success({"fields": fields, "t_first": outcome.backend_ms, "qid": qid})
            return
        conv.state = State.STREAMING
        key = (tuple(fields), outcome.backend_ms)
        reply = self._replies.get(key)
        if reply is None:
            reply = m.success({"fields": fields, "t_first": outcome.backend_ms}, conv.codec)
            if len(self._replies) >= REPLIES_KEPT:
                self._replies.clear()
            self._replies[key] = reply
        conv.write(reply)

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
        if expired(result.deadline):
            assert result.deadline is not None
            await conv.fail_work(CLIENT_TIMEOUT_CODE, result.deadline.message)
            return
        try:
            pump = self.pump.run(result, n, discard)
            done = await (pump if result.deadline is None else within(pump, result.deadline))
        except ClientTimeout as exc:
            await conv.fail_work(CLIENT_TIMEOUT_CODE, str(exc))
            return
        if done is None:  # interrupted by a RESET: that RESET's handling cleans up
            conv.write(m.IGNORED_MESSAGE)
            return
        if done:
            conv.results.pop(result.qid, None)
            if result.in_tx:
                conv.state = State.TX_STREAMING if conv.results else State.TX_READY
            else:
                conv.state = State.READY


def _question(metadata: Any) -> str | None:
    """The natural-language question a client attached as tx metadata (DESIGN §6)."""
    question = metadata.get("question") if isinstance(metadata, dict) else None
    return question if isinstance(question, str) and question.strip() else None


_NO_RESULT = BackendError("the query produced no result")
