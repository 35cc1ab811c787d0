"""SQL's repair strategy (`query_guard.repair.loop.Strategy`), DESIGN §6 carried over from
Cypher: a single read statement that returns nothing — no rows, or one row of blank aggregates
(`count(*)` = 0) of an ungrouped SELECT — has its string literals grounded against the stored
values (`query_guard.repair.sql_literals`) and its equalities relaxed.

Candidates, in order: the **safe** literal fixes (a stored value equal but for case);
case-insensitive equality (`lower(col) = lower('x')`), speculative; all literal fixes
including the speculative ones (the only stored value containing the literal) — at most
`[repair] budget` of them. Candidates are written in the guard's dialect and judged again;
the backend runs each verdict rendered in its own dialect. Failed queries are not repaired
(the database's message tells the client what is wrong).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from sqlglot import exp

from query_guard.backend import ResultStream
from query_guard.model import Verdict
from query_guard.repair.grounding import LiteralFix, fix_groups
from query_guard.repair.model import Candidate, RepairSettings, Words
from query_guard.repair.sql_literals import (
    extract_bindings,
    probe_queries,
    relax_case,
    sql_literal,
    with_fixes,
)
from query_guard.schema.sql_catalog import SqlCatalog
from query_guard.sql.query import SqlQuery, SqlSyntaxError

OPT_IN = (
    'to have such repairs applied, send the question with the request (the field "question") '
    'or set [repair] speculative = "apply"'
)
_LITERALS = "the stored values containing the literals"

Probe = Callable[[str], Awaitable[list[list[Any]]]]  # a probe (backend dialect) -> its rows


class SqlStrategy:
    language = "sql"
    retry_errors = False

    def __init__(
        self,
        *,
        dialect: str,
        backend_dialect: str,
        catalog: SqlCatalog | None,
        execute: Callable[[str], Awaitable[ResultStream]],
        probe: Probe,
        params: Mapping[str, Any] | Sequence[Any] | None = None,
    ) -> None:
        self.dialect, self.backend_dialect, self.catalog = dialect, backend_dialect, catalog
        self.execute, self.probe = execute, probe
        self.params = params if isinstance(params, Mapping) else None  # named ones bind
        self.words = Words(
            lambda v: sql_literal(v, dialect), opt_in=OPT_IN, stored="in",
            reconsider="column or table",
        )  # fmt: skip

    def parse(self, text: str) -> exp.Expression | None:
        """The single read statement of `text`, or None (several, not a query, no parse)."""
        try:
            query = SqlQuery.parse(text, self.dialect)
        except SqlSyntaxError:
            return None
        if len(query.statements) != 1 or not isinstance(query.statements[0].tree, exp.Query):
            return None
        return query.statements[0].tree

    def never_repaired(self, parsed: exp.Expression | None) -> str | None:
        return "not a single read query" if parsed is None else None

    def runnable(self, verdict: Verdict) -> bool:
        return self.parse(verdict.to_run) is not None

    def aggregates(self, parsed: exp.Expression) -> frozenset[int]:
        return blank_aggregates(parsed)

    def bindings(self, parsed: exp.Expression) -> Sequence[Any]:
        return extract_bindings(parsed, self.catalog, self.params)

    async def stored(self, binding: Any, token: str) -> list[tuple[str, Any]] | None:
        exact, similar = probe_queries(binding, token, self.backend_dialect)
        if await self.probe(exact):
            return None
        rows = await self.probe(similar) if token else []
        return [("", r[0]) for r in rows if r and isinstance(r[0], str)]

    def candidates(
        self, parsed: exp.Expression, settings: RepairSettings, fixes: Sequence[LiteralFix] | None
    ) -> list[Candidate]:
        if fixes is None:  # every SQL candidate comes after grounding
            return []
        groups = [
            Candidate(with_fixes(parsed, group, self.dialect), "grounding", "ENT.LITERAL", safe,
                      offer=_LITERALS, fixes=group)
            for group, safe in fix_groups(fixes)
        ]  # fmt: skip
        out = [c for c in groups if c.safe]
        bindings = self.bindings(parsed) if settings.relaxation else []
        relaxed = relax_case(parsed, bindings, self.dialect) if bindings else None
        if relaxed is not None:
            out.append(Candidate(
                relaxed, "relaxation", "FIL.CASE_INSENSITIVE", False,
                "string equality was made case-insensitive", "case-insensitive string equality",
            ))  # fmt: skip
        out += [c for c in groups if not c.safe]
        return out[: max(settings.budget, 1)]


def blank_aggregates(tree: exp.Expression) -> frozenset[int]:
    """Positions of the aggregate columns of an ungrouped outermost SELECT (one row of zeros
    or nulls there is an empty answer); empty otherwise."""
    if not isinstance(tree, exp.Select) or tree.args.get("group"):
        return frozenset()
    return frozenset(
        i for i, e in enumerate(tree.selects)
        if any(not isinstance(a.parent, exp.Window) for a in e.find_all(exp.AggFunc))
    )  # fmt: skip
