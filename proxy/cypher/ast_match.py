"""The AST nodes of a MATCH's Cypher 25 match mode and its planner hints (ast.py holds Match).

`MATCH REPEATABLE ELEMENTS …` / `MATCH DIFFERENT RELATIONSHIPS …` (Cypher 25) and the
planner hints of Neo4j 5 (`USING [RANGE|TEXT|POINT] INDEX [SEEK] n:Label(prop, …)`, `USING
SCAN n:Label`, `USING JOIN ON a, b`) make a `TunedMatch`, a Match with `mode` (the words,
upper case, "" for the default) and `hints`; a MATCH without either stays a plain Match. A
hint names a label or type and properties the planner should use: they are kept as text
(the schema rules judge the pattern, whose labels the hint repeats); its variables are
references like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from query_guard.cypher.ast import Match, Node, Variable


@dataclass(eq=False, slots=True)
class PlannerHint(Node):
    """`USING TEXT INDEX n:Person(name)`: kind "TEXT INDEX", label "Person", ["name"]."""

    kind: str  # "INDEX", "RANGE INDEX SEEK", "SCAN", "JOIN", …
    variables: list[Variable]
    label: str | None = None
    properties: list[str] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class TunedMatch(Match):
    """A MATCH with a match mode or planner hints."""

    mode: str = ""  # "REPEATABLE ELEMENTS", "DIFFERENT RELATIONSHIPS" or ""
    hints: list[PlannerHint] = field(default_factory=list)
