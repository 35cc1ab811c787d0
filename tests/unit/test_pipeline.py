"""The pipeline's contract: fixpoint rounds, span-preserving edits, idempotence, never crashing."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.cypher.parser import parse
from query_guard.guard.hookspecs import hookimpl
from query_guard.model import Action, Edit, Finding, Severity
from query_guard.schema.catalog import SchemaCatalog
from tests.budget import examples

SCHEMA = SchemaCatalog.from_dict(
    {
        "nodes": {"Person": ["name", "born"], "Organization": ["name"], "Movie": ["title"]},
        "relationships": [
            {"start": "Person", "type": "WORKS_AT", "end": "Organization"},
            {"start": "Person", "type": "KNOWS", "end": "Person", "reciprocity": 1.0},
            {"start": "Person", "type": "ACTED_IN", "end": "Movie"},
        ],
    }
)
GUARD = build_guard(parse_config({}), SCHEMA, entry_points=False)

labels = st.sampled_from(["", ":Person", ":Organization", ":Movie", ":Genre", ":Person:Movie"])
types = st.sampled_from(["", ":WORKS_AT", ":KNOWS", ":ACTED_IN", ":STARRED_IN", ":KNOWS|WORKS_AT"])
arrows = st.sampled_from([("-[", "]->"), ("<-[", "]-"), ("-[", "]-")])
space = st.sampled_from(["", " ", "  ", "\n"])


@st.composite
def queries(draw: st.DrawFn) -> str:
    hops = draw(st.integers(1, 3))
    names = ["a", "b", "c", "d"]
    out = f"MATCH ({names[0]}{draw(labels)})"
    for i in range(hops):
        left, right = draw(arrows)
        out += f"{left}{draw(types)}{right}({names[i + 1]}{draw(labels)})"
    if draw(st.booleans()):
        out += f"{draw(space)}WHERE a.name = 'x' // note"
    out += draw(st.sampled_from(["\nRETURN a", " RETURN count(*)", " RETURN a.name LIMIT 99999"]))
    return out


def _outside_spans_unchanged(original: str, output: str, spans: list[tuple[int, int]]) -> bool:
    """The bytes of `original` outside every span appear in `output` unchanged and in order,
    with only replacement text where the spans were."""
    pieces, pos = [], 0
    for start, end in sorted(spans):
        pieces.append(original[pos : max(pos, start)])
        pos = max(pos, end)
    pieces.append(original[pos:])
    pattern = "(?:.*?)".join(re.escape(p) for p in pieces)
    return re.fullmatch(pattern, output, re.S) is not None


@settings(max_examples=examples(300))
@given(queries())
def test_rewrites_reparse_are_idempotent_and_stay_in_their_spans(query: str) -> None:
    verdict = GUARD.check(query)
    assert verdict.action in (Action.ALLOW, Action.REWRITE)
    parse(verdict.query)  # a rewritten query always re-parses
    assert GUARD.check(verdict.query).query == verdict.query  # idempotent
    fixed = [f.span for f in verdict.findings if f.fix]
    assert _outside_spans_unchanged(query, verdict.query, fixed), (query, verdict.query, fixed)


@settings(max_examples=examples(300))
@given(st.text(max_size=200))
def test_guard_never_raises_on_arbitrary_text(text: str) -> None:
    verdict = GUARD.check(text)
    assert verdict.action in tuple(Action)
    if verdict.action is Action.BLOCK:
        assert verdict.query == text


def test_parse_error_is_a_structured_blocking_finding() -> None:
    verdict = GUARD.check("MATCH (n:Person)\nRETRUN n")
    assert verdict.action is Action.BLOCK
    (finding,) = verdict.findings
    assert finding.code == "SYN.PARSE"
    assert "line 2" in finding.message
    assert "expected one of: RETURN" in finding.message
    assert finding.hint == "did you mean RETURN?"


def test_fixes_from_several_rounds_compose_and_map_to_original_spans() -> None:
    text = "MATCH (o:Organization)-[:EMPLOYS]->(p:Person) RETURN o.name"
    verdict = GUARD.check(text)
    assert verdict.query == (
        "MATCH (o:Organization)<-[:WORKS_AT]-(p:Person) RETURN o.name LIMIT 1000"
    )
    codes = verdict.codes
    assert codes.count("SCH.UNKNOWN_REL_TYPE") == 1 and "DIR.REVERSED" in codes
    rel_type = next(f for f in verdict.findings if f.code == "SCH.UNKNOWN_REL_TYPE")
    assert text[rel_type.span[0] : rel_type.span[1]] == "EMPLOYS"
    limit = next(f for f in verdict.findings if f.code == "LIM.INJECTED")
    assert limit.span == (len(text), len(text))


def test_verdicts_are_cached_per_guard() -> None:
    guard = build_guard(parse_config({}), SCHEMA, entry_points=False)
    first = guard.check("MATCH (n:Person) RETURN n")
    assert guard.check("MATCH (n:Person) RETURN n") is first


class _Shout:
    """A third-party rule: upper-cases a lower-case `match` keyword."""

    name = "shout"

    @hookimpl
    def guard_cypher(self, query, ctx):  # type: ignore[no-untyped-def]
        if query.text.startswith("match"):
            return [
                Finding(
                    "PAT.KEYWORD", Severity.INFO, "upper-cased", (0, 5), fix=(Edit(0, 5, "MATCH"),)
                )
            ]
        return []


class _Broken:
    name = "broken"

    @hookimpl
    def guard_cypher(self, query, ctx):  # type: ignore[no-untyped-def]
        raise RuntimeError("bug in a plugin")


def test_third_party_rule_runs_and_a_crashing_rule_is_contained() -> None:
    guard = build_guard(
        parse_config({"guard": {"disable": ["limits"]}}),
        SCHEMA,
        extra_plugins=[_Shout(), _Broken()],
        entry_points=False,
    )
    verdict = guard.check("match (n:Person) RETURN n")
    assert verdict.query == "MATCH (n:Person) RETURN n"
    assert "PAT.KEYWORD" in verdict.codes
    broken = [f for f in verdict.findings if f.code == "GUARD.RULE_ERROR"]
    assert broken and broken[0].rule == "broken" and broken[0].severity == "warning"


class _Restless:
    """A rule that always wants one more edit: the pipeline must stop after MAX_ROUNDS."""

    name = "restless"

    @hookimpl
    def guard_cypher(self, query, ctx):  # type: ignore[no-untyped-def]
        end = len(query.text)
        return [Finding("PAT.MORE", Severity.INFO, "one more space", (end, end),
                        fix=(Edit(end, end, " "),))]  # fmt: skip


def test_rounds_are_bounded() -> None:
    from query_guard.guard.pipeline import MAX_ROUNDS

    guard = build_guard(
        parse_config({"guard": {"disable": ["limits"]}}), SCHEMA,
        extra_plugins=[_Restless()], entry_points=False,
    )  # fmt: skip
    verdict = guard.check("RETURN 1")
    assert verdict.query == "RETURN 1" + " " * MAX_ROUNDS
    assert verdict.action == "rewrite" and "PAT.MORE" in verdict.codes
