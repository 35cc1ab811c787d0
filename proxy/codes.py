"""Every finding code query-guard emits, with its meaning: the source of `docs/codes.md`.

A test keeps this table, the code and the page in step: each code literal in `proxy/` and
`plugins/` is listed here, each code listed here is emitted somewhere, and `docs/codes.md` is
exactly `render()`. Regenerate the page with `python -m query_guard.codes > docs/codes.md`.
Codes a tier-2 repair plugin names (an LLM's `ERROR: AGG.DISTINCT`) come from its reply and
are not listed one by one: their families are.
"""

from __future__ import annotations

from dataclasses import dataclass

FAMILIES: dict[str, str] = {
    "SYN": "syntax: the text is not one parsable query",
    "DIR": "direction: an arrow against the stored direction",
    "SCH": "schema: a name or path the schema lacks",
    "ENT": "entity: a literal that is not stored",
    "PAT": "pattern (named by tier-2 repair)",
    "AGG": "aggregation (named by tier-2 repair)",
    "FIL": "filter",
    "RET": "return (named by tier-2 repair)",
    "SIM": "similarity walks (SEGRA P1-P3)",
    "ANC": "anchors (SEGRA P4)",
    "LIM": "limits on results and resources",
    "SEC": "security: what must not run",
    "COMPAT": "compatibility with Neo4j-only client libraries (answered or rewritten by the proxy)",
    "GUARD": "the guard itself",
    "REPAIR": "the execution-triggered repair loop",
    "PLAN": "plan validation (`/v1/plan/validate`, MCP `validate_plan`; SEGRA)",
}


@dataclass(frozen=True, slots=True)
class Code:
    severity: str  # what the code usually is: error (blocks), warning, info
    meaning: str


CODES: dict[str, Code] = {
    "SYN.PARSE": Code("error", "unparsable query; the message has line, column, expected tokens"),
    "SYN.CYPHER_VERSION": Code(
        "error", "Cypher 25 syntax (FILTER, LET, WHEN, NEXT, match modes) for a Cypher 5 database"
    ),
    "SYN.FENCE": Code("warning", "markdown fences or prose around the query removed"),
    "DIR.REVERSED": Code("warning", "arrow points against the only declared direction; flipped"),
    "DIR.RECIPROCAL": Code(
        "warning", "undirected pattern over a reciprocal type (double counting); made directed"
    ),
    "DIR.SIMILARITY_ASYMMETRIC": Code(
        "warning", "similarity edge walked one way (`outE/inE`); rewritten to `bothE … otherV`"
    ),
    "DIR.FLIPPED_ON_EMPTY": Code(
        "info",
        "repair tier 1: arrows (Gremlin: in/out hops) reversed after an empty result, and rows"
        " appeared",
    ),
    "SCH.UNKNOWN_REL_TYPE": Code(
        "warning", "relationship type the schema never declares; replaced when one fits"
    ),
    "SCH.UNKNOWN_LABEL": Code("warning", "label absent from the schema (hint: closest label)"),
    "SCH.UNKNOWN_PROPERTY": Code(
        "warning", "property key absent from the schema (hint: closest key)"
    ),
    "SCH.NO_PATH": Code("warning", "pattern fits the schema in neither direction"),
    "SCH.DYNAMIC_NAME": Code(
        "info", "a dynamic label or type (`:$(expr)`, `:$any(…)`): named at run time, so the "
        "schema rules cannot check it"
    ),
    "SCH.UNKNOWN_TABLE": Code(
        "warning", "SQL table absent from the schema; fixed when exactly one name is close"
    ),
    "SCH.UNKNOWN_COLUMN": Code(
        "warning", "SQL column absent from its tables; fixed when exactly one name is close"
    ),
    "SCH.AMBIGUOUS_COLUMN": Code(
        "warning", "unqualified SQL column that several joined tables have"
    ),
    "SCH.NO_SCHEMA": Code(
        "info", "no schema catalog yet (e.g. waiting for a client's credentials): schema rules off"
    ),
    "ENT.LITERAL": Code("info", "a literal matches no stored value; grounding notes say what is"),
    "FIL.CASE_INSENSITIVE": Code(
        "info", "repair relaxation: exact string equality made case-insensitive, rows appeared"
    ),
    "SIM.WINDOW": Code("error", "SEGRA P1: time window missing on the destination case"),
    "SIM.THRESHOLD": Code("error", "SEGRA P2: score threshold missing on the similarity edge"),
    "SIM.BRACKET": Code("error", "SEGRA P3: similarity step not bracketed by its within-case edge"),
    "ANC.ID": Code("warning", "SEGRA P4: anchor addressed by a property cases do not have"),
    "LIM.INJECTED": Code("info", "no LIMIT: the default limit appended"),
    "LIM.CAPPED": Code(
        "info", "LIMIT above the maximum lowered to it; a computed `range()` bound bounded"
    ),
    "LIM.RANGE": Code(
        "error", "a `range()` building more elements than `[limits] max_range_size`"
    ),
    "LIM.FULL_SCAN": Code("warning", "unfiltered full-graph scan (`g.V()`, `g.E()`)"),
    "LIM.QUERY_SIZE": Code(
        "error", "query text above `[limits] max_query_bytes` or `max_query_tokens` (pre-parse)"
    ),
    "LIM.NESTING": Code("error", "brackets nested deeper than `[limits] max_nesting` (pre-parse)"),
    "LIM.PARAMETERS": Code("error", "parameters above their count, byte or nesting limit"),
    "LIM.MESSAGE_SIZE": Code(
        "error", "a Bolt message holding more PackStream values than `max_message_elements`"
    ),
    "LIM.RESULT_SIZE": Code(
        "warning",
        "a result cut off at `max_result_rows`/`max_result_bytes` (SQL: refused, as an error)",
    ),
    "LIM.TIMEOUT": Code("error", "the database's query timeout or the guard's time budget ran out"),
    "LIM.ABANDONED": Code(
        "error",
        "refused at once: `[limits] max_abandoned_queries` timed-out queries still run on a "
        "Bolt upstream that does not stop them (ArcadeDB)",
    ),
    "SEC.WRITE": Code(
        "error", "a write, schema command or administration SHOW on a read-only endpoint"
    ),
    "SEC.ADMIN": Code(
        "error",
        "an administration command (databases, users, roles, privileges, servers): never "
        "forwarded, read-only or not",
    ),
    "SEC.PROCEDURE": Code(
        "error", "a procedure or function that writes, runs code or loads data; unlisted functions"
    ),
    "SEC.FUNCTION": Code(
        "error",
        "a SQL function off the dialect's allow-list of pure built-ins (docs/functions.md): "
        "large objects, sequences, locks, replication, settings, files, exports, …",
    ),
    "SEC.CATALOG": Code(
        "error",
        "a SQL system catalog holding secrets, server settings or other sessions' queries "
        "(`pg_authid`, `pg_stat_activity`, `mysql.user`, …)",
    ),
    "SEC.UNKNOWN_PROCEDURE": Code(
        "error", "a procedure neither allowed nor served by the proxy (Bolt: ProcedureNotFound)"
    ),
    "SEC.SCRIPT": Code("error", "Gremlin that is not the traversal language (Groovy, closures)"),
    "SEC.MULTI_STATEMENT": Code("error", "more than one statement in one query"),
    "SEC.AMBIGUOUS_TEXT": Code(
        "error",
        "text a database could read differently from the guard (comment or escape tricks, "
        "a name holding a line break or control character)",
    ),
    "SEC.DATABASE": Code(
        "error", "a graph / database the proxy does not serve (`USE`, the Bolt database field)"
    ),
    "COMPAT.PROCEDURE": Code(
        "info",
        "a system procedure answered from the schema catalog as literal rows (error: a YIELD "
        "names a column it does not have)",
    ),
    "COMPAT.SCHEMA_STATEMENT": Code(
        "info",
        "`CREATE INDEX|CONSTRAINT … IF NOT EXISTS` acknowledged without running it (error on a "
        'read-only endpoint with `schema_statements = "error"`: how to acknowledge it)',
    ),
    "COMPAT.DIALECT": Code(
        "info", "Neo4j 5 syntax the backend lacks rewritten (FalkorDB: `CALL (x) {…}`, elementId)"
    ),
    "GUARD.RULE_ERROR": Code("warning", "a rule raised; it was skipped (error for security rules)"),
    "REPAIR.ATTEMPT": Code("info", "one attempt of the repair loop (query, outcome, rows)"),
    "REPAIR.SUGGESTED": Code(
        "warning",
        "a speculative repair returned rows but was not applied (no opt-in); hint: the query",
    ),
    "PLAN.EMPTY": Code("error", "a plan without branches, or a branch without a query or id"),
    "PLAN.SIZE": Code("error", "more branches than `[plan] max_branches`"),
    "PLAN.DUPLICATE_ID": Code("error", "two or more branches share an id"),
    "PLAN.UNKNOWN_DEPENDENCY": Code("error", "`depends_on` names an id no branch has"),
    "PLAN.UNKNOWN_ROUTE": Code(
        "error", "a route that is neither a language served here nor in `[plan] routes`"
    ),
    "PLAN.CYCLE": Code("error", "branches that depend on each other in a circle (the path)"),
    "PLAN.DEPTH": Code("error", "a dependency chain deeper than `[plan] max_depth` branches"),
}


def render() -> str:
    """docs/codes.md: the families, then one row per code."""
    lines = [
        "# Finding codes",
        "",
        "Generated from `proxy/codes.py` (`python -m query_guard.codes > docs/codes.md`); a test",
        "keeps this page, that table and the codes the code emits in step. Severity is the usual",
        "one: `error` blocks the query (nothing reaches the database).",
        "",
        "| family | about |",
        "|---|---|",
        *(f"| `{family}` | {about} |" for family, about in FAMILIES.items()),
        "",
        "| code | severity | meaning |",
        "|---|---|---|",
    ]
    for name in sorted(CODES, key=lambda c: (list(FAMILIES).index(c.split(".")[0]), c)):
        code = CODES[name]
        lines.append(f"| `{name}` | {code.severity} | {code.meaning} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
