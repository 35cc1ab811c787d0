"""SQL as the pipeline sees it: `sql_language(dialect)` parses with sqlglot in that dialect;
rules receive a `SqlQuery` through the `guard_sql` hook (argument `query`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from proxy.model import Finding, Severity
from proxy.sql.query import SqlQuery, SqlSyntaxError

if TYPE_CHECKING:
    from proxy.pipeline import Language


def sql_language(dialect: str = "postgres") -> Language:
    from proxy.pipeline import Language

    def parse(text: str) -> SqlQuery:
        return SqlQuery.parse(text, dialect)

    def describe(exc: Exception, text: str) -> list[Finding]:
        assert isinstance(exc, SqlSyntaxError)
        pos = min(max(exc.offset, 0), len(text))
        message = f"SQL syntax error ({dialect}) at {exc.message}"
        span = (pos, min(pos + 1, len(text)))
        return [Finding("SYN.PARSE", Severity.ERROR, message, span, rule="parser")]

    return Language("sql", parse, (SqlSyntaxError,), "guard_sql", describe, "SELECT 1")
