"""Prose and fence removal never hides a write (issue 19, item 8): text the fences rule would
delete that holds a write clause — or a Gremlin mutation step — is judged as written, so in
read-only mode the client hears that its write is refused instead of silently getting a read."""

from __future__ import annotations

import pytest

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.model import Action

GUARD = build_guard(None)


@pytest.mark.parametrize(
    ("text", "language", "word"),
    [
        ("MATCH (n) RETURN n\n\nDETACH DELETE n.", "cypher", "DETACH"),
        ("MATCH (n) RETURN n\n\ndetach delete n, please.", "cypher", "detach"),
        ("MATCH (n) RETURN n\n\nThen CREATE (:X) to log it.", "cypher", "CREATE"),
        ("```cypher\nMATCH (n) RETURN n\n```\nLOAD CSV FROM 'x' AS r", "cypher", "LOAD CSV"),
        ("g.V().hasLabel('person')\n\nthen g.V().drop()", "gremlin", "drop("),
        ("```groovy\ng.V().hasLabel('person')\n```\ng.addV('x')", "gremlin", "addV("),
    ],
)
def test_a_write_around_the_query_is_refused_not_removed(
    text: str, language: str, word: str
) -> None:
    verdict = GUARD.check(text, language)
    assert verdict.action is Action.BLOCK
    [finding] = verdict.findings
    assert finding.code == "SEC.WRITE" and repr(word) in finding.message
    assert "judged as written" in finding.message
    assert text[finding.span[0] : finding.span[1]] == word


def test_prose_without_a_write_is_still_removed() -> None:
    verdict = GUARD.check("MATCH (n) RETURN n LIMIT 5\n\nThis lists five nodes.")
    assert verdict.action is Action.REWRITE
    assert verdict.query == "MATCH (n) RETURN n LIMIT 5"


def test_with_writes_allowed_the_whole_text_is_judged_as_written() -> None:
    guard = build_guard(parse_config({"guard": {"read_only": False}}))
    verdict = guard.check("MATCH (n) RETURN n\n\nDETACH DELETE n.")
    assert verdict.action is Action.BLOCK
    assert [f.code for f in verdict.findings] == ["SYN.PARSE"]  # nothing was removed
