"""SQL as the pipeline sees it: `sql_language(dialect)` parses with sqlglot in that dialect;
rules receive a `SqlQuery` through the `guard_sql` hook (argument `query`).

Apache AGE runs Cypher inside SQL: `SELECT * FROM cypher('g', $$ MATCH … $$) AS (v agtype)`.
The dollar-quoted body of every `cypher(…)` call is an embedded Cypher query: the guard checks
it with all Cypher rules (spans and fixes land in the SQL text), the wrapper with the SQL rules.
"""

from __future__ import annotations

import re

from sqlglot import exp

from query_guard.language import Language
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
    out: list[tuple[tuple[int, int], str]] = []
    for call in query.find(exp.Anonymous):
        if call.name.lower() != "cypher" or len(call.expressions) < 2:
            continue
        body = call.expressions[1]
        if not isinstance(body, exp.RawString) or "start" not in body.meta:
            continue
        start, end = int(body.meta["start"]), int(body.meta["end"]) + 1
        quote = _DOLLAR_QUOTE.match(query.text, start)
        if quote is None or not query.text.startswith(quote.group(), end - len(quote.group())):
            continue
        inner = (start + len(quote.group()), end - len(quote.group()))
        if query.text[inner[0] : inner[1]] == body.this:
            out.append((inner, "cypher"))
    return out
