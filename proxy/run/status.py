"""The Neo4j-style status a refused or failed query carries, whatever front it came through:
the codes, and which findings caused a block. Fronts word them in their protocol (Bolt
FAILURE, Query API errors, Gremlin status, MCP error results); the audit record keeps the code.
"""

from __future__ import annotations

from query_guard.model import Finding, Severity, Verdict

SYNTAX_ERROR = "Neo.ClientError.Statement.SyntaxError"
FORBIDDEN = "Neo.ClientError.Security.Forbidden"
SEMANTIC_ERROR = "Neo.ClientError.Statement.SemanticError"
PROCEDURE_NOT_FOUND = "Neo.ClientError.Procedure.ProcedureNotFound"
REQUEST_INVALID = "Neo.ClientError.Request.Invalid"
UNKNOWN_ERROR = "Neo.DatabaseError.General.UnknownError"
# What Neo4j answers for a write in a read transaction (`accessMode: Read`).
ACCESS_MODE = "Neo.ClientError.Statement.AccessMode"


def finding_line(f: Finding) -> str:
    line = f"{f.code}: {f.message}"
    return f"{line} (hint: {f.hint})" if f.hint else line


def blocking_findings(verdict: Verdict) -> list[Finding]:
    """The findings that caused a block: its errors (all findings if a block has none)."""
    return [f for f in verdict.findings if f.severity is Severity.ERROR] or list(
        verdict.findings
    )


def block_code(verdict: Verdict) -> str:
    """The Neo4j status code for a blocked query, from its blocking findings.

    A procedure that is merely unknown (`SEC.UNKNOWN_PROCEDURE`, and nothing else forbidden)
    is ProcedureNotFound, as Neo4j answers for a procedure it lacks: libraries read that code
    to tell the user that APOC is not installed. A write refused because the client asked for
    read access is Neo4j's AccessMode error.
    """
    blocking = blocking_findings(verdict)
    if blocking and blocking[-1].rule == "access-mode":
        return ACCESS_MODE
    codes = [f.code for f in blocking]
    if any(c.startswith("SYN") for c in codes):
        return SYNTAX_ERROR
    security = [c for c in codes if c.startswith("SEC")]
    if security and all(c == "SEC.UNKNOWN_PROCEDURE" for c in security):
        return PROCEDURE_NOT_FOUND
    if security:
        return FORBIDDEN
    return SEMANTIC_ERROR


def block_message(verdict: Verdict) -> str:
    """One `CODE: message (hint: …)` line per finding that caused the block."""
    return "\n".join(finding_line(f) for f in blocking_findings(verdict)) or (
        "query blocked by the guard"
    )
