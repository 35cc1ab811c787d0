"""The AST nodes of an `OPTIONAL CALL` and of a `CALL { … } IN TRANSACTIONS`'s options (ast.py
holds CallProcedure and CallSubquery; these only extend them).

`OPTIONAL CALL db.labels() YIELD label` (Neo4j 5.24+) is an OptionalCallProcedure: a row of
nulls when the procedure yields nothing, as OPTIONAL MATCH. A CALL subquery that is OPTIONAL,
or runs IN TRANSACTIONS with an error mode or a status report, is a TunedCall: `optional`,
`on_error` ("CONTINUE", "BREAK", "FAIL", "RETRY" or "" when not written), `then` (RETRY's
fallback: "CONTINUE", "BREAK", "FAIL" or "") and `report` (the REPORT STATUS variable's
name). Both are still a CallProcedure / CallSubquery to every rule: a write procedure behind
OPTIONAL, or a write inside an optional or retried subquery, is judged as without it.
"""

from __future__ import annotations

from dataclasses import dataclass

from query_guard.cypher.ast import CallProcedure, CallSubquery


@dataclass(eq=False, slots=True)
class OptionalCallProcedure(CallProcedure):
    """`OPTIONAL CALL proc(…) [YIELD …]`."""


@dataclass(eq=False, slots=True)
class TunedCall(CallSubquery):
    """`OPTIONAL CALL { … }` and/or `CALL { … } IN TRANSACTIONS ON ERROR … [REPORT STATUS AS s]`."""

    optional: bool = False
    on_error: str = ""
    then: str = ""
    report: str | None = None  # the name only: scopes bind it after the call, like YIELD
