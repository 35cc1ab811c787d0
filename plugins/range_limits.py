"""Range limits — bound the lists `range()` builds (`LIM.RANGE`, `LIM.CAPPED`).

`range(start, end[, step])` builds its whole list in one function call: `RETURN range(1,
2000000000)` asks the database for two billion elements, and FalkorDB's query timeout does
not stop a function call in progress. A range whose bounds are integer literals and whose
size is above `[limits] max_range_size` is refused (`LIM.RANGE`, error). A range whose start
or end is known only when the query runs (`range(0, size(nodes(p)) - 1)`, `range(1, $n)`) is
bounded the way a computed LIMIT is: its end becomes `CASE WHEN (end) - (start) > k THEN
(start) + k ELSE (end) END`, with k = (max_range_size - 1) * step, so it never builds more
than max_range_size elements and builds exactly the same list below that (`LIM.CAPPED`,
info). A step known only when the query runs cannot be bounded that way and is refused
(`LIM.RANGE`). Ranges within the limit (`range(0, 10)`) are left as written. 0 switches the
limit off.

Example (max_range_size 1000000)::

    RETURN range(1, 2000000000)
    -> blocked, LIM.RANGE: range(1, 2000000000) builds 2000000000 elements …
"""

from __future__ import annotations

from query_guard.api import Edit, Finding, GuardContext, Severity, hookimpl
from query_guard.api.cypher import CypherQuery, ast


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    cap = ctx.settings.max_range_size
    # no call without the word, in some case: most queries stop here (`in` on the lowered
    # text: a fraction of a case-insensitive regular expression search's time)
    if not cap or "range" not in query.text.lower():
        return []
    findings: list[Finding] = []
    for call in query.find(ast.FunctionCall):
        if call.name.lower() == "range" and len(call.args) in (2, 3):
            finding = _check(query, call, cap)
            if finding is not None:
                findings.append(finding)
    return findings


def _check(query: CypherQuery, call: ast.FunctionCall, cap: int) -> Finding | None:
    start, end = call.args[0], call.args[1]
    step = _integer(call.args[2]) if len(call.args) == 3 else 1
    written = query.source(call)
    if step is None:
        return _refuse(call, f"{written} has a step known only when the query runs, so the "
                             f"size of its list cannot be bounded", cap)  # fmt: skip
    if step == 0:
        return None  # the database refuses a zero step itself
    first, last = _integer(start), _integer(end)
    if first is not None and last is not None:
        size = max(0, (last - first) // step + 1)
        if size <= cap:
            return None
        return _refuse(call, f"{written} builds {size} elements", cap)
    span = (cap - 1) * abs(step)
    if _bounded(query, start, end, span):
        return None
    a, b = _operand(query, start), _operand(query, end)
    if step > 0:
        bounded = f"CASE WHEN {b} - {a} > {span} THEN {a} + {span} ELSE {b} END"
    else:
        bounded = f"CASE WHEN {a} - {b} > {span} THEN {a} - {span} ELSE {b} END"
    return Finding(
        "LIM.CAPPED",
        Severity.INFO,
        f"{written} has a bound known only when the query runs: at most {cap} elements "
        "([limits] max_range_size)",
        call.span,
        fix=(Edit(*end.span, bounded),),
    )


def _refuse(call: ast.FunctionCall, problem: str, cap: int) -> Finding:
    return Finding(
        "LIM.RANGE",
        Severity.ERROR,
        f"{problem}, above the {cap} of [limits] max_range_size. Use a smaller range, or "
        "UNWIND a bounded one and page with SKIP / LIMIT",
        call.span,
    )


def _integer(node: ast.Expr) -> int | None:
    """An integer literal's value (`7`, `-7`, `+7`), else None."""
    sign = 1
    while isinstance(node, ast.UnaryOp) and node.op in ("-", "+"):
        sign = -sign if node.op == "-" else sign
        node = node.operand
    if isinstance(node, ast.Literal) and node.kind == "integer" and isinstance(node.value, int):
        return sign * node.value
    return None


def _operand(query: CypherQuery, node: ast.Expr) -> str:
    """The expression's text, parenthesised unless it is one token."""
    text = query.source(node)
    simple = isinstance(node, ast.Literal | ast.Parameter | ast.Variable) and text.strip("-")
    return text if simple else f"({text})"


def _bounded(query: CypherQuery, start: ast.Expr, end: ast.Expr, span: int) -> bool:
    """`CASE WHEN e - s > k THEN s ± k ELSE e END` with k <= span, s the range's start: the
    end this rule writes (every part checked, so a look-alike CASE is not taken for it)."""
    if not isinstance(end, ast.CaseExpr) or end.subject is not None or len(end.alternatives) != 1:
        return False
    when, then = end.alternatives[0]
    if not (isinstance(when, ast.BinaryOp) and when.op == ">" and isinstance(then, ast.BinaryOp)):
        return False
    k = _integer(when.right)
    if k is None or not 0 <= k <= span or _integer(then.right) != k or end.default is None:
        return False
    diff, first, other = when.left, _text(query, start), _text(query, end.default)
    if not (isinstance(diff, ast.BinaryOp) and diff.op == "-" and then.op in ("+", "-")):
        return False
    if _text(query, then.left) != first:
        return False
    left, right = _text(query, diff.left), _text(query, diff.right)
    return (left, right) == ((other, first) if then.op == "+" else (first, other))


def _text(query: CypherQuery, node: ast.Expr) -> str:
    text = query.source(node).strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    return text
