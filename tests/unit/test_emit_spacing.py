"""The emitter's spacing by token kinds (proxy/cypher/spacing.py) gives the rule's own answer
(`emit._spaced`) for every pair of kinds it tables, and the facts the post-parse shortcuts lean
on hold: the lexer's ignored characters (splice.plain_gaps), the token types of a query."""

from __future__ import annotations

import random
import re
from pathlib import Path

from lark import Token

from query_guard.cypher import emit
from query_guard.cypher.parser import _parser
from query_guard.cypher.query import CypherQuery
from query_guard.cypher.splice import _GAP_OTHER, _SAFE_GAP, plain_gaps
from query_guard.grammars import __file__ as grammars_init

# every kind's texts as the emitter may meet them, the odd ones included
_SAMPLES = [
    ("NAME", "a"), ("NAME", "é"), ("NAME", "²x"), ("NAME", "LIMIT"), ("NAME", "x1"),
    ("STRING", "'x'"), ("STRING", "'é'"), ("PARAM", "$x"), ("PARAM", "$`a b`"),
    ("ESCAPED_NAME", "`a b`"), ("INTEGER", "1"), ("FLOAT", ".5"), ("FLOAT", "1.5e3"),
    ("TYPE_OPEN", "LIST<"), ("DASH_BRACKET", "-["), ("LARROW_BRACKET", "<-["),
    ("LABEL_BAR", "|"),
]  # fmt: skip
_OPENERS = ([], [("LPAR", "(")], [("LSQB", "[")], [("LBRACE", "{")], [("TYPE_OPEN", "LIST<")])


def _by_rule(pieces: list[tuple[str, str]]) -> str:
    """emit_tokens without the kind table: `_spaced` asked for every pair."""
    out, braces = [], []
    for i, (kind, text) in enumerate(pieces):
        if i and emit._spaced(*pieces[i - 1], kind, text, braces):
            out.append(" ")
        out.append(text)
        if text in emit._OPENING or kind == "TYPE_OPEN":
            braces.append(text[-1])
        elif (text in emit._CLOSING or (kind == "GT" and braces[-1:] == ["<"])) and braces:
            braces.pop()
    return "".join(out)


def _samples() -> list[tuple[str, str]]:
    CypherQuery.parse("RETURN 1")  # the parser, whose terminals the table is made from
    out = list(_SAMPLES)
    for terminal in _parser().terminals:
        if terminal.pattern.type == "str":
            value = terminal.pattern.value
            out.append((terminal.name, emit._token_text(Token(terminal.name, value))))
            if value.isalpha():
                out.append((terminal.name, value.lower()))
    return out


def test_every_pair_is_spaced_as_the_rule_says() -> None:
    samples = _samples()
    for opener in _OPENERS:
        for a in samples:
            for b in samples:
                pieces = [*opener, a, b]
                assert emit.emit_tokens(pieces) == _by_rule(pieces), pieces


def test_random_token_runs_are_spaced_as_the_rule_says() -> None:
    samples, rng = _samples(), random.Random(23)
    for _ in range(3000):
        pieces = [rng.choice(samples) for _ in range(rng.randint(1, 12))]
        assert emit.emit_tokens(pieces) == _by_rule(pieces), pieces


def test_most_pairs_of_a_query_are_tabled() -> None:
    in_map, elsewhere = emit._kind_rows()
    assert elsewhere["MATCH"]["LPAR"] is True  # `MATCH (`
    assert elsewhere["COLON"]["NAME"] is False and in_map["COLON"]["NAME"] is True
    assert "NAME" not in elsewhere["DOT"]  # `x.²a` would be spaced: the rule decides


def test_plain_gaps_knows_every_character_the_lexer_skips() -> None:
    grammar = (Path(grammars_init).parent / "cypher.lark").read_text(encoding="utf-8")
    spaces = re.search(r"^WS: /\[(.*)\]\+/$", grammar, re.MULTILINE)
    assert spaces is not None
    for ch in re.findall(r"\\u[0-9a-f]{4}|\\.|.", spaces.group(1)):
        char = ch.encode().decode("unicode_escape") if ch.startswith("\\") else ch
        assert _SAFE_GAP.fullmatch(char) or _GAP_OTHER.search(char), repr(char)
    assert re.findall(r"^%ignore (\w+)$", grammar, re.MULTILINE) == [
        "WS", "LINE_COMMENT", "BLOCK_COMMENT"
    ]  # fmt: skip
    assert _GAP_OTHER.search("/")  # both comments start with it
    for text, plain in (("MATCH (n)\n\tRETURN n", True), ("MATCH (n)\fRETURN n", False),
                        ("MATCH (n)/* c */RETURN n", False), ("RETURN '/'", True)):  # fmt: skip
        query = CypherQuery.parse(text)
        assert plain_gaps(query.text, query.tokens) is plain, text


def test_token_types_say_which_keywords_a_query_has() -> None:
    query = CypherQuery.parse("MATCH (n:Person) WHERE n.age > 3 RETURN n")
    assert {"MATCH", "WHERE", "RETURN", "NAME", "GT"} <= query.token_types
    assert query.has_token("WHERE", "FILTER") and not query.has_token("FILTER", "NEXT")
    assert CypherQuery(query.text, query.script).has_token("FILTER")  # no tokens: may have
