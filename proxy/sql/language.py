"""SQL as the pipeline sees it: `sql_language(dialect)` parses with sqlglot in that dialect;
rules receive a `SqlQuery` through the `guard_sql` hook (argument `query`).

Apache AGE runs Cypher inside SQL: `SELECT * FROM cypher('g', $$ MATCH … $$) AS (v agtype)`.
The dollar-quoted body of every `cypher(…)` call is an embedded Cypher query: the guard checks
it with all Cypher rules (spans and fixes land in the SQL text), the wrapper with the SQL rules.
"""

from __future__ import annotations

import re

from sqlglot import exp

from query_guard.guard.language import Language
from query_guard.model import Finding, Severity
from query_guard.sql.query import SqlQuery, SqlSyntaxError, SqlTooDeep

_DOLLAR_QUOTE = re.compile(r"\$[A-Za-z_0-9]*\$")


def sql_language(dialect: str = "postgres") -> Language:
    def parse(text: str) -> SqlQuery:
        return SqlQuery.parse(text, dialect)

    def describe(exc: Exception, text: str) -> list[Finding]:
        assert isinstance(exc, SqlSyntaxError)
        if isinstance(exc, SqlTooDeep):
            advice = "; flatten it: drop redundant parentheses and double negations"
            return [Finding("LIM.NESTING", Severity.ERROR, exc.message + advice, (0, 0),
                            rule="parser")]  # fmt: skip
        pos = min(max(exc.offset, 0), len(text))
        message = f"SQL syntax error ({dialect}) at {exc.message}"
        span = (pos, min(pos + 1, len(text)))
        return [Finding("SYN.PARSE", Severity.ERROR, message, span, rule="parser")]

    return Language(
        "sql", parse, (SqlSyntaxError,), "guard_sql", describe, "SELECT 1",
        embedded=age_cypher_bodies,
    )  # fmt: skip


def age_cypher_bodies(query: SqlQuery) -> list[tuple[tuple[int, int], str]]:
    """The spans of the dollar-quoted query bodies of AGE `cypher(graph, $$ … $$)` calls."""
    return [(span, "cypher") for _, span in age_calls(query) if span is not None]


def age_calls(query: SqlQuery) -> list[tuple[exp.Anonymous, tuple[int, int] | None]]:
    """Every AGE `cypher(…)` call, with the span of its query body when the guard can judge it:
    a dollar-quoted literal as the second positional argument, read exactly as written. None
    for any other form (a plain or E'…' string, named arguments, a concatenation, a parameter,
    a missing argument): what AGE would run there is not known, so the call is refused."""
    out: list[tuple[exp.Anonymous, tuple[int, int] | None]] = []
    for call in query.find(exp.Anonymous):
        if call.name.lower() == "cypher":
            out.append((call, _dollar_body(query, call)))
    return out


def _dollar_body(query: SqlQuery, call: exp.Anonymous) -> tuple[int, int] | None:
    if len(call.expressions) < 2:
        return None
    body = call.expressions[1]
    if not isinstance(body, exp.RawString) or "start" not in body.meta:
        return None
    start, end = int(body.meta["start"]), int(body.meta["end"]) + 1
    quote = _DOLLAR_QUOTE.match(query.text, start)
    if quote is None or not query.text.startswith(quote.group(), end - len(quote.group())):
        return None
    inner = (start + len(quote.group()), end - len(quote.group()))
    return inner if query.text[inner[0] : inner[1]] == body.this else None
