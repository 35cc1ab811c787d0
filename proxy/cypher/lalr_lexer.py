"""The contextual lexer of a compiled Lark LALR parser, read once into tables the lean driver
(`query_guard.cypher.lalr_driver`) matches with one regex call and one dict look-up per token.

lark's lexer for a parser state tries one alternation of every terminal the state accepts, in
lark's order, and keeps the first alternative that matches. Here each state's alternation is
split by the first character of the text: for an ASCII character, only the terminals whose
pattern can start with it (or match the empty string) stay, in the same order. An alternative
that cannot match at the position cannot be the first one that does, so the match is lark's.
What a pattern can start with is read from its parsed form (`re._parser`): every
one-character item (literal, class, category, `.`) is compiled alone with the flags in force
there and tried on the 128 ASCII characters; anything else (back-references, conditionals)
counts as "any character". Non-ASCII characters use lark's whole alternation.

lark turns a keyword that its NAME terminal also matches into a callback on NAME (an
`UnlessCallback` that full-matches the keyword alternation). When every such keyword is a
plain string (case-insensitive or not), the callback here is a dict look-up for ASCII words;
any other word (or callback) is left to lark's callback.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from re import _compiler as sre_compile  # type: ignore[attr-defined]
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

from lark.lexer import PatternStr, UnlessCallback

__all__ = ["StateLexer", "state_lexers"]

_ASCII = tuple(chr(i) for i in range(128))
_ANY = frozenset(_ASCII)
_ONE_CHAR = {sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN, sre.CATEGORY}
_ZERO_WIDTH = {sre.AT, sre.ASSERT, sre.ASSERT_NOT}
_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", sre.MAX_REPEAT)}

# (matcher for each ASCII first character, matcher for any other, ignored terminals,
#  terminals that may hold a line break, keyword types by ASCII word or upper-cased word,
#  lark's token callbacks by terminal, the ASCII characters after which a lone space is one
#  ignored text without a callback, and for an ASCII character whose terminals (those that can
#  start with it) are plain strings up to the character itself: those (string, terminal), in
#  lark's order: the first the text starts with is lark's match (`:` is ("::", DOUBLE_COLON),
#  (":", COLON)))
StateLexer = tuple[
    dict[str, Callable[..., Any]],
    Callable[..., Any],
    frozenset[str],
    frozenset[str],
    dict[str, tuple[dict[str, str], dict[str, str]] | None],
    dict[str, Callable[..., Any]],
    frozenset[str],
    dict[str, tuple[tuple[str, str], ...]],
]


def _one_char(item: tuple[Any, Any], flags: int) -> frozenset[str]:
    """The ASCII characters a one-character regex item matches under `flags`."""
    state = sre_parse.State()
    state.flags = flags
    pattern = sre_compile.compile(sre_parse.SubPattern(state, [item]), flags)
    return frozenset(c for c in _ASCII if pattern.match(c))


def _first(items: Any, flags: int) -> tuple[frozenset[str], bool]:
    """(ASCII characters a match of `items` may start with, whether it may be empty)."""
    found: set[str] = set()
    for op, arg in items:
        if op in _ONE_CHAR:
            return frozenset(found | _one_char((op, arg), flags)), False
        if op in _ZERO_WIDTH:
            continue  # the assertion only narrows what follows: keep the wider set
        if op is sre.SUBPATTERN:
            _group, add, remove, sub = arg
            chars, empty = _first(sub, (flags | add) & ~remove)
        elif op is sre.ATOMIC_GROUP if hasattr(sre, "ATOMIC_GROUP") else False:
            chars, empty = _first(arg, flags)
        elif op is sre.BRANCH:
            chars, empty = frozenset(), False
            for branch in arg[1]:
                more, may_be_empty = _first(branch, flags)
                chars, empty = chars | more, empty or may_be_empty
        elif op in _REPEATS:
            low, _high, sub = arg
            chars, empty = _first(sub, flags)
            empty = empty or low == 0
        else:  # back-references, conditionals: anything
            return _ANY, True
        found |= chars
        if not empty:
            return frozenset(found), False
    return frozenset(found), True


def _holds(items: Any, flags: int, char: str) -> bool:
    """May a match of `items` hold `char`? Only what a one-character item matches is consumed
    (an assertion consumes nothing); anything else (back-references, conditionals) may."""
    for op, arg in items:
        if op in _ONE_CHAR:
            if char in _one_char((op, arg), flags):
                return True
        elif op in _ZERO_WIDTH:
            continue
        elif op is sre.SUBPATTERN:
            _group, add, remove, sub = arg
            if _holds(sub, (flags | add) & ~remove, char):
                return True
        elif op is sre.BRANCH:
            if any(_holds(branch, flags, char) for branch in arg[1]):
                return True
        elif op in _REPEATS:
            if _holds(arg[2], flags, char):
                return True
        elif op is getattr(sre, "ATOMIC_GROUP", None):
            if _holds(arg, flags, char):
                return True
        else:
            return True
    return False


def _spans_lines(regexp: str, flags: int) -> bool:
    """May a match of `regexp` hold a line break? (lark's own test is coarser: any negated
    class counts, so NAME's line breaks, which it cannot hold, would be counted per token.)"""
    parsed = sre_parse.parse(regexp, flags)
    return _holds(parsed.data, parsed.state.flags, "\n")


def _starts(regexp: str, flags: int) -> frozenset[str]:
    """The ASCII characters a match of `regexp` may start with (all if it may be empty)."""
    parsed = sre_parse.parse(regexp, flags)  # its state's flags add re.UNICODE for a str
    chars, empty = _first(parsed.data, parsed.state.flags)
    return _ANY if empty else chars


def _keywords(callback: Any) -> tuple[dict[str, str], dict[str, str]] | None:
    """lark's keyword callback as (exact word -> type, upper-cased word -> type), or None when
    it is not a set of plain ASCII strings (then lark's callback runs)."""
    if type(callback) is not UnlessCallback:
        return None
    exact: dict[str, str] = {}
    folded: dict[str, str] = {}
    for terminal in callback.scanner.terminals:
        pattern = terminal.pattern
        if type(pattern) is not PatternStr or not pattern.value.isascii():
            return None
        if set(pattern.flags) - {"i"}:
            return None
        if "i" in pattern.flags:
            folded.setdefault(pattern.value.upper(), terminal.name)
        else:
            exact.setdefault(pattern.value, terminal.name)
    # the first keyword in lark's order wins; a word two of them match would need that order
    if any(word.upper() in folded for word in exact):
        return None
    if len(callback.scanner._mres) != 1:
        return None
    return exact, folded


def state_lexers(by_state: dict[int, Any]) -> dict[int, StateLexer]:
    """Each parser state's lexer as the driver reads it, built once per distinct lark lexer;
    the split alternations are compiled once per distinct list of terminals."""
    compiled: dict[tuple[str, ...], Callable[..., Any]] = {}
    starts: dict[str, frozenset[str]] = {}  # by terminal: what its pattern may start with
    built: dict[int, StateLexer] = {}
    out: dict[int, StateLexer] = {}
    for state, lexer in by_state.items():
        entry = built.get(id(lexer))
        if entry is None:
            entry = built[id(lexer)] = _state_lexer(lexer, compiled, starts)
        out[state] = entry
    return out


def _state_lexer(
    lexer: Any,
    compiled: dict[tuple[str, ...], Callable[..., Any]],
    starts: dict[str, frozenset[str]],
) -> StateLexer:
    scanner = lexer.scanner  # builds lark's scanner and its callbacks
    (whole,) = scanner._mres  # one alternation (lark splits only past 100 groups)
    flags = scanner.g_regex_flags
    terminals = sorted(
        (t for t in lexer.terminals if t.name in whole.groupindex),
        key=lambda t: whole.groupindex[t.name],
    )
    regexps = {t.name: t.pattern.to_regexp() for t in terminals}
    for t in terminals:
        if t.name not in starts:  # a terminal's pattern is the same in every state
            starts[t.name] = _starts(regexps[t.name], flags)
    by_char: dict[str, Callable[..., Any]] = {}
    for char in _ASCII:
        names = tuple(t.name for t in terminals if char in starts[t.name])
        matcher = compiled.get(names)
        if matcher is None:
            pattern = "|".join(f"(?P<{n}>{regexps[n]})" for n in names) or "(?!)"
            matcher = compiled[names] = re.compile(pattern, flags).match
        by_char[char] = matcher
    callbacks = dict(lexer.callback)
    keywords = {name: _keywords(callback) for name, callback in callbacks.items()}
    first = next((t.name for t in terminals if " " in starts[t.name]), None)
    after_space: frozenset[str] = frozenset()
    if first in lexer.ignore_types and first not in callbacks:
        after_space = _after_one(regexps[first], flags, " ")
    ignore = lexer.ignore_types
    # the terminals whose tokens may span lines (the others' line breaks are never counted)
    newline = frozenset(
        n for n in lexer.newline_types if n not in regexps or _spans_lines(regexps[n], flags)
    )
    literals: dict[str, tuple[tuple[str, str], ...]] = {}
    for char in _ASCII:
        found: list[tuple[str, str]] = []
        for t in terminals:
            if char not in starts[t.name]:
                continue
            plain = t.name not in ignore and t.name not in callbacks and t.name not in newline
            if not plain or type(t.pattern) is not PatternStr or t.pattern.flags:
                break
            found.append((t.pattern.value, t.name))
            if t.pattern.value == char:  # matches whenever the ones before it do not
                literals[char] = tuple(found)
                break
    return by_char, whole.match, ignore, newline, keywords, callbacks, after_space, literals


def _after_one(regexp: str, flags: int, char: str) -> frozenset[str]:
    """When `regexp` is a greedy run of one character class holding `char` (`[ \t]+`): the
    ASCII characters outside the class, after which its match of `char` is `char` alone.
    Otherwise none."""
    parsed = sre_parse.parse(regexp, flags)
    items = parsed.data
    while len(items) == 1 and items[0][0] is sre.SUBPATTERN and items[0][1][1:3] == (0, 0):
        items = items[0][1][3]  # a plain group around the run
    if len(items) != 1 or items[0][0] is not sre.MAX_REPEAT:
        return frozenset()
    low, _high, sub = items[0][1]
    if low != 1 or len(sub) != 1 or sub[0][0] not in _ONE_CHAR:
        return frozenset()
    inside = _one_char(sub[0], parsed.state.flags)
    return _ANY - inside if char in inside else frozenset()
