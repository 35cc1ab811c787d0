"""What the guard's findings look like to a Bolt client: FAILURE metadata for blocked queries
and errors, `notifications` (Bolt < 5.5) or GQL `statuses` (Bolt >= 5.5) for rewrites.

Messages are written for an LLM to act on: one `CODE: message (hint: ...)` line per finding.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from query_guard.model import Finding, Severity, Verdict
from query_guard.run.status import (
    FORBIDDEN,
    PROCEDURE_NOT_FOUND,
    REQUEST_INVALID,
    SEMANTIC_ERROR,
    SYNTAX_ERROR,
    block_code,
    blocking_findings,
    finding_line,
)
from query_guard.run.status import (
    UNKNOWN_ERROR as UNKNOWN_ERROR,  # re-exported: the fronts name it diag.UNKNOWN_ERROR
)
from query_guard.wire.bolt_handshake import Version
from query_guard.wire.packstream import Packed

GQL_ERRORS_SINCE: Version = (5, 7)
GQL_STATUSES_SINCE: Version = (5, 5)

# GQL status (SQLSTATE-like) and its standard description for each Neo4j code we emit.
_GQL_FOR_CODE = {
    SYNTAX_ERROR: ("42001", "error: syntax error or access rule violation - invalid syntax"),
    FORBIDDEN: ("42NFF", "error: syntax error or access rule violation - permission/access denied"),
    SEMANTIC_ERROR: ("42000", "error: syntax error or access rule violation"),
    PROCEDURE_NOT_FOUND: (
        "42N08",
        "error: syntax error or access rule violation - no such procedure or function",
    ),
    REQUEST_INVALID: ("08N06", "error: connection exception - protocol error"),
}
_GQL_UNAVAILABLE = ("08000", "error: connection exception")
_GQL_GENERAL = ("50N42", "error: general processing exception - unexpected error")

_CLASSIFICATION = {
    "ClientError": "CLIENT_ERROR",
    "TransientError": "TRANSIENT_ERROR",
    "DatabaseError": "DATABASE_ERROR",
}

# Notification category by finding family (the driver's NotificationClassification values).
_CATEGORY = {
    "SYN": "GENERIC", "DIR": "GENERIC", "SCH": "SCHEMA", "ENT": "GENERIC", "LIM": "PERFORMANCE",
    "SEC": "SECURITY", "SIM": "GENERIC", "ANC": "GENERIC",
}  # fmt: skip


def block_failure(verdict: Verdict, version: Version) -> dict[str, Any]:
    """FAILURE metadata for a blocked query: only the findings that caused the block."""
    blocking = blocking_findings(verdict)
    message = "\n".join(finding_line(f) for f in blocking) or "query blocked by the guard"
    text = verdict.original or verdict.query
    position = _position(text, blocking[0].span[0]) if blocking else None
    return failure_metadata(block_code(verdict), message, version, position)


def failure_metadata(
    code: str, message: str, version: Version, position: dict[str, int] | None = None
) -> dict[str, Any]:
    """FAILURE fields: `code`/`message` before Bolt 5.7, GQL error fields from 5.7 on."""
    if version < GQL_ERRORS_SINCE:
        return {"code": code, "message": message}
    if code in _GQL_FOR_CODE:
        gql_status, description = _GQL_FOR_CODE[code]
    elif code.endswith("DatabaseUnavailable"):
        gql_status, description = _GQL_UNAVAILABLE
    else:
        gql_status, description = _GQL_GENERAL
    parts = code.split(".")
    diagnostic: dict[str, Any] = {
        "OPERATION": "",
        "OPERATION_CODE": "0",
        "CURRENT_SCHEMA": "/",
        "_classification": _CLASSIFICATION.get(parts[1] if len(parts) > 1 else "", "UNKNOWN"),
    }
    if position is not None:
        diagnostic["_position"] = position
    first_line = message.splitlines()[0] if message else ""
    return {
        "neo4j_code": code,
        "message": message,
        "gql_status": gql_status,
        "description": f"{description}. {first_line}" if first_line else description,
        "diagnostic_record": diagnostic,
    }


def _position(text: str, offset: int) -> dict[str, int]:
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return {"offset": offset, "line": line, "column": column}


def _severity(f: Finding) -> str:
    return "INFORMATION" if f.severity is Severity.INFO else "WARNING"


def _category(f: Finding) -> str:
    return _CATEGORY.get(f.code.split(".", 1)[0], "GENERIC")


def notifications(
    verdict: Verdict, min_severity: str | None, disabled: set[str]
) -> list[dict[str, Any]]:
    """Bolt < 5.5 notifications, one per finding, after the client's filters."""
    text = verdict.original or verdict.query
    out = []
    for f in _visible(verdict.findings, min_severity, disabled):
        out.append(
            {
                "code": f.code,
                "title": f.message,
                "description": finding_line(f),
                "severity": _severity(f),
                "category": _category(f),
                "position": _position(text, f.span[0]),
            }
        )
    return out


def statuses(
    verdict: Verdict | None,
    had_records: bool,
    had_fields: bool,
    min_severity: str | None,
    disabled: set[str],
) -> list[Any]:
    """Bolt >= 5.5 GQL status objects: the findings plus the outcome status, in the order the
    driver expects (no data, then warnings, then success, then informational). The outcome
    status is one of three constants, already in PackStream form (`Packed`)."""
    no_data = not had_records and had_fields
    outcome = _OUTCOMES[had_records, had_fields]
    warnings: list[dict[str, Any]] = []
    infos: list[dict[str, Any]] = []
    if verdict is not None:
        text = verdict.original or verdict.query
        for f in _visible(verdict.findings, min_severity, disabled):
            warning = f.severity is not Severity.INFO
            (warnings if warning else infos).append(
                {
                    "gql_status": "01N42" if warning else "03N42",
                    "status_description": ("warn: " if warning else "info: ") + finding_line(f),
                    "neo4j_code": f.code,
                    "title": f.message,
                    "diagnostic_record": {
                        "OPERATION": "",
                        "OPERATION_CODE": "0",
                        "CURRENT_SCHEMA": "/",
                        "_severity": _severity(f),
                        "_classification": _category(f),
                        "_position": _position(text, f.span[0]),
                    },
                }
            )
    if no_data:
        return [outcome, *warnings, *infos]
    return [*warnings, outcome, *infos]


def _outcome(status: str, description: str) -> Packed:
    return Packed.of({
        "gql_status": status, "status_description": description,
        "diagnostic_record": {"OPERATION": "", "OPERATION_CODE": "0", "CURRENT_SCHEMA": "/"},
    })  # fmt: skip


_SUCCESS = _outcome("00000", "note: successful completion")
_NO_DATA = _outcome("02000", "note: no data")
_OMITTED = _outcome("00001", "note: successful completion - omitted result")
# (had records, had fields) -> the outcome status of a summary
_OUTCOMES = {(True, True): _SUCCESS, (True, False): _SUCCESS, (False, True): _NO_DATA,
             (False, False): _OMITTED}  # fmt: skip


def _visible(
    findings: tuple[Finding, ...], min_severity: str | None, disabled: set[str]
) -> Iterator[Finding]:
    """Findings that pass the client's notification filters (HELLO / BEGIN / RUN)."""
    if min_severity == "OFF":
        return
    for f in findings:
        if min_severity == "WARNING" and f.severity is Severity.INFO:
            continue
        if _category(f) in disabled:
            continue
        yield f
