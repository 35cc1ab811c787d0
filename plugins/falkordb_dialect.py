"""FalkorDB dialect — rewrite the Neo4j 5 syntax LLM-app libraries send that FalkorDB lacks.

Only when the backend is FalkorDB (`GuardContext.dialect == "falkordb"`: the embedded default
or a `falkordb://` URI):

    MATCH (n:Person) CALL (n) { RETURN n.name AS nm } RETURN elementId(n), nm
    → MATCH (n:Person) CALL { WITH n RETURN n.name AS nm } RETURN toString(id(n)), nm

* `CALL (x, y) { … }` (the scope clause) → `CALL { WITH x, y … }`; `CALL (*)` → `WITH *`;
  `CALL () { … }` → `CALL { … }`.
* `elementId(x)` → `toString(id(x))` (FalkorDB has no element ids; the id is stable).

Code: `COMPAT.DIALECT` (info, fixed).
"""

from __future__ import annotations

import re

from query_guard.api import Edit, Finding, GuardContext, Severity, hookimpl
from query_guard.api.cypher import CypherQuery, ast

_SCOPE = re.compile(r"CALL\s*\(([^)]*)\)\s*\{", re.IGNORECASE)


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    if ctx.dialect != "falkordb":
        return []
    findings = []
    for sub in query.find(ast.CallSubquery):
        if sub.imports is None and not sub.import_all:
            continue
        edit = _scope_edit(query.text, sub)
        if edit is not None:
            findings.append(_finding("CALL (…) { … } written as CALL { WITH … }", sub.span, edit))
    if "elementid" not in query.text.lower():  # the name is in the text, in some case
        return findings
    for call in query.find(ast.FunctionCall):
        if call.name.lower() == "elementid" and len(call.args) == 1:
            text = f"toString(id({query.source(call.args[0])}))"
            edit = Edit(call.span[0], call.span[1], text)
            findings.append(_finding("elementId(x) written as toString(id(x))", call.span, edit))
    return findings


def _scope_edit(text: str, sub: ast.CallSubquery) -> Edit | None:
    match = _SCOPE.search(text, sub.span[0], sub.span[1])
    if match is None:
        return None
    names = match.group(1).strip()
    replacement = "CALL {" + (f" WITH {names}" if names else "")
    return Edit(match.start(), match.end(), replacement)


def _finding(message: str, span: tuple[int, int], edit: Edit) -> Finding:
    return Finding("COMPAT.DIALECT", Severity.INFO, f"{message} for FalkorDB", span, fix=(edit,))
