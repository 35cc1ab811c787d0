"""The MATCH clause of the lark-callbacks -> typed AST builder (assembled in builders.py), with
its Cypher 25 match mode and Neo4j 5 planner hints (ast_match.py)."""

from __future__ import annotations

from typing import Any

from lark import Token

from query_guard.cypher.ast import Match, Variable
from query_guard.cypher.ast_match import PlannerHint, TunedMatch
from query_guard.cypher.build_children import Rules
from query_guard.cypher.build_parts import Part, span_of

RULES = Rules()
rule = RULES.rule

MATCH_CLAUSE = rule(
    "match_clause", "optional=OPTIONAL? MATCH mode=match_mode? pattern *hints where?"
)


@MATCH_CLAUSE
def match_clause(c: list[Any]) -> Match:
    optional = c[MATCH_CLAUSE.optional] is not None
    pattern, where = c[MATCH_CLAUSE.pattern].value, c[MATCH_CLAUSE.where]
    mode = c[MATCH_CLAUSE.mode]
    hints = [h for h in c[MATCH_CLAUSE.hints] if isinstance(h, PlannerHint)]
    if mode is None and not hints:  # the span: from OPTIONAL or MATCH to the pattern or WHERE
        first = c[MATCH_CLAUSE.optional]
        first = c[MATCH_CLAUSE.match] if first is None else first
        last = c[MATCH_CLAUSE.pattern] if where is None else where
        return Match((first.start_pos, last.span[1]), optional, pattern, where)
    words = mode.value if mode is not None else ""
    return TunedMatch(span_of(c), optional, pattern, where, words, hints)


MATCH_MODE = rule("match_mode", "*words")


@MATCH_MODE
def match_mode(c: list[Any]) -> Part:
    words = [t.value.upper() for t in c[MATCH_MODE.words]]
    words[1] = words[1] if words[1].endswith("S") else words[1] + "S"  # ELEMENT = ELEMENTS
    return Part("mode", " ".join(words), span_of(c))


def _words(tokens: list[Any], stop: str) -> str:
    out = []
    for t in tokens:
        if isinstance(t, Token) and t.type != "USING":
            if t.type == stop:
                break
            out.append(t.value.upper())
    return " ".join(out)


HINT_INDEX = rule("hint_index", "*parts")


@HINT_INDEX
def hint_index(c: list[Any]) -> PlannerHint:
    parts = c[HINT_INDEX.parts]
    names = [p.value for p in parts if isinstance(p, Part)]
    variable = next(p for p in parts if isinstance(p, Variable))
    kind = " ".join(
        t.value.upper() for t in parts[1 : parts.index(variable)] if isinstance(t, Token)
    )
    return PlannerHint(span_of(c), kind, [variable], names[0], names[1:])


HINT_SCAN = rule("hint_scan", "USING SCAN variable COLON label=symbolic_name")


@HINT_SCAN
def hint_scan(c: list[Any]) -> PlannerHint:
    return PlannerHint(span_of(c), "SCAN", [c[HINT_SCAN.variable]], c[HINT_SCAN.label].value)


HINT_JOIN = rule("hint_join", "USING JOIN ON *variables")


@HINT_JOIN
def hint_join(c: list[Any]) -> PlannerHint:
    variables = [v for v in c[HINT_JOIN.variables] if isinstance(v, Variable)]
    return PlannerHint(span_of(c), "JOIN", variables)
