"""The AST node of a Cypher 25 conditional query (ast.py holds the other clauses; this one only
extends `Clause`).

`WHEN c1 THEN q1 WHEN c2 THEN q2 ELSE q3` is one `Conditional` clause (the only clause of its
statement, or of a `CALL { … }` body): `conditions` = [c1, c2], `branches` = [q1, q2, q3]. The
conditions and every branch are judged like any other expression and query (the security
rules walk them; a write in any branch makes the statement a write).
"""

from __future__ import annotations

from dataclasses import dataclass

from query_guard.cypher.ast import Clause, Expr, Query


@dataclass(eq=False, slots=True)
class Conditional(Clause):
    """Cypher 25's `WHEN cond THEN … [WHEN …] [ELSE …]`: the branch of the first condition that
    holds runs (the ELSE branch when none does). `branches` holds one query per condition,
    then the ELSE query when there is one."""

    conditions: list[Expr]
    branches: list[Query]
