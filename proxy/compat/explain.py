"""`EXPLAIN` answered by the proxy (DESIGN §4.5): the statement is never executed. The answer
has no fields and no records; its summary carries the query type from the guard's own parse
(`r`, `w`, `rw`, `s` — what clients such as neo4j-graphrag's Text2CypherRetriever check before
running a query) and the backend's plan when the backend has a plan-only command (FalkorDB's
`GRAPH.EXPLAIN`; Bolt upstreams get `EXPLAIN …`, for reads only: ArcadeDB runs a schema
command it is asked to explain). Parameters need no values. The fronts that
answer whole results (`query_guard.run.service`) answer an EXPLAIN with no rows, without a plan."""

from __future__ import annotations

import logging
import re
from typing import Any

from query_guard.backend import BackendError, ResultSummary
from query_guard.model import Verdict

log = logging.getLogger(__name__)

# the EXPLAIN keyword at the start of the judged text, after blanks and comments
_EXPLAIN = re.compile(r"\A(?:\s+|//[^\n]*(?:\n|\Z)|/\*.*?\*/)*EXPLAIN\b\s*", re.I | re.S)


class ExplainResult:
    """A result with no fields and no records, whose summary is the EXPLAIN's answer."""

    def __init__(self, summary: ResultSummary) -> None:
        self.keys: list[str] = []
        self._summary = summary

    async def fetch(self, n: int) -> list[list[Any]]:
        return []

    async def discard(self) -> None:
        return None

    def has_more(self) -> bool:
        return False

    def summary(self) -> ResultSummary:
        return self._summary


def explained_statement(text: str) -> str | None:
    """The statement an EXPLAIN asks about (None: the text does not start with EXPLAIN)."""
    m = _EXPLAIN.match(text)
    return text[m.end() :] if m else None


async def answer_explain(
    backend: Any, verdict: Verdict, parameters: dict[str, Any], database: str | None
) -> ExplainResult:
    """The EXPLAIN's answer: the guard's query type, and the backend's plan when it has one
    (a backend that cannot plan the statement just leaves the plan out). A statement that is
    not a read is sent for a plan only to a backend whose plan command never runs it
    (`explain_never_runs`): a Bolt server may run what it is asked to EXPLAIN."""
    summary = ResultSummary(query_type=verdict.query_type or "r", database=database)
    explain = getattr(backend, "explain", None)
    statement = explained_statement(verdict.to_run)
    safe = summary.query_type == "r" or getattr(backend, "explain_never_runs", False)
    if explain is not None and statement and safe:
        try:
            summary.plan = await explain(statement, parameters, database)
        except BackendError as exc:
            log.info("no plan for an EXPLAIN: %s", exc.message)
    return ExplainResult(summary)
