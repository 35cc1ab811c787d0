"""The Gremlin guard over TinkerPop's feature-test traversals, plus property-based checks.

Corpus: ../shared/corpora/gremlin/tinkerpop_traversals.jsonl (2,061 scenarios). Whether a
traversal mutates is decided here independently of the rules: a step named addV / addE /
property / drop / mergeV / mergeE / io / call anywhere in the AST. The corpus README counts
205 traversals that "use mutating steps": exactly those with one of the six write steps; io
(reading a data file into the graph) and call (services) add 26 more, which read-only mode
must block too.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.gremlin import ast
from query_guard.gremlin.errors import GremlinError
from query_guard.gremlin.parser import parse_traversal
from query_guard.guard.pipeline import Guard
from query_guard.model import Verdict
from tests.budget import examples
from tests.corpora import ROOT, corpus

WRITE_STEPS = frozenset({"addV", "addE", "property", "drop", "mergeV", "mergeE"})
MUTATING = WRITE_STEPS | {"io", "call"}
SEGRA = tomllib.loads((ROOT / "conf" / "segra-similarity.toml").read_text())["gremlin"]


@dataclass(frozen=True)
class Item:
    text: str
    steps: frozenset[str]


@cache
def _items() -> tuple[Item, ...]:
    path = corpus("gremlin", "tinkerpop_traversals.jsonl")
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        text = json.loads(line)["text"]
        try:
            tree = parse_traversal(text)
        except GremlinError:
            continue  # parse failures are test_gremlin_corpus.py's business
        out.append(Item(text, frozenset(s.name for s in tree.find_all(ast.Step))))
    return tuple(out)


@cache
def _guard(segra: bool = False, block_scans: bool = True) -> Guard:
    raw: dict = {"gremlin": SEGRA} if segra else {}
    if not block_scans:
        raw["rules"] = {"gremlin_scans": {"block": False}}
    config = parse_config(raw)
    guard = build_guard(config, entry_points=False)
    guard._cache = None
    return guard


def test_mutating_count_matches_the_corpus_readme() -> None:
    items = _items()
    assert len(items) >= 2000
    assert sum(1 for it in items if it.steps & WRITE_STEPS) == 205
    assert sum(1 for it in items if it.steps & MUTATING) == 231


def test_every_mutating_traversal_is_blocked_in_read_only_mode() -> None:
    guard = _guard()
    missed = []
    for it in _items():
        if it.steps & MUTATING:
            verdict = guard.check(it.text, "gremlin")
            sec = {c for c in verdict.codes if c in ("SEC.WRITE", "SEC.PROCEDURE")}
            if not verdict.blocked or not sec:
                missed.append(it.text)
    assert not missed, missed[:5]


def test_no_read_only_traversal_gets_a_security_finding() -> None:
    """With scan blocking off (the TinkerPop tests scan their toy graphs on purpose), no read
    is blocked; with the default, the only reason to block a read is LIM.FULL_SCAN."""
    lenient, strict = _guard(block_scans=False), _guard()
    flagged = []
    for it in _items():
        if not it.steps & MUTATING:
            verdict = lenient.check(it.text, "gremlin")
            if any(c.startswith("SEC.") for c in verdict.codes) or verdict.blocked:
                flagged.append((it.text, verdict.codes))
            default = strict.check(it.text, "gremlin")
            if default.blocked and "LIM.FULL_SCAN" not in default.codes:
                flagged.append((it.text, default.codes))
    assert not flagged, flagged[:5]


@pytest.mark.parametrize("segra", [False, True], ids=["defaults", "segra-config"])
def test_corpus_rewrites_reparse_and_are_stable(segra: bool) -> None:
    guard = _guard(segra)
    problems = []
    for it in _items():
        verdict = guard.check(it.text, "gremlin")
        if "GUARD.RULE_ERROR" in verdict.codes:
            problems.append(("rule error", it.text, verdict.codes))
        if verdict.action == "rewrite":
            _assert_reparses(verdict)
            again = guard.check(verdict.query, "gremlin")
            if again.query != verdict.query:
                problems.append(("not idempotent", it.text, again.query))
    assert not problems, problems[:5]


def _assert_reparses(verdict: Verdict) -> None:
    try:
        parse_traversal(verdict.query)
    except GremlinError as exc:  # pragma: no cover - the assertion message is the point
        pytest.fail(f"rewrite does not parse: {verdict.query!r}: {exc}")


# ---------------------------------------------------------------- property-based

_LABELS = st.sampled_from(
    [
        "case",
        "reason",
        "symptom",
        "person",
        "similarReason",
        "similarSymptoms",
        "hasReason",
        "exhibits",
        "knows",
    ]
)
_PROPS = st.sampled_from(["id", "name", "createdAt", "similarityScore", "title"])


def _q(value: str) -> str:
    return "'" + value + "'"


@st.composite
def _step(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.integers(0, 13 if depth < 2 else 11))
    label, prop = _q(draw(_LABELS)), _q(draw(_PROPS))
    number = draw(st.sampled_from(["0.3", "0.9", "5", "100000", "-1", "2L"]))
    simple = [
        f"out({label})",
        f"in({label})",
        f"both({label})",
        f"outE({label})",
        f"inE({label})",
        f"bothE({label})",
        "otherV()",
        "inV()",
        f"hasLabel({label})",
        f"has({prop}, P.gte({number}))",
        f"has({label}, {prop}, {number})",
        draw(
            st.sampled_from(
                [
                    f"limit({number})",
                    f"range(0, {number})",
                    "count()",
                    "fold()",
                    "unfold()",
                    "values('name')",
                    "dedup()",
                    "drop()",
                    f"property({prop}, 1)",
                    f"tail({number})",
                    "groupCount()",
                ]
            )
        ),
    ]
    if kind < len(simple):
        return simple[kind]
    inner = ".".join(draw(st.lists(_step(depth + 1), min_size=1, max_size=3)))
    wrapper = draw(st.sampled_from(["where", "local", "sideEffect", "coalesce", "union"]))
    return f"{wrapper}(__.{inner})"


@st.composite
def traversals(draw: st.DrawFn) -> str:
    spawn = draw(st.sampled_from(["V()", "V(1)", "E()", "V('c1')", "inject(1)"]))
    steps = draw(st.lists(_step(), max_size=7))
    terminal = draw(st.sampled_from(["", ".toList()", ".next()", ".next(50000)", ".iterate()"]))
    return "g." + ".".join([spawn, *steps]) + terminal


_FAST = settings(max_examples=examples(300))


@_FAST
@given(traversals(), st.booleans())
def test_rewrites_reparse_and_the_guard_is_idempotent(text: str, segra: bool) -> None:
    guard = _guard(segra)
    verdict = guard.check(text, "gremlin")
    assert "GUARD.RULE_ERROR" not in verdict.codes, verdict.findings
    if verdict.action == "rewrite":
        _assert_reparses(verdict)
        assert guard.check(verdict.query, "gremlin").query == verdict.query
    if verdict.blocked:
        assert verdict.query == text


@_FAST
@given(traversals())
def test_generated_writes_are_blocked(text: str) -> None:
    tree = parse_traversal(text)
    if {s.name for s in tree.find_all(ast.Step)} & MUTATING:
        assert _guard().check(text, "gremlin").blocked


@_FAST
@given(st.one_of(st.text(max_size=200), traversals().map(lambda t: t[: len(t) // 2])))
def test_the_guard_never_raises_on_arbitrary_text(text: str) -> None:
    for segra in (False, True):
        verdict = _guard(segra).check(text, "gremlin")
        assert verdict.action in ("allow", "rewrite", "block")
        assert "GUARD.RULE_ERROR" not in verdict.codes
