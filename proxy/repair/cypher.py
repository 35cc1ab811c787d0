"""Cypher's repair strategy (`query_guard.repair.loop.Strategy`).

- **Read queries only**: no write clause, no procedure call, anywhere; never an EXPLAIN or a
  query without a MATCH pattern (DESIGN §6). Failed queries are repaired too (not inside an
  explicit transaction: the runner says so).
- **Empty**: no rows, or one row whose aggregate columns are all 0, null or an empty list.
- **Candidates**, in this order: tier 1 (reversed arrows, `query_guard.repair.candidates`),
  case-insensitive relaxation, both at once; after grounding, the literal fixes (the safe
  ones alone, then all), each also with tier 1's first safe flip (a reversed arrow and a
  wrong case at once).
- **Probes**: `query_guard.repair.cypher_literals`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from query_guard.backend import ResultStream
from query_guard.cypher import ast
from query_guard.cypher.parser import CypherSyntaxError
from query_guard.cypher.query import CypherQuery
from query_guard.cypher.statement import is_explain
from query_guard.model import Edit, Verdict, apply_edits
from query_guard.repair.candidates import aggregate_columns, flip_candidates, relax_case
from query_guard.repair.cypher_literals import WORDS, cypher_literal, extract_bindings, prober
from query_guard.repair.grounding import LiteralFix, fix_groups
from query_guard.repair.model import Candidate, Flip, RepairSettings
from query_guard.schema.catalog import SchemaCatalog

Execute = Callable[[str, dict[str, Any]], Awaitable[ResultStream]]
Parse = Callable[[str], CypherQuery | None]
Run = Callable[[str], Awaitable[ResultStream]]

_DONE = {
    "tier1": "relationship directions were reversed",
    "relaxation": "string equality was made case-insensitive",
    "tier1+relaxation": "relationship directions were reversed, string equality made "
    "case-insensitive,",
}
_OFFER = {
    "tier1": "reversing relationship directions",
    "relaxation": "case-insensitive string equality",
    "tier1+relaxation": "reversed directions with case-insensitive string equality",
}
_WRITES = (
    ast.Create, ast.Merge, ast.SetClause, ast.Remove, ast.Delete, ast.Foreach, ast.LoadCsv,
    ast.SchemaCommand, ast.CallProcedure,
)  # fmt: skip


def parse(text: str) -> CypherQuery | None:
    try:
        return CypherQuery.parse(text)
    except CypherSyntaxError:
        return None


def is_read_query(text: str, parser: Parse | None = None) -> bool:
    """Only reads are retried: no write clause, no procedure call, anywhere."""
    query = (parser or parse)(text)
    if query is None:
        return False
    if any(True for _ in query.find(*_WRITES)):
        return False
    return not any(c.in_transactions for c in query.find(ast.CallSubquery))


class CypherStrategy:
    language = "cypher"
    words = WORDS
    retry_errors = True

    def __init__(
        self,
        parser: Parse,
        schema: Callable[[], SchemaCatalog | None],
        execute: Execute,
        params: dict[str, Any],
    ) -> None:
        self.parse = parser
        self.schema, self.params = schema, params
        self.execute: Run = lambda text: execute(text, params)
        self.stored = prober(execute)
        self.safe_flips: list[Flip] = []  # tier 1's, combined with the literal fixes

    def never_repaired(self, parsed: CypherQuery | None) -> str | None:
        if parsed is None or not is_read_query(parsed.text, lambda _text: parsed):
            return "not a read query"
        if is_explain(parsed):
            return "an EXPLAIN is never executed"
        if not any(True for _ in parsed.find(ast.Match)):
            return "no MATCH pattern to repair"
        return None

    def runnable(self, verdict: Verdict) -> bool:
        return is_read_query(verdict.to_run, self.parse)

    def aggregates(self, parsed: CypherQuery) -> frozenset[int]:
        return aggregate_columns(parsed)

    def bindings(self, parsed: CypherQuery) -> Sequence[Any]:
        return extract_bindings(parsed, self.params)

    def candidates(
        self, parsed: CypherQuery, settings: RepairSettings, fixes: Sequence[LiteralFix] | None
    ) -> list[Candidate]:
        if fixes is not None:
            return self._literals(parsed, fixes)
        out: list[Candidate] = []
        flips: list[str] = []
        if settings.tier1:
            found = flip_candidates(parsed, self.schema(), settings.budget)
            flips = [f.text for f in found]
            self.safe_flips = [f for f in found if f.safe]
            out += [_candidate(f.text, "tier1", "DIR.FLIPPED_ON_EMPTY", f.safe) for f in found]
        if settings.relaxation:
            relaxed = relax_case(parsed, self.params)
            if relaxed is not None:
                out.append(_candidate(relaxed, "relaxation", "FIL.CASE_INSENSITIVE", False))
                flipped = self.parse(flips[0]) if flips else None
                both = relax_case(flipped, self.params) if flipped is not None else None
                if both is not None:
                    out.append(_candidate(both, "tier1+relaxation", "DIR.FLIPPED_ON_EMPTY", False))
        return out

    def _literals(self, parsed: CypherQuery, fixes: Sequence[LiteralFix]) -> list[Candidate]:
        arrows: list[tuple[Edit, ...]] = [(), *(f.edits for f in self.safe_flips[:1])]
        out = []
        for group, safe in fix_groups(fixes):
            for flip in arrows:
                edits = [*flip, *(_edit(f) for f in group)]
                out.append(Candidate(
                    apply_edits(parsed.text, edits), "grounding", "ENT.LITERAL", safe,
                    offer="the stored values containing the literals", fixes=group,
                ))  # fmt: skip
        return out


def _candidate(text: str, source: str, code: str, safe: bool) -> Candidate:
    return Candidate(text, source, code, safe, _DONE[source], _OFFER[source])


def _edit(fix: LiteralFix) -> Edit:
    return Edit(fix.binding.span[0], fix.binding.span[1], cypher_literal(fix.value))
