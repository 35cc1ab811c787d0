"""The lean LALR driver (`query_guard.cypher.lalr_driver`) builds exactly what lark's own
parser builds: the same AST and the same tokens (type, text, every position) for every text
that parses, and it gives up (lark then reports the error) for every text that does not."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Token
from lark.exceptions import LarkError

from query_guard.cypher.build_parts import BuildError
from query_guard.cypher.lalr_driver import Fallback, LalrDriver
from query_guard.cypher.parser import _parser
from tests.budget import examples
from tests.corpora import read_data_csv, read_jsonl


def _token_facts(tokens: list[Token]) -> list[tuple[Any, ...]]:
    return [
        (t.type, t.value, t.start_pos, t.end_pos, t.line, t.column, t.end_line, t.end_column)
        for t in tokens
    ]


def _lark(text: str) -> tuple[str, list[tuple[Any, ...]]] | None:
    """What lark's interactive parser builds (the path every query took before the driver)."""
    tokens: list[Token] = []
    try:
        cursor = _parser().parse_interactive(text)
        for token in cursor.iter_parse():
            tokens.append(token)
        script = cursor.feed_eof(tokens[-1] if tokens else None)
    except (LarkError, BuildError, RecursionError):
        return None
    return repr(script), _token_facts(tokens)


_DRIVER = LalrDriver(_parser())


def _driver(text: str) -> tuple[str, list[tuple[Any, ...]]] | None:
    tokens: list[Token] = []
    try:
        script = _DRIVER.parse(text, tokens)
    except Fallback:
        return None
    return repr(script), _token_facts(tokens)


def _same(text: str) -> None:
    assert _driver(text) == _lark(text), text


_NAME = st.sampled_from(["n", "m", "p", "x", "Person", "Movie", "`a b`", "match", "count"])
_LABELS = st.lists(_NAME, max_size=2).map(lambda ls: "".join(f":{x}" for x in ls))
_VALUE = st.sampled_from(["1", "2.5", "'s'", '"t"', "$p", "null", "true", "[1, 2]", "{k: 1}"])


@st.composite
def _queries(draw: st.DrawFn) -> str:
    """Mostly valid Cypher: paths, WHERE, WITH, RETURN with expressions and comments."""
    node = f"({draw(_NAME)}{draw(_LABELS)})"
    path = node
    for _ in range(draw(st.integers(0, 3))):
        rel = draw(st.sampled_from(["-[:R]->", "<-[r:S|T]-", "--", "-[*1..3]-", "-->"]))
        path += rel + f"({draw(_NAME)}{draw(_LABELS)})"
    op = draw(st.sampled_from(["=", "<>", "<", ">=", "IN", "STARTS WITH", "=~", "+", "AND"]))
    where = draw(st.sampled_from(["", f" WHERE {draw(_NAME)}.{draw(_NAME)} {op} "]))
    where += draw(_VALUE) if where else ""
    ret = draw(st.sampled_from(["*", "n", "count(*) AS c", "n.x, m.y ORDER BY n.x LIMIT 3"]))
    middle = draw(st.sampled_from(["", " WITH DISTINCT n", " /* c */ ", "\n// c\n", " OPTIONAL "]))
    return f"MATCH {path}{where}{middle} RETURN {ret}"


@settings(max_examples=examples(300))
@given(_queries())
def test_generated_queries_build_the_same(text: str) -> None:
    _same(text)


_SPACES = st.sampled_from([" ", "  ", "\t", "\n", " \n", "\r\n ", "\u00a0", " \u00a0", "\ufeff"])


@settings(max_examples=examples(200))
@given(_queries(), st.lists(_SPACES, min_size=1, max_size=8))
def test_any_whitespace_between_tokens_builds_the_same(text: str, spaces: list[str]) -> None:
    """Lone spaces are skipped without a regex match: other whitespace keeps lark's lines and
    columns."""
    parts = text.split(" ")
    spaced = parts[0]
    for i, part in enumerate(parts[1:]):
        spaced += spaces[i % len(spaces)] + part
    _same(spaced)


_PIECES = st.sampled_from(
    [*"()[]{}<>-=:|,.;*+!'\"` \n0123456789anx", "MATCH ", "RETURN ", " WHERE ", "-->", "<-["]
)


@settings(max_examples=examples(300))
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_broken_text_leaves_lark_to_report(text: str) -> None:
    _same(text)


def test_in_repo_statements_build_the_same() -> None:
    for row in read_data_csv("direction_competition.csv"):
        _same(row["statement"])
        _same(row["correct_query"])


def test_tck_queries_build_the_same() -> None:
    for item in read_jsonl("cypher", "opencypher_tck_queries.jsonl")[::3]:
        _same(item["text"])
