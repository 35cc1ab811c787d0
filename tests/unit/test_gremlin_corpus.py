"""The Gremlin parser and bytecode codec over TinkerPop's own feature-test traversals.

Corpus: ../shared/corpora/gremlin/tinkerpop_traversals.jsonl (2,061 scenarios of the 3.8 line).
Run with `-s` to see the parse rate and the failures grouped by cause (parse latency is measured
by `benchmarks/gremlin_latency.py`, not here).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pytest

from query_guard.gremlin.ast import DateTimeLit, Step, Traversal, UUIDLit, Variable
from query_guard.gremlin.bytecode import from_bytecode, to_bytecode
from query_guard.gremlin.errors import GremlinError
from query_guard.gremlin.parser import parse_traversal
from query_guard.gremlin.printer import to_text
from tests.corpora import read_jsonl


@dataclass
class Parsed:
    texts: list[str]
    trees: dict[int, Traversal]
    failures: dict[int, GremlinError]
    params: dict[int, set[str]]


@pytest.fixture(scope="module")
def corpus() -> Parsed:
    rows = read_jsonl("gremlin", "tinkerpop_traversals.jsonl")
    parsed = Parsed([r["text"] for r in rows], {}, {}, {})
    for i, row in enumerate(rows):
        parsed.params[i] = {p["name"] for p in row.get("params", [])}
        try:
            parsed.trees[i] = parse_traversal(row["text"])
        except GremlinError as exc:
            parsed.failures[i] = exc
    return parsed


def test_parse_rate(corpus: Parsed) -> None:
    total = len(corpus.texts)
    rate = len(corpus.trees) / total
    causes = Counter(f"{type(e).__name__}: {e}" for e in corpus.failures.values())
    print(f"\nGremlin corpus: parsed {len(corpus.trees)}/{total} = {rate:.2%}")
    for cause, n in causes.most_common():
        print(f"  {n:4d}  {cause}")
    assert total >= 2000
    assert rate >= 0.98


def test_parameters_stay_variables(corpus: Parsed) -> None:
    for i, tree in corpus.trees.items():
        names = {v.name for v in tree.find_all(Variable)}
        assert corpus.params[i] <= names | _unused_params(corpus.texts[i], corpus.params[i]), i


def _unused_params(text: str, params: set[str]) -> set[str]:
    return {p for p in params if p not in text}


def test_spans_locate_steps(corpus: Parsed) -> None:
    for i, tree in corpus.trees.items():
        text = corpus.texts[i]
        assert text[tree.span[0] : tree.span[1]].strip() == text.strip().rstrip(";")
        for step in tree.find_all(Step):
            source = text[step.span[0] : step.span[1]]
            assert source.startswith(step.name) and source.endswith(")"), (i, source)
            assert text[step.name_span[0] : step.name_span[1]] == step.name


def test_canonical_text_is_a_fixed_point(corpus: Parsed) -> None:
    for tree in corpus.trees.values():
        canonical = to_text(tree)
        assert to_text(parse_traversal(canonical)) == canonical


def _deterministic(tree: Traversal) -> bool:
    # UUID() and datetime() mean "a fresh value" and cannot survive any round trip unchanged
    return not any(n.value is None for n in tree.find_all(UUIDLit, DateTimeLit))


def test_bytecode_round_trip_is_identity(corpus: Parsed) -> None:
    checked = 0
    mismatches: list[tuple[str, str]] = []
    for tree in corpus.trees.values():
        if not _deterministic(tree):
            continue
        term = tree.terminal.name if tree.terminal is not None and not tree.terminal.args else None
        back = from_bytecode(to_bytecode(tree), terminal=term)
        expected = to_text(tree, terminal=term is not None)
        if to_text(back) != expected:
            mismatches.append((expected, to_text(back)))
        checked += 1
    print(f"\nbytecode round trip: {checked - len(mismatches)}/{checked} identical")
    assert not mismatches, mismatches[:5]
    assert checked >= 0.98 * len(corpus.trees)
