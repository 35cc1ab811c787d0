"""Read-only — block writes, administration, unsafe or unknown procedures and functions, and
multi-statement scripts, anywhere in the tree (subqueries, FOREACH bodies and SHOW bodies too).

* `SEC.WRITE` (when `guard.read_only`) — CREATE, MERGE, DELETE / DETACH DELETE, SET, REMOVE,
  FOREACH, LOAD CSV (reads server files and URLs), `CALL { … } IN TRANSACTIONS` and schema
  commands (CREATE / DROP INDEX or CONSTRAINT). Administration commands (GRANT, ALTER,
  START / STOP DATABASE, CREATE USER, …) are refused always, by plugins/admin_commands.py
  (SEC.ADMIN). Of Neo4j's SHOW commands only the plain read forms pass —
  `SHOW [ALL|RANGE|TEXT|…] INDEXES`, `SHOW … CONSTRAINTS`, `SHOW [ALL|BUILT IN|USER DEFINED]
  FUNCTIONS`, `SHOW PROCEDURES` (`EXECUTABLE [BY CURRENT USER]`), with YIELD / WHERE / RETURN
  bodies whose expressions pass every other check here. `TERMINATE TRANSACTIONS`, `SHOW
  TRANSACTIONS | SETTINGS | DATABASES | USERS | ROLES | PRIVILEGES | SERVERS | ALIASES | CURRENT
  USER`, `EXECUTABLE BY <other user>` and composed commands (a SHOW followed by another SHOW or
  TERMINATE) are administration.
* `SEC.PROCEDURE` — a procedure that writes, administers the database, loads or exports data,
  calls out to another service, sleeps or runs Cypher text (`apoc.create.*`, `apoc.periodic.*`,
  `apoc.cypher.*`, `apoc.load.*`, `db.create*`, `dbms.*` administration, `gds.*.write`, …);
  the same for functions of those families (`genai.vector.encode` calls an embedding provider
  the query picks), always on. When `guard.read_only`, also any function that is neither a
  Cypher built-in nor a documented pure APOC function (docs/functions.md, generated from
  proxy/cypher/functions.py): "function foo.bar is not on the allow-list". Functions matching
  `guard.allowed_functions` (shell patterns, case-insensitive) are the operator's choice and
  always pass.
* `SEC.UNKNOWN_PROCEDURE` — any other procedure that is neither on `guard.allowed_procedures`
  (shell patterns, case-insensitive) nor answered by the proxy itself (`served_procedures`).
  The Bolt front reports it as `Neo.ClientError.Procedure.ProcedureNotFound`, so a library's
  "is APOC installed?" fallback works; the hint lists every callable procedure.
* `SEC.MULTI_STATEMENT` — more than one `;`-separated statement. Always on: a driver runs one
  statement per request, and a second statement is the classic injection vehicle.

`EXPLAIN CREATE …` is no write: the proxy answers an EXPLAIN with the plan and the query type
(`w`) and never runs it, so SEC.WRITE does not apply (procedures and statements still do).

All findings are errors: the query is blocked and nothing reaches the database.

Example::

    SHOW FUNCTIONS YIELD name WHERE name STARTS WITH 'apoc.text'   -> allowed
    SHOW TRANSACTIONS YIELD transactionId AS t TERMINATE TRANSACTIONS t
        -> SEC.WRITE: TERMINATE TRANSACTIONS … is an administration command
    RETURN genai.vector.encode('x', 'OpenAI', {})
        -> SEC.PROCEDURE: function genai.vector.encode … calls another service …
    MATCH (n) RETURN custom.score(n)
        -> SEC.PROCEDURE: function custom.score is not on the allow-list
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase, translate

from query_guard.api import Finding, GuardContext, Severity, hookimpl
from query_guard.api.compat import answered
from query_guard.api.cypher import CypherQuery, ast, is_admin, is_allowed_function, is_explain

_WRITES: dict[type, str] = {
    ast.Create: "CREATE",
    ast.Merge: "MERGE",
    ast.Delete: "DELETE",
    ast.SetClause: "SET",
    ast.Remove: "REMOVE",
    ast.Foreach: "FOREACH",
    ast.LoadCsv: "LOAD CSV",
}
# procedures and functions that write, administer, load/export, call out, sleep or run Cypher
_UNSAFE = (
    # write the graph or its schema
    "apoc.create.*", "apoc.merge.*", "apoc.refactor.*", "apoc.nodes.delete", "apoc.nodes.link",
    "apoc.nodes.collapse", "apoc.atomic.*", "apoc.lock.*", "apoc.schema.assert", "apoc.uuid.*",
    "apoc.ttl.*", "apoc.trigger.*", "apoc.custom.*", "db.create*", "db.index.fulltext.create*",
    "db.index.fulltext.drop", "db.index.vector.create*", "gds.*write*", "gds.*mutate*",
    "gds.graph.project*", "gds.graph.drop", "gds.graph.export*",
    # run Cypher text
    "apoc.cypher.*", "apoc.do.*", "apoc.when", "apoc.case", "apoc.periodic.*",
    "apoc.graph.fromCypher",
    # load, export, or call out to other services
    "apoc.load.*", "apoc.import.*", "apoc.export.*", "apoc.bolt.*", "apoc.es.*", "apoc.mongo*",
    "apoc.couchbase.*", "apoc.redis.*", "apoc.ml.*", "apoc.vectordb.*", "apoc.spatial.*",
    "apoc.gephi.*", "apoc.model.*", "apoc.dv.*", "genai.*",
    # sleep, server state, configuration, administration
    "apoc.util.sleep", "apoc.static.*", "apoc.log.*", "apoc.systemdb.*", "apoc.config.*",
    "apoc.metrics.*", "apoc.warmup.*", "db.clearQueryCaches", "db.checkpoint", "db.resample*",
    "db.prepareForReplanning", "db.stats.*", "dbms.*",
)  # fmt: skip
# dbms.* procedures that only describe the server (unknown here, but not administration)
_DBMS_INFO = (
    "dbms.components", "dbms.procedures", "dbms.functions", "dbms.info", "dbms.showCurrentUser",
    "dbms.clientConfig",
)  # fmt: skip
# both lists as one regular expression each (what `_listed` answers, in one match: hot path)
_UNSAFE_MATCH = re.compile("|".join(translate(p.lower()) for p in _UNSAFE)).match
_DBMS_INFO_MATCH = re.compile("|".join(translate(p.lower()) for p in _DBMS_INFO)).match
_READ_SHOWS = frozenset({"INDEXES", "CONSTRAINTS", "FUNCTIONS", "PROCEDURES"})
_READ_SHOW_HINT = (
    "only SHOW INDEXES, SHOW CONSTRAINTS, SHOW FUNCTIONS and SHOW PROCEDURES are allowed"
)


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    settings = ctx.settings
    findings: list[Finding] = []
    statements = query.script.statements
    if len(statements) > 1:
        findings.append(
            Finding(
                "SEC.MULTI_STATEMENT",
                Severity.ERROR,
                f"{len(statements)} statements separated by ';': send one statement per query",
                statements[1].span,
            )
        )
    if settings.read_only and not is_explain(query):
        findings += _writes(query, ctx)
    findings += _procedures(query, ctx)
    findings += _functions(query, ctx)
    return findings


def _writes(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    findings = []
    for node in query.find(*_WRITES, ast.CallSubquery, ast.SchemaCommand):
        message = _write_message(node)
        if message and not answered(query, node, ctx):
            findings.append(Finding("SEC.WRITE", Severity.ERROR, message, node.span))
    for statement in query.script.statements:
        shows = [c for c in getattr(statement, "clauses", ()) if isinstance(c, ast.ShowCommand)]
        if len(shows) > 1:
            chain = " … ".join(s.kind for s in shows)
            message = (
                f"{chain}: composed SHOW / TERMINATE commands are administration and not "
                f"allowed (read-only); send one SHOW command — {_READ_SHOW_HINT}"
            )
            findings.append(Finding("SEC.WRITE", Severity.ERROR, message, shows[1].span))
    return findings


def _write_message(node: ast.Node) -> str | None:
    keyword = _WRITES.get(type(node))
    if keyword is not None:
        return f"{keyword} is not allowed: this endpoint is read-only"
    if isinstance(node, ast.CallSubquery) and node.in_transactions:
        return "CALL { … } IN TRANSACTIONS is not allowed: this endpoint is read-only"
    if isinstance(node, ast.ShowCommand):
        if node.target not in _READ_SHOWS:
            return (
                f"{node.kind} is an administration command: this endpoint is read-only; "
                f"{_READ_SHOW_HINT}"
            )
        if node.executable_by not in (None, "CURRENT USER"):
            return (
                f"{node.kind} EXECUTABLE BY {node.executable_by} reads another user's "
                "privileges (administration command): use EXECUTABLE BY CURRENT USER"
            )
        return None
    if isinstance(node, ast.SchemaCommand) and not is_admin(node):
        kind = " ".join(node.kind.upper().split())
        return f"{kind} is a schema command: this endpoint is read-only"
    return None


def _procedures(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    allowed = ctx.settings.allowed_procedures
    findings = []
    for node in query.find(ast.CallProcedure):
        name = node.name
        if name.lower() in ctx.served_procedures or _listed(name, allowed):
            continue
        callable_here = [*allowed, *sorted(ctx.served_procedures - {p.lower() for p in allowed})]
        hint = "allowed: " + ", ".join(callable_here)
        if _UNSAFE_MATCH(name.lower()) and not _DBMS_INFO_MATCH(name.lower()):
            code = "SEC.PROCEDURE"
            message = (
                f"procedure {name} writes, administers the database, loads data or runs code: "
                "it is not allowed here"
            )
        else:
            code = "SEC.UNKNOWN_PROCEDURE"
            message = (
                f"procedure {name} is not available here: it is not on the allow-list "
                "(guard.allowed_procedures)"
            )
        findings.append(Finding(code, Severity.ERROR, message, node.name_span, hint=hint))
    return findings


def _functions(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    settings = ctx.settings
    findings = []
    for node in query.find(ast.FunctionCall, ast.OtherExpr):
        # OtherExpr nodes are calls of a special shape: all(x IN l WHERE p), reduce(…), …
        name = node.name if isinstance(node, ast.FunctionCall) else node.kind
        if _listed(name, settings.allowed_functions):
            continue  # the operator's explicit choice
        if _UNSAFE_MATCH(name.lower()):
            message = (
                f"function {name} writes, loads data, calls another service or runs code: "
                "it is not allowed here"
            )
        elif settings.read_only and not is_allowed_function(name):
            message = (
                f"function {name} is not on the allow-list (Cypher built-ins and pure APOC "
                "functions; an operator may add it to guard.allowed_functions)"
            )
        else:
            continue
        findings.append(Finding("SEC.PROCEDURE", Severity.ERROR, message, node.span))
    return findings


def _listed(name: str, patterns: tuple[str, ...] | list[str]) -> bool:
    if not patterns:
        return False
    lowered = name.lower()
    return any(fnmatchcase(lowered, p.lower()) for p in patterns)
