"""The AST nodes of Cypher 25's composed queries: conditional (`WHEN`) and sequential (`NEXT`)
queries (ast.py holds the other clauses; these only extend `Clause`).

`WHEN c1 THEN q1 WHEN c2 THEN q2 ELSE q3` is one `Conditional` clause (the only clause of its
statement, or of a `CALL { … }` body): `conditions` = [c1, c2], `branches` = [q1, q2, q3]. The
conditions and every branch are judged like any other expression and query (the security
rules walk them; a write in any branch makes the statement a write).

`q1 NEXT q2 NEXT q3` (Neo4j 2025.06+) is one `NextChain` clause, likewise alone in its
statement or `CALL { … }` body: `parts` = [q1, q2, q3]. Each part reads only the rows the part
before it returns (as if a `WITH` of those columns stood between them); the last part's result
is the statement's. Every part is judged like any other query: a write in any part makes the
statement a write.
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


@dataclass(eq=False, slots=True)
class NextChain(Clause):
    """Cypher 25's `… NEXT …`: the queries in order."""

    parts: list[Query]
