"""The driver's lexer tables (`query_guard.cypher.lalr_lexer`) match what lark's contextual
lexer matches: in every parser state, the alternation picked by the text's first character
finds the same terminal and text as lark's whole alternation, and the keyword table retypes a
word as lark's keyword callback does."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Token

from query_guard.cypher.lalr_lexer import _spans_lines, _starts, state_lexers
from query_guard.cypher.parser import _parser

_LARK_LEXERS = list({id(x): x for x in _parser().parser.lexer.lexers.values()}.values())
_LEXERS = list({id(e): e for e in state_lexers(_parser().parser.lexer.lexers).values()}.values())

_PIECES = st.sampled_from(
    [
        *"()[]{}<>-=:|,.;*+!?&%^/~$'\"`\\ \t\n\r_0123456789aeExXoOnN",
        "\x0b", "\x1c", "\x85", "\u00e9", "\u017f", "\u212a", "\u0663", "\u00a0", "MATCH",
        "match", "Return", "WHERE", "count", "0x1F", "0o17", "1.5e3", "//", "/*", "*/", "-->",
        "<-[", "$p", "$(", "`a``b`", "..", "::",
    ]
)  # fmt: skip


def _found(match: Any) -> tuple[str, str | None] | None:
    return None if match is None else (match.group(), match.lastgroup)


@settings(max_examples=300)
@given(st.lists(_PIECES, min_size=1, max_size=12).map("".join), st.integers(0, 10**6))
def test_split_alternation_matches_what_lark_matches(text: str, pick: int) -> None:
    by_char, whole, *_ = _LEXERS[pick % len(_LEXERS)]
    for pos in range(len(text)):
        assert _found(by_char.get(text[pos], whole)(text, pos)) == _found(whole(text, pos))


_WORDS = st.one_of(
    st.sampled_from(["MATCH", "match", "mAtCh", "return", "name", "n", "count", "exists"]),
    st.text(st.sampled_from("aAsSkKtTeE_1\u017f\u212a\u0131"), min_size=1, max_size=8),
)


@settings(max_examples=300)
@given(_WORDS)
def test_keyword_table_retypes_as_lark_does(word: str) -> None:
    for _, _, _, _, keywords, callbacks, _, _ in _LEXERS:
        for name, table in keywords.items():
            if table is None or not word.isascii():
                continue
            exact, folded = table
            ours = exact.get(word) or folded.get(word.upper(), name)
            token = Token(name, word)
            assert ours == callbacks[name](token).type, (name, word)


def test_first_characters_of_patterns() -> None:
    assert _starts(r"(?i:MATCH)", 0) == frozenset("mM")
    assert _starts(r"[^\W\d]\w*", 0) >= frozenset("azAZ_")
    assert not _starts(r"[^\W\d]\w*", 0) & frozenset("0123456789 (")
    assert _starts(r"(?:\s)+", 0) == frozenset(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")
    assert len(_starts(r"a*", 0)) == 128  # may be empty: any character
    assert _starts(r"(?=x)\w", 0) >= frozenset("x")


def test_terminals_that_cannot_hold_a_line_break() -> None:
    assert not _spans_lines(r"[^\W\d]\w*", re.I)  # NAME: lark counts its line breaks
    assert not _spans_lines(r"//[^\n]*", 0)
    assert not _spans_lines(r"WITH(?=[ \t\r\n]+TIME)", re.I)  # a lookahead consumes nothing
    assert _spans_lines(r"'(?:[^'\\]|\\.)*'", re.S)
    assert _spans_lines(r"[ \t\f\r\n]+", 0)
    assert _spans_lines(r"(?s:.)", 0) and not _spans_lines(r".", 0)
    assert _spans_lines(r"(a)\1", 0)  # a back-reference: may


_REGEXPS = sorted(
    {(t.pattern.to_regexp(), x.scanner.g_regex_flags) for x in _LARK_LEXERS for t in x.terminals}
)


@settings(max_examples=300)
@given(st.lists(_PIECES, min_size=1, max_size=12).map("".join))
def test_a_terminal_said_not_to_span_lines_never_matches_a_line_break(text: str) -> None:
    for regexp, flags in _REGEXPS:
        if _spans_lines(regexp, flags):
            continue
        pattern = re.compile(regexp, flags)
        for pos in range(len(text)):
            found = pattern.match(text, pos)
            assert found is None or "\n" not in found.group(), (regexp, text)


_TAILS = ["", "a", "1", " ", "\n", "'", '"', "`", "*/", "x'", '1"', "a`", "-", ">", "=", "."]


def test_every_state_and_ascii_character() -> None:
    """Every state's lexer, every ASCII first character, a few continuations."""
    for by_char, whole, *_ in _LEXERS:
        for code in range(128):
            for tail in _TAILS:
                text = chr(code) + tail
                assert _found(by_char[text[0]](text, 0)) == _found(whole(text, 0)), repr(text)


@settings(max_examples=300)
@given(st.integers(0, 10**6), _PIECES)
def test_a_lone_space_before_these_characters_is_one_ignored_text(pick: int, tail: str) -> None:
    """The driver skips a lone space without matching it when the next character is in the
    state's `after_space`: lark's alternation matches the space alone, as an ignored terminal."""
    _, whole, ignore, _, _, callbacks, after_space, _ = _LEXERS[pick % len(_LEXERS)]
    for after in after_space:
        found = whole(" " + after + tail, 0)
        assert found is not None and found.group() == " ", repr(after + tail)
        assert found.lastgroup in ignore and found.lastgroup not in callbacks
    assert sum(bool(e[6]) for e in _LEXERS) > len(_LEXERS) // 2  # the fast path is used


@settings(max_examples=300)
@given(st.integers(0, 10**6), _PIECES)
def test_plain_strings_by_first_character_match_what_lark_matches(pick: int, tail: str) -> None:
    """The driver takes the first of a character's plain strings the text starts with as its
    token without matching: lark's alternation matches that string, as that terminal."""
    _, whole, *_, literals = _LEXERS[pick % len(_LEXERS)]
    for char, strings in literals.items():
        for value, _name in strings:
            text = value + tail
            mine = next((s, n) for s, n in strings if text.startswith(s))
            assert _found(whole(text, 0)) == mine, repr(text)
        assert strings[-1][0] == char
    assert any(len(s) > 1 for e in _LEXERS for s in e[7].values())
