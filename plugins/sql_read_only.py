"""SQL read-only — only SELECT queries calling pure built-in functions run; writes, admin
statements, other functions and secret system catalogs are blocked anywhere in the tree
(`SEC.WRITE`, `SEC.FUNCTION`, `SEC.CATALOG`, `SEC.PROCEDURE`, `SEC.MULTI_STATEMENT`).

Always on for SQL (a SQL endpoint behind query-guard is a read endpoint):

* `SEC.MULTI_STATEMENT` — more than one `;`-separated statement.
* `SEC.WRITE` — a statement that is not a query (INSERT, UPDATE, DELETE, MERGE, CREATE, DROP,
  ALTER, TRUNCATE, COPY, GRANT, REVOKE, SET, PRAGMA, ATTACH, INSTALL, LOAD, CALL, DO, EXECUTE,
  PREPARE, VACUUM, EXPLAIN ANALYZE — anything sqlglot reads as a command); DML inside a query
  (`WITH d AS (DELETE … RETURNING *) SELECT …`); `SELECT … INTO` (creates a table or writes a
  file); locking reads (`FOR UPDATE`, `FOR SHARE`).
* `SEC.FUNCTION` — a function that is not a pure built-in of the dialect it runs in (the SQL
  backend's; without one, `[guard] sql_dialect`): the allow-list is proxy/sql/functions.py,
  listed in docs/functions.md (string, math, date/time, aggregate, window, JSON and array
  functions, casts and conditionals). Everything else is refused, so what runs inside
  PostgreSQL's read-only transaction and still persists or leaks is refused with it: large
  objects (`lo_create`, `lo_from_bytea`, `lo_put`, `lowrite`, `lo_unlink`, `lo_import`,
  `lo_export`), sequences (`nextval`, `setval`), replication slots and origins, `pg_stat_reset*`,
  `pg_create_restore_point`, `pg_logical_emit_message`, `pg_notify`, `set_config`,
  `current_setting`, advisory locks, `dblink*`, files (`pg_read_file`, SQLite `readfile` /
  `load_extension`, DuckDB `read_csv` / `glob` / `getenv`, MySQL `load_file`), sleeping
  (`pg_sleep`, `sleep`, `benchmark`) and whole-table or whole-database exports
  (`table_to_xml`, `query_to_xml`, `database_to_xml`, `schema_to_xml`, `*_to_xmlschema`,
  `cursor_to_xml`). A schema-qualified call (`myschema.f(x)`, `FROM myschema.f(x)`) is not a
  built-in, nor is an operator named outside pg_catalog (`a OPERATOR(myschema.===) b`).
  Patterns in `[guard] sql_allowed_functions` (shell-style, case-insensitive) are the
  operator's choice and pass. Apache AGE's `cypher('g', $$ … $$)` runs its dollar-quoted body
  as Cypher, which the guard judges with every Cypher rule; any other form of its query
  argument (a plain or `E'…'` string, `query_string => …`, a concatenation, a parameter) is
  refused, since what AGE would run there is not the text the guard could judge.
* `SEC.CATALOG` — a system catalog or view that holds secrets, server configuration or other
  sessions' queries (`pg_authid`, `pg_shadow`, `pg_user_mapping(s)`, `pg_statistic`,
  `pg_largeobject`, `pg_hba_file_rules`, `pg_file_settings`, `pg_settings`,
  `pg_stat_activity`, `pg_stat_statements`, MySQL's `mysql.*` and `performance_schema.*`; the
  list is in docs/functions.md). `information_schema.tables` / `columns` and SQLite's
  `sqlite_master` stay readable.
* `SEC.PROCEDURE` — a table named like a file or URL (DuckDB `FROM 'data.csv'`).

* `SEC.AMBIGUOUS_TEXT` — a comment that is code to some database: MySQL runs the body of
  `/*! … */`, and `/*+ … */` are optimizer hints. What is a comment here must not be a
  statement there.

All findings are errors: nothing reaches the database.

Example::

    WITH gone AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM gone
    -> BLOCK  SEC.WRITE  DELETE inside a query writes to the database
    SELECT lo_from_bytea(0, 'x')
    -> BLOCK  SEC.FUNCTION  function lo_from_bytea() is not on the SQL allow-list (postgres)
"""

from __future__ import annotations

import re

from sqlglot import exp

from query_guard.api import Finding, GuardContext, Severity, hookimpl
from query_guard.api.sql import (
    MAX_FORMAT_WIDTH,
    SqlQuery,
    SqlStatement,
    age_calls,
    call_name,
    is_allowed_call,
    is_secret_call,
    is_secret_catalog,
    unbounded_format,
)

_DML = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter,
        exp.TruncateTable, exp.Copy)  # fmt: skip
_JUDGED = (*_DML, exp.Into, exp.Lock, exp.Func, exp.Operator, exp.Table)
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
        findings += _statement(query, statement, ctx)
    for call, body in age_calls(query):
        if body is None:  # the Cypher AGE would run is not the literal the guard can judge
            findings.append(_error("SEC.FUNCTION", "Apache AGE's cypher() runs its second "
                                   "argument as Cypher: write it as a dollar-quoted literal, "
                                   "cypher('graph', $$ MATCH … $$), so it is judged like any "
                                   "Cypher query; a plain or E'…' string, named arguments, a "
                                   "concatenation or a parameter cannot be judged and is refused",
                                   query.span_of(call, query.statements[0])))  # fmt: skip
    return findings


def _statement(query: SqlQuery, statement: SqlStatement, ctx: GuardContext) -> list[Finding]:
    tree = statement.tree
    # a call runs on the backend as written: the backend's dialect judges it when known
    dialect = ctx.sql_backend_dialect or query.dialect
    allowed = ctx.settings.sql_allowed_functions
    nodes = query.nodes(statement)
    for node in nodes:
        if node.comments and any(str(c).lstrip().startswith(("!", "+")) for c in node.comments):
            return [_error("SEC.AMBIGUOUS_TEXT", "a /*! … */ or /*+ … */ comment is code to "
                           "MySQL (or an optimizer hint): remove it", statement.span)]  # fmt: skip
    if not isinstance(tree, exp.Query):
        kind = _kind(tree, query.text[statement.span[0] : statement.span[1]])
        return [_error("SEC.WRITE", f"{kind} is not a query: this endpoint is read-only",
                       statement.span)]  # fmt: skip
    findings = []
    for node in nodes:
        if not isinstance(node, _JUDGED):
            continue
        # a node's span is only looked up for a finding (most nodes have none)
        if isinstance(node, _DML):
            kind, span = node.key.upper(), query.span_of(node, statement)
            findings.append(_error("SEC.WRITE", f"{kind} inside a query writes to the database",
                                   span))  # fmt: skip
        elif isinstance(node, exp.Into):
            findings.append(_error("SEC.WRITE", "SELECT … INTO creates a table or writes a file",
                                   query.span_of(node, statement)))  # fmt: skip
        elif isinstance(node, exp.Lock):
            findings.append(_error("SEC.WRITE", "a locking read (FOR UPDATE / FOR SHARE) takes "
                                   "row locks: not allowed here", statement.span))  # fmt: skip
        elif isinstance(node, exp.Func):
            if is_secret_call(node):
                findings.append(_error("SEC.CATALOG", f"{call_name(node)}() reads a system "
                                       "catalog that holds secrets, server settings or other "
                                       "sessions' queries: not readable here",
                                       query.span_of(node, statement)))  # fmt: skip
            elif not is_allowed_call(node, dialect, allowed):
                span = query.span_of(node, statement)
                name = _written(node, query.text[span[0] : span[1]])
                findings.append(_error("SEC.FUNCTION", f"function {name}() is not on "
                                       f"the SQL allow-list ({dialect}): only pure "
                                       "built-ins run here (docs/functions.md; an operator may "
                                       "add it to guard.sql_allowed_functions)", span))  # fmt: skip
            elif unbounded_format(node):
                span = query.span_of(node, statement)
                name = _written(node, query.text[span[0] : span[1]])
                findings.append(_error("SEC.FUNCTION", f"{name}() with a width or precision "
                                       f"from an argument (*) or above {MAX_FORMAT_WIDTH:,}, or "
                                       "a format that is not a literal, pads inside one call, "
                                       "past the query timeout", span))  # fmt: skip
        elif isinstance(node, exp.Operator):
            operator = str(node.args.get("operator") or "")
            if not operator.lower().startswith("pg_catalog."):
                findings.append(_error("SEC.FUNCTION", f"OPERATOR({operator}) runs a function "
                                       "of its schema's choosing: only pg_catalog operators run "
                                       "here", query.span_of(node, statement)))  # fmt: skip
        elif not isinstance(node.this, exp.Identifier):
            continue  # a table function: judged as a function
        elif _FILE_LIKE.search(node.name or ""):
            findings.append(_error("SEC.PROCEDURE", f"table {node.name!r} names a file or URL; "
                                   "only database tables can be read",
                                   query.span_of(node, statement)))  # fmt: skip
        elif is_secret_catalog(node):
            findings.append(_error("SEC.CATALOG", f"table {node.sql()} is a system catalog that "
                                   "holds secrets, server settings or other sessions' queries: "
                                   "not readable here",
                                   query.span_of(node, statement)))  # fmt: skip
    return findings


def _written(node: exp.Func, text: str) -> str:
    """sqlglot's name of a call, with its last part as the client wrote it when the node's own
    span is that word (`generate_series`, not sqlglot's `exploding_generate_series`)."""
    name = call_name(node)
    if "start" not in node.meta or not text.isidentifier():
        return name  # the span is a child's (an operator such as `@@` has no word of its own)
    qualifier, _, _ = name.rpartition(".")
    return f"{qualifier}.{text.lower()}" if qualifier else text.lower()


def _kind(tree: exp.Expression, text: str) -> str:
    if isinstance(tree, exp.Command):
        return str(tree.this).upper()
    words = text.split()
    return words[0].upper() if isinstance(tree, exp.Alias) and words else tree.key.upper()


def _error(code: str, message: str, span: tuple[int, int]) -> Finding:
    return Finding(code, Severity.ERROR, message, span)
