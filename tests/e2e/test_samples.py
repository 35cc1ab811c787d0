"""The statements `query_guard.schema.samples` sends for sample values: reads, as the guard
judges them, whatever the (label, property) names; values shown cut and quoted."""

from __future__ import annotations

import pytest

from query_guard.build import build_guard
from query_guard.schema.samples import MAX_CHARS, _shown, sample_query, samples_text


@pytest.mark.parametrize(("label", "prop"), [
    ("Person", "name"), ("Odd Label", "na me"), ("Ünïcode", "x-y"), ("DETACH", "DELETE"),
])  # fmt: skip
def test_sample_statements_are_reads(label: str, prop: str) -> None:
    verdict = build_guard().check(sample_query(label, prop, 3), "cypher")
    assert not verdict.blocked and verdict.query_type == "r"


def test_values_are_cut_and_quoted() -> None:
    assert len(_shown("x" * 500)) == MAX_CHARS
    assert _shown(list(range(100))) is None  # an embedding is left out
    text = samples_text({"Person": {"name": ["O'Hara", "Tom"]}})
    assert text.splitlines()[1] == "- Person.name: 'O\\'Hara', 'Tom'"
