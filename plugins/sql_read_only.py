"""SQL read-only — only SELECT queries run; writes, admin statements and side-effect functions
are blocked anywhere in the tree (`SEC.WRITE`, `SEC.PROCEDURE`, `SEC.MULTI_STATEMENT`).

Always on for SQL (a SQL endpoint behind query-guard is a read endpoint):

* `SEC.MULTI_STATEMENT` — more than one `;`-separated statement.
* `SEC.WRITE` — a statement that is not a query (INSERT, UPDATE, DELETE, MERGE, CREATE, DROP,
  ALTER, TRUNCATE, COPY, GRANT, REVOKE, SET, PRAGMA, ATTACH, INSTALL, LOAD, CALL, DO, EXECUTE,
  PREPARE, VACUUM, EXPLAIN ANALYZE — anything sqlglot reads as a command); DML inside a query
  (`WITH d AS (DELETE … RETURNING *) SELECT …`); `SELECT … INTO` (creates a table or writes a
  file); locking reads (`FOR UPDATE`, `FOR SHARE`).
* `SEC.PROCEDURE` — functions with side effects or access outside the database, in every
  dialect at once (a query is judged the same whichever dialect it was written for):
  PostgreSQL `pg_read_file`, `pg_read_binary_file`, `pg_ls_*dir`, `pg_stat_file`, `lo_import`,
  `lo_export`, `dblink*`, `pg_sleep*`, `set_config`, `current_setting`, `pg_terminate_backend`,
  `pg_cancel_backend`, `pg_reload_conf`, `pg_rotate_logfile`, `pg_switch_wal`, `pg_promote`,
  `pg_file_write`, `query_to_xml*`, `cursor_to_xml`, `nextval`, `setval`, `pg_notify`,
  `pg_advisory_*lock*`; SQLite `load_extension`, `readfile`, `writefile`, `edit`,
  `fts3_tokenizer`; DuckDB `read_csv*`, `read_parquet`, `parquet_scan`, `read_json*`,
  `read_ndjson*`, `read_text`, `read_blob`, `read_xlsx`, `glob`, `getenv`, `sniff_csv`,
  `query`, `query_table`, `*_scan` (postgres, sqlite, mysql, iceberg, delta), and a table named
  like a file or URL (`FROM 'data.csv'`); MySQL `load_file`, `sleep`, `benchmark`, `sys_exec`,
  `sys_eval`, `get_lock`, `release_lock`.

* `SEC.AMBIGUOUS_TEXT` — a comment that is code to some database: MySQL runs the body of
  `/*! … */`, and `/*+ … */` are optimizer hints. What is a comment here must not be a
  statement there.

All findings are errors: nothing reaches the database.

Example::

    WITH gone AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM gone
    -> BLOCK  SEC.WRITE  DELETE inside a query writes to the database
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

from sqlglot import exp

from proxy.context import GuardContext
from proxy.hookspecs import hookimpl
from proxy.model import Finding, Severity
from proxy.sql.query import SqlQuery, SqlStatement

SIDE_EFFECT_FUNCTIONS: tuple[str, ...] = (
    # PostgreSQL
    "pg_read_file", "pg_read_binary_file", "pg_ls_*dir", "pg_stat_file", "lo_import",
    "lo_export", "dblink*", "pg_sleep*", "set_config", "current_setting",
    "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
    "pg_switch_wal", "pg_promote", "pg_file_write", "query_to_xml*", "cursor_to_xml",
    "nextval", "setval", "pg_notify", "pg_advisory_*lock*", "pg_try_advisory_*lock*",
    # SQLite
    "load_extension", "readfile", "writefile", "edit", "fts3_tokenizer",
    # DuckDB
    "read_csv*", "read_parquet", "parquet_scan", "read_json*", "read_ndjson*", "read_text",
    "read_blob", "read_xlsx", "glob", "getenv", "sniff_csv", "query", "query_table", "*_scan",
    # MySQL
    "load_file", "sleep", "benchmark", "sys_exec", "sys_eval", "get_lock", "release_lock",
)  # fmt: skip
_DML = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter,
        exp.TruncateTable, exp.Copy)  # fmt: skip
_FILE_LIKE = re.compile(
    r"[/\\]|://|\.(csv|tsv|parquet|json|jsonl|ndjson|txt|xlsx|db|sqlite|duckdb|gz|zst)$", re.I
)


@hookimpl
def guard_sql(query: SqlQuery, ctx: GuardContext) -> list[Finding]:
    findings: list[Finding] = []
    if len(query.statements) > 1:
        findings.append(
            Finding(
                "SEC.MULTI_STATEMENT",
                Severity.ERROR,
                f"{len(query.statements)} statements separated by ';': send one query",
                query.statements[1].span,
            )
        )
    for statement in query.statements:
        findings += _statement(query, statement)
    return findings


def _statement(query: SqlQuery, statement: SqlStatement) -> list[Finding]:
    tree = statement.tree
    for node in tree.walk():
        if any(str(c).lstrip().startswith(("!", "+")) for c in node.comments or ()):
            return [_error("SEC.AMBIGUOUS_TEXT", "a /*! … */ or /*+ … */ comment is code to "
                           "MySQL (or an optimizer hint): remove it", statement.span)]  # fmt: skip
    if not isinstance(tree, exp.Query):
        kind = _kind(tree, query.text[statement.span[0] : statement.span[1]])
        return [_error("SEC.WRITE", f"{kind} is not a query: this endpoint is read-only",
                       statement.span)]  # fmt: skip
    findings = []
    for node in tree.find_all(*_DML, exp.Into, exp.Lock, exp.Func, exp.Table):
        span = query.span_of(node, statement)
        if isinstance(node, _DML):
            kind = node.key.upper()
            findings.append(_error("SEC.WRITE", f"{kind} inside a query writes to the database",
                                   span))  # fmt: skip
        elif isinstance(node, exp.Into):
            findings.append(_error("SEC.WRITE", "SELECT … INTO creates a table or writes a file",
                                   span))  # fmt: skip
        elif isinstance(node, exp.Lock):
            findings.append(_error("SEC.WRITE", "a locking read (FOR UPDATE / FOR SHARE) takes "
                                   "row locks: not allowed here", statement.span))  # fmt: skip
        elif isinstance(node, exp.Func):
            name = _function_name(node)
            if name and _side_effect(name):
                findings.append(_error("SEC.PROCEDURE", f"function {name}() reads or changes "
                                       "things outside the query's tables", span))  # fmt: skip
        elif isinstance(node, exp.Table) and _FILE_LIKE.search(node.name or ""):
            findings.append(_error("SEC.PROCEDURE", f"table {node.name!r} names a file or URL; "
                                   "only database tables can be read", span))  # fmt: skip
    return findings


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


def _side_effect(name: str) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in SIDE_EFFECT_FUNCTIONS)


def _kind(tree: exp.Expression, text: str) -> str:
    if isinstance(tree, exp.Command):
        return str(tree.this).upper()
    words = text.split()
    return words[0].upper() if isinstance(tree, exp.Alias) and words else tree.key.upper()


def _error(code: str, message: str, span: tuple[int, int]) -> Finding:
    return Finding(code, Severity.ERROR, message, span)
