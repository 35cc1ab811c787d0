"""The AST node of a Neo4j 5.26 dynamic label or relationship type (ast.py holds the other
label expressions; this one only extends `LabelExpr`).

`:$(row.label)` / `:$all($labels)` is `LabelDynamic(mode="all", expr=…)`, `:$any($types)` is
`LabelDynamic(mode="any", expr=…)`: the names are only known when the query runs, so the schema
rules cannot check them (they say so with `SCH.DYNAMIC_NAME`, info); the expression inside is
judged like any other (security rules walk it).
"""

from __future__ import annotations

from dataclasses import dataclass

from query_guard.cypher.ast import Expr, LabelExpr


@dataclass(eq=False, slots=True)
class LabelDynamic(LabelExpr):
    """`$(expr)` (= `$all(expr)`) or `$any(expr)` in a label or type expression."""

    mode: str  # "all" | "any"
    expr: Expr
