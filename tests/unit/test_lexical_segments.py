"""`segments` (the text-stage view of strings, quoted names and comments) reads a query the way
the Cypher lexer does: every backtick-quoted name is one segment, whatever backticks it holds."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from query_guard.cypher.lexical import segments
from query_guard.cypher.parser import parse_tokens

NAMES = st.text(st.sampled_from("`ab _1"), min_size=1, max_size=8)


def quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@given(label=NAMES, prop=NAMES)
@example(label="`x", prop="`p`")
@example(label="``", prop="a``b")
def test_quoted_names_are_the_lexers_names(label: str, prop: str) -> None:
    text = f"MATCH (n:{quoted(label)}) RETURN n.{quoted(prop)} AS p"
    names = {(s.start, s.end) for s in segments(text) if s.kind == "name"}
    tokens = parse_tokens(text)[1]
    lexed = {(t.start_pos, t.end_pos) for t in tokens if t.type == "ESCAPED_NAME"}
    assert names == lexed


def test_a_fence_does_not_start_a_name() -> None:
    text = "```cypher\nMATCH (n:`a`) RETURN n\n```"
    covered = [s for s in segments(text) if s.start <= 0 < s.end or s.start <= 31 < s.end]
    assert not covered
    assert [text[s.start : s.end] for s in segments(text) if s.start > 3 and s.end < 30] == ["`a`"]
