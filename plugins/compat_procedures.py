"""Compat procedures — answer the system procedures LLM-app libraries call at start-up from the
schema catalog, on backends that lack them (no APOC on FalkorDB or ArcadeDB).

The call is replaced by its rows, written as a literal list, and the backend evaluates the
rest of the query (YIELD, WHERE, WITH, RETURN) as written:

    CALL db.labels() YIELD label RETURN label
    → UNWIND [{`label`: 'Movie'}, {`label`: 'Person'}] AS __qg_row
      WITH __qg_row.`label` AS `label` RETURN label

Served (`[compat] procedures = "proxy"`, the default): `dbms.components`, `db.labels`,
`db.relationshipTypes`, `db.propertyKeys`, `db.schema.visualization`,
`db.schema.nodeTypeProperties`, `db.schema.relTypeProperties`, `apoc.meta.data`,
`apoc.meta.schema`, `apoc.meta.graph`, `apoc.meta.subGraph`, `apoc.meta.stats`,
`apoc.schema.nodes`, `apoc.schema.relationships`, and `SHOW CONSTRAINTS | INDEXES |
PROCEDURES | FUNCTIONS` (with YIELD / ORDER BY / SKIP / LIMIT / WHERE / RETURN; a kind such as
`SHOW VECTOR INDEXES` lists that kind) — Neo4j's column names and value shapes (see
`query_guard.compat.procedures`). Indexes and constraints are those discovery read from the
database (FalkorDB `db.indexes()` / `db.constraints()`, a Bolt backend's own SHOW; see
`query_guard.schema.indexes`). Without YIELD a SHOW lists Neo4j 5's default columns,
`YIELD *` all of them, and a YIELD may name any (`options`, `createStatement`, …). On FalkorDB,
whose indexes have no names, after `CREATE INDEX FOR (p:Person) ON (p.name)`:

    SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options
    → name 'index_…' (Neo4j's generated form), type 'RANGE', labelsOrTypes ['Person'],
      properties ['name'], options {indexProvider: 'range-1.0', indexConfig: {}}

In a statement that calls one, `apoc.any.property(x, 'k')` becomes `(x).k` and
`apoc.any.properties(x)` becomes `properties(x)`. With `[compat] schema_statements =
"acknowledge"`, `CREATE INDEX|CONSTRAINT … IF NOT EXISTS` is answered with an empty result.

Codes: `COMPAT.PROCEDURE` (info: the call was answered by the proxy; error: it yields a column
the procedure does not have), `COMPAT.SCHEMA_STATEMENT` (info: acknowledged, not run; error,
beside `SEC.WRITE`, on a read-only endpoint with the default `"error"`: how to acknowledge it).
"""

from __future__ import annotations

from query_guard.api import Edit, Finding, GuardContext, SchemaCatalog, Severity, hookimpl
from query_guard.api.compat import (
    PROCEDURES,
    ROW,
    SHOW_COMMANDS,
    UnknownColumn,
    acknowledged,
    any_property_edits,
    call_edit,
    idempotent,
    show_edit,
    shown,
)
from query_guard.api.cypher import CypherQuery, ast, is_explain

_EMPTY = SchemaCatalog({}, ())


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    catalog = ctx.schema or _EMPTY
    findings: list[Finding] = []
    for call in query.find(ast.CallProcedure):
        name = call.name.lower()
        if name not in ctx.served_procedures or name not in PROCEDURES:
            continue
        proc = PROCEDURES[name]
        try:
            edit = call_edit(query, call, proc.columns, proc.rows(catalog))
        except UnknownColumn as exc:
            findings.append(
                Finding(
                    "COMPAT.PROCEDURE",
                    Severity.ERROR,
                    f"{proc.name} has no output column {exc}; it yields " + ", ".join(proc.columns),
                    call.span,
                )
            )
            continue
        findings.append(_answered(proc.name, call.span, edit))
    if ctx.served_procedures:
        findings += _show_commands(query, catalog)
    if findings:
        findings += [
            Finding(
                "COMPAT.PROCEDURE",
                Severity.INFO,
                "apoc.any.* is answered on the proxy's rows as a property lookup",
                (e.start, e.end),
                fix=(e,),
            )
            for e in any_property_edits(query)
        ]
    findings += _schema_statements(query, ctx)
    return findings


def _unknown_column(
    name: str, columns: tuple[str, ...], exc: UnknownColumn, span: tuple[int, int]
) -> Finding:
    return Finding(
        "COMPAT.PROCEDURE",
        Severity.ERROR,
        f"{name} has no output column {exc}; it yields " + ", ".join(columns),
        span,
    )


def _answered(name: str, span: tuple[int, int], edit: Edit) -> Finding:
    return Finding(
        "COMPAT.PROCEDURE",
        Severity.INFO,
        f"{name} is answered by the proxy from its schema catalog",
        span,
        fix=(edit,),
    )


def _show_commands(query: CypherQuery, catalog: SchemaCatalog) -> list[Finding]:
    """`SHOW CONSTRAINTS | INDEXES | PROCEDURES | FUNCTIONS` with their YIELD / WHERE / RETURN
    bodies; composed commands and `EXECUTABLE BY <other user>` are the read-only rule's."""
    out = []
    for statement in query.script.statements:
        clauses = getattr(statement, "clauses", ())
        shows = [c for c in clauses if isinstance(c, ast.ShowCommand)]
        if len(shows) != 1 or len(clauses) != 1 or shows[0].target not in SHOW_COMMANDS:
            continue
        show = shows[0]
        if show.executable_by not in (None, "CURRENT USER"):
            continue
        command = SHOW_COMMANDS[show.target]
        keep = shown(show.kind)
        listed = [r for r in command.rows(catalog) if keep(r)]
        try:
            edit = show_edit(query, show, command.columns, listed, command.every)
        except UnknownColumn as exc:
            out.append(_unknown_column(f"SHOW {show.target}", command.every, exc, show.span))
            continue
        out.append(_answered(f"SHOW {show.target}", show.span, edit))
    return out


def _schema_statements(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    """Acknowledged `CREATE … IF NOT EXISTS` (info, answered empty); on a read-only endpoint
    with the default `"error"`, an error beside `SEC.WRITE` saying how to acknowledge it."""
    out = []
    for node in query.find(ast.SchemaCommand):
        if acknowledged(query, node, ctx):
            out.append(
                Finding(
                    "COMPAT.SCHEMA_STATEMENT",
                    Severity.INFO,
                    f"{node.kind} … IF NOT EXISTS acknowledged without running it "
                    "([compat] schema_statements)",
                    node.span,
                    fix=(Edit(node.span[0], node.span[1], f"UNWIND [] AS {ROW} RETURN {ROW}"),),
                )
            )
        elif ctx.settings.read_only and not is_explain(query) and idempotent(query, node):
            out.append(
                Finding(
                    "COMPAT.SCHEMA_STATEMENT",
                    Severity.ERROR,
                    f"{node.kind} … IF NOT EXISTS is not run: this endpoint is read-only",
                    node.span,
                    hint='the operator can set [compat] schema_statements = "acknowledge" to '
                    "answer it with an empty result; a client that only ensures the index or "
                    "constraint exists can also stop sending it",
                )
            )
    return out
