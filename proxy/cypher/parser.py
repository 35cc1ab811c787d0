"""Cypher text -> typed AST (`parse`), with syntax errors that say where and what was expected.

The grammar is grammars/cypher.lark (LALR(1), contextual lexer); the AST is built during the
parse by the callbacks of proxy.cypher.builders. `parse` raises nothing but CypherSyntaxError.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import re

from lark import Lark, Token
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from query_guard.cypher.ast import Script
from query_guard.cypher.build_parts import BuildError
from query_guard.cypher.builders import check_grammar, transformer
from query_guard.cypher.lalr_driver import Fallback, LalrDriver

__all__ = ["CypherSyntaxError", "parse", "parse_tokens"]

MAX_EXPECTED = 8
_UNTERMINATED = {
    "'": "unterminated string",
    '"': "unterminated string",
    "`": "unterminated `name`",
}
_WORD_RE = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`|\w+|\S", re.DOTALL)

# terminals that can start an expression: reported together as "an expression"
_EXPRESSION_START = frozenset(
    [
        "NAME",
        "ESCAPED_NAME",
        "STRING",
        "INTEGER",
        "FLOAT",
        "PARAM",
        "LSQB",
        "LBRACE",
        "LPAR",
        "TRUE",
        "FALSE",
        "NULL",
        "CASE",
        "NOT",
        "MINUS",
        "PLUS",
        "COUNT",
        "EXISTS",
        "COLLECT",
    ]
)
_RELATIONSHIP_START = frozenset(
    ["DASH_BRACKET", "LARROW_BRACKET", "ARROW_OUT", "ARROW_IN", "ARROW_BOTH", "ARROW_UNDIRECTED"]
)
_PUNCTUATION = {
    "SEMI": ";",
    "COMMA": ",",
    "DOT": ".",
    "DOTDOT": "..",
    "COLON": ":",
    "LPAR": "(",
    "RPAR": ")",
    "LSQB": "[",
    "RSQB": "]",
    "LBRACE": "{",
    "RBRACE": "}",
    "BAR": "|",
    "LABEL_BAR": "|",
    "AMP": "&",
    "BANG": "!",
    "EQ": "=",
    "NEQ": "<>",
    "NEQ_BANG": "!=",
    "LT": "<",
    "GT": ">",
    "LE": "<=",
    "GE": ">=",
    "REGEX_MATCH": "=~",
    "PLUS_EQ": "+=",
    "PLUS": "+",
    "MINUS": "-",
    "STAR": "*",
    "SLASH": "/",
    "PERCENT": "%",
    "CARET": "^",
    "ARROW_RIGHT": "->",
}
_WORDS = {
    "NAME": "a name",
    "ESCAPED_NAME": "a name",
    "STRING": "a string",
    "INTEGER": "an integer",
    "FLOAT": "a number",
    "PARAM": "a parameter",
    "SHORTESTPATH": "shortestPath",
    "ALLSHORTESTPATHS": "allShortestPaths",
    "$END": "end of input",
}
# most useful first; words not listed come after these (alphabetically), then _LAST
_RANK = [
    "an expression",
    "a name",
    "')'",
    "']'",
    "'}'",
    "RETURN",
    "WITH",
    "MATCH",
    "WHERE",
    "OPTIONAL",
    "UNWIND",
    "CALL",
    "CREATE",
    "MERGE",
    "ORDER",
    "LIMIT",
    "SKIP",
    "AS",
    "AND",
    "OR",
    "UNION",
    "a relationship pattern",
    "','",
]
_LAST = frozenset(
    [
        "DROP",
        "SHOW",
        "ALTER",
        "GRANT",
        "REVOKE",
        "DENY",
        "START",
        "STOP",
        "TERMINATE",
        "ENABLE",
        "RENAME",
        "EXPLAIN",
        "PROFILE",
        "USE",
        "FINISH",
        "OFFSET",
        "ASCENDING",
        "DESCENDING",
    ]
) | {"end of input"}
_RANK_INDEX = {word: i for i, word in enumerate(_RANK)}


class CypherSyntaxError(Exception):
    """Unparsable Cypher: 1-based line/column, 0-based char offset, expected tokens as words."""

    def __init__(self, message: str, line: int, column: int, offset: int, expected: list[str]):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.offset = offset
        self.expected = expected


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    """The LALR parser, built once per process (the grammar tables are cached on disk).

    strict=True (no shift/reduce conflicts, no terminal collisions) needs `interegular`; the
    grammar is conflict-free, so without it we still build, just without the re-check.
    Every rule's callback is checked against the compiled grammar (builders.check_grammar).
    """
    parser = Lark.open_from_package(
        "query_guard.grammars",
        "cypher.lark",
        parser="lalr",
        lexer="contextual",
        strict=importlib.util.find_spec("interegular") is not None,
        keep_all_tokens=True,
        maybe_placeholders=True,
        transformer=transformer(),
        cache=True,
    )
    check_grammar(parser.rules)
    return parser


@functools.lru_cache(maxsize=1)
def _driver() -> LalrDriver:
    """The lean loop over `_parser()`'s tables: the parse of every query that parses."""
    return LalrDriver(_parser())


def parse(text: str) -> Script:
    """Parse `text` (one or more `;`-separated statements) into a Script."""
    return parse_tokens(text)[0]


def parse_tokens(text: str) -> tuple[Script, list[Token]]:
    """Parse `text` into a Script, with the tokens the parser consumed (comments and
    whitespace are not tokens). The tokens come from the same contextual lexer run the parse
    used, so they are exactly what the guard judged (the canonical emitter re-prints them)."""
    tokens: list[Token] = []
    try:
        script = _driver().parse(text, tokens)
        script.span = (0, len(text))  # the whole text (the driver's own object: no copy)
        return script, tokens
    except Fallback:
        pass  # lark's own parser says what is wrong (or, if nothing is, parses it)
    try:
        tokens = []
        cursor = _parser().parse_interactive(text)
        for token in cursor.iter_parse():
            tokens.append(token)
        script = cursor.feed_eof(tokens[-1] if tokens else None)
    except (LarkError, BuildError, RecursionError):
        # the interactive cursor reports wider expected-token sets: re-run the plain parse for
        # the precise error (only broken queries take this path)
        _plain(text)
        raise _error_at(text, 0, "cannot parse", []) from None
    return Script((0, len(text)), script.statements), tokens


def _plain(text: str) -> Script:
    try:
        script = _parser().parse(text)
    except UnexpectedInput as exc:
        raise _from_lark(text, exc) from None
    except BuildError as exc:
        raise _error_at(text, exc.span[0], exc.message, []) from None
    except RecursionError:
        raise _error_at(text, 0, "query is nested too deeply", []) from None
    except LarkError as exc:  # pragma: no cover - lark internals
        raise _error_at(text, 0, f"cannot parse: {exc}", []) from None
    return Script((0, len(text)), script.statements)


def expected_words(terminals: set[str] | frozenset[str], found: str | None = None) -> list[str]:
    """Readable names for lark terminal names, most useful first, at most MAX_EXPECTED.

    A keyword close to the unexpected word `found` (RETRUN -> RETURN) comes first.
    """
    words: set[str] = set()
    if {"STRING", "INTEGER"} <= terminals:
        words.add("an expression")
        terminals = terminals - _EXPRESSION_START
    if terminals & _RELATIONSHIP_START:
        words.add("a relationship pattern")
        terminals = terminals - _RELATIONSHIP_START
    for name in terminals:
        if name in _PUNCTUATION:
            words.add(f"'{_PUNCTUATION[name]}'")
        elif name in _WORDS:
            words.add(_WORDS[name])
        elif name.isalpha() and name.isupper():
            words.add(name)
        # SCHEMA_REST and other internal terminals are not worth naming
    close = set(difflib.get_close_matches(found.upper(), words, n=2)) if found else set()

    def rank(word: str) -> tuple[int, int, str]:
        if word in close:
            return (0, 0, word)
        if word in _RANK_INDEX:
            return (1, _RANK_INDEX[word], word)
        return (3 if word in _LAST else 2, 0, word)

    return sorted(words, key=rank)[:MAX_EXPECTED]


def _from_lark(text: str, exc: UnexpectedInput) -> CypherSyntaxError:
    if isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
        token: Token = exc.token
        offset = token.start_pos if token.start_pos is not None else len(text)
        word = _word_at(text, offset)
        detail = f"unexpected '{_clip(word)}'"
        expected = expected_words(_acceptable(exc), word)
    elif isinstance(exc, UnexpectedToken):
        offset = len(text)
        detail = "unexpected end of input"
        expected = expected_words(_acceptable(exc))
    elif isinstance(exc, UnexpectedCharacters):
        offset = exc.pos_in_stream
        char = text[offset : offset + 1]
        detail = _UNTERMINATED.get(char, f"unexpected '{_clip(char)}'")
        expected = expected_words(frozenset(exc.allowed or ()))
    else:  # UnexpectedEOF (not produced by LALR, kept for completeness)
        offset = len(text)
        detail = "unexpected end of input"
        expected = expected_words(frozenset(getattr(exc, "expected", ()) or ()))
    if expected:
        detail += "; expected one of: " + ", ".join(expected)
    return _error_at(text, offset, detail, expected)


def _acceptable(exc: UnexpectedToken) -> frozenset[str]:
    """Terminals the parser would really accept here (LALR lookahead sets are too wide)."""
    try:
        if exc.interactive_parser is not None:
            return frozenset(exc.interactive_parser.accepts())
    except Exception:
        pass
    return frozenset(exc.expected)


def _word_at(text: str, offset: int) -> str:
    match = _WORD_RE.match(text, offset)
    return match.group(0) if match else text[offset : offset + 1]


def _error_at(text: str, offset: int, detail: str, expected: list[str]) -> CypherSyntaxError:
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return CypherSyntaxError(
        f"line {line}, column {column}: {detail}", line, column, offset, expected
    )


def _clip(value: str, limit: int = 30) -> str:
    value = value.replace("\n", "\\n")
    return value if len(value) <= limit else value[: limit - 1] + "…"
