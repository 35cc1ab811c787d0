"""The AST node of a simple CASE's extended alternatives (Neo4j 5; ast.py holds CaseExpr).

In `CASE x WHEN 1, 2 THEN … WHEN > 3 THEN … WHEN IS NULL THEN … END` an alternative may
compare the subject by an operator or a postfix predicate, or list several values: each such
`WHEN` is a `CaseWhen` in the CaseExpr's alternatives — `WHEN > 3` is op ">" with operands
[3], `WHEN STARTS WITH 'a'` op "STARTS WITH", `WHEN IS NULL` op "IS NULL" with none, `WHEN IS
:: INTEGER` op "IS :: INTEGER", `WHEN IS Person` op "IS" with the label expression, `WHEN 1,
2` op "ANY OF" with the values (each a plain value or a CaseWhen). A plain `WHEN 1` stays the
value itself. Rules walk the operands like any other expression.
"""

from __future__ import annotations

from dataclasses import dataclass

from query_guard.cypher.ast import Expr, Node


@dataclass(eq=False, slots=True)
class CaseWhen(Expr):
    """An extended `WHEN` of a simple CASE: the subject compared by `op` with `operands`."""

    op: str
    operands: list[Node]
