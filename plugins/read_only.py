"""Read-only — block writes, admin commands, unlisted procedures and multi-statement scripts.

Anywhere in the tree, subqueries and FOREACH bodies included:

* `SEC.WRITE` — CREATE, MERGE, DELETE / DETACH DELETE, SET, REMOVE, FOREACH, LOAD CSV (reads
  server files and URLs), `CALL { … } IN TRANSACTIONS`, and schema / admin commands (CREATE /
  DROP INDEX or CONSTRAINT, user and database administration). Only when `guard.read_only`.
* `SEC.PROCEDURE` — `CALL proc()` whose name is not on `guard.allowed_procedures` (shell-style
  patterns, case-insensitive; default: `db.labels`, `db.relationshipTypes`, `db.propertyKeys`,
  `db.schema.*`, read-only `db.index.*` queries), and functions that run or load arbitrary
  code or data (`apoc.cypher.*`, `apoc.load.*`, `apoc.export.*`, …). Always on.
* `SEC.MULTI_STATEMENT` — more than one `;`-separated statement. Always on: a driver runs one
  statement per request, and a second statement is the classic injection vehicle.

All findings are errors: the query is blocked and nothing reaches the database.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from proxy.compat.served import answered
from proxy.context import GuardContext
from proxy.cypher import ast
from proxy.cypher.query import CypherQuery
from proxy.hookspecs import hookimpl
from proxy.model import Finding, Severity

_WRITES: dict[type, str] = {
    ast.Create: "CREATE",
    ast.Merge: "MERGE",
    ast.Delete: "DELETE",
    ast.SetClause: "SET",
    ast.Remove: "REMOVE",
    ast.Foreach: "FOREACH",
    ast.LoadCsv: "LOAD CSV",
}
_DANGEROUS_FUNCTIONS = (
    "apoc.cypher.*",
    "apoc.load.*",
    "apoc.import.*",
    "apoc.export.*",
    "apoc.periodic.*",
    "apoc.trigger.*",
    "apoc.util.sleep",
    "apoc.create.*",
    "apoc.refactor.*",
)
_HARMLESS_SHOW = ("SHOW INDEX", "SHOW CONSTRAINT", "SHOW FUNCTION", "SHOW PROCEDURE")


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
    allowed = [p.lower() for p in settings.allowed_procedures]
    if settings.read_only:
        for node in query.find(*_WRITES, ast.CallSubquery, ast.SchemaCommand):
            message = _write_message(node)
            if message and not answered(query, node, ctx):
                findings.append(Finding("SEC.WRITE", Severity.ERROR, message, node.span))
    for node in query.find(ast.CallProcedure, ast.FunctionCall):
        if isinstance(node, ast.CallProcedure) and not (
            _listed(node.name, allowed) or answered(query, node, ctx)
        ):
            findings.append(
                Finding(
                    "SEC.PROCEDURE",
                    Severity.ERROR,
                    f"procedure {node.name} is not on the allow-list (guard.allowed_procedures)",
                    node.name_span,
                    hint="allowed: " + ", ".join(settings.allowed_procedures[:6]),
                )
            )
        elif isinstance(node, ast.FunctionCall) and _listed(node.name, _DANGEROUS_FUNCTIONS):
            findings.append(
                Finding(
                    "SEC.PROCEDURE",
                    Severity.ERROR,
                    f"function {node.name} runs or loads arbitrary code or data",
                    node.span,
                )
            )
    return findings


def _write_message(node: ast.Node) -> str | None:
    keyword = _WRITES.get(type(node))
    if keyword is not None:
        return f"{keyword} is not allowed: this endpoint is read-only"
    if isinstance(node, ast.CallSubquery) and node.in_transactions:
        return "CALL { … } IN TRANSACTIONS is not allowed: this endpoint is read-only"
    if isinstance(node, ast.SchemaCommand):
        kind = " ".join(node.kind.upper().split())
        if not kind.startswith(_HARMLESS_SHOW):
            return f"{kind} is a schema or administration command: this endpoint is read-only"
    return None


def _listed(name: str, patterns: tuple[str, ...] | list[str]) -> bool:
    lowered = name.lower()
    return any(fnmatchcase(lowered, p.lower()) for p in patterns)
