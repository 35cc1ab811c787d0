"""The spacing of the canonical emitter (`query_guard.cypher.emit.emit_tokens`) by token kinds:
for most pairs of tokens the two kinds alone say whether a space goes between them, so the
emitter looks the answer up instead of reading the two texts (the hot path: every token of
every forwarded query).

A kind is tabled when every text it can have reads the same to the spacing rule: punctuation
and operators (one text each), keywords (letters, in any case), names (letters, digits and `_`
or any non-ASCII word character; the first may be a character `str.isdigit` calls a digit,
like `²`), strings and quoted names (their quotes), parameters and integers. Kinds that read
the same — the same kind flags (the sets the rule asks the kinds about) and the same texts —
share a row. A pair is tabled only when the rule gives one answer for every text of both kinds
and every innermost open bracket (a map's `:` after `{` has rows of its own; a `GT` closing
`LIST<`, a map after a node's `(`); any other pair (a name after `.`, floats, types) is decided
by the rule itself.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

__all__ = ["kind_rows"]

# canonical texts standing for all of a kind's (their characters read alike to the rule):
# names (`[^\W\d]\w*`), strings ('…' always), quoted names (`…`), parameters, integers
# (decimal digits), and the arrows and bars whose canonical text is one whatever was written
_TEXTS: dict[str, tuple[str, ...]] = {
    "NAME": ("a", "_1", "é", "²", "a²"),
    "STRING": ("'a'",),
    "ESCAPED_NAME": ("`a`",),
    "PARAM": ("$a", "$`a`", "$1"),
    "INTEGER": ("1",),
    "LABEL_BAR": ("|",),
    "DASH_BRACKET": ("-[",),
    "LARROW_BRACKET": ("<-[",),
}
# what `braces[-1:]` can be: nothing open, or the last character of an opening token; the
# rows for the innermost `{` (a map: its keys' `:` is spaced) are apart from the others
_IN_MAP: tuple[list[str], ...] = (["{"],)
_ELSEWHERE: tuple[list[str], ...] = ([], ["("], ["["], ["<"])


def kind_rows(
    terminals: Iterable[Any],
    canonical: Callable[[str, str], str],
    spaced: Callable[[str, str, str, str, list[str]], bool],
    flags: Iterable[Collection[str]],
) -> tuple[dict[str, Mapping[str, bool]], dict[str, Mapping[str, bool]]]:
    """kind -> (next kind -> `spaced` for them), inside a map and elsewhere, from lark's
    terminal definitions: a string terminal (case-insensitive only when it is ASCII letters)
    and the kinds of `_TEXTS`. `canonical(kind, written)` is the emitted text; `flags` the
    sets `spaced` asks kinds about."""
    texts = dict(_TEXTS)
    for terminal in terminals:
        pattern, name = terminal.pattern, terminal.name
        value = pattern.value
        if pattern.type == "str" and (not pattern.flags or (value.isascii() and value.isalpha())):
            texts[name] = (canonical(name, value),)  # a keyword stands for its every case
    classes: dict[tuple[object, ...], list[str]] = {}
    kind_flags = tuple(flags)
    for name, words in texts.items():
        shape = tuple("" if w.isascii() and w.isalpha() else w for w in words)  # "": letters
        classes.setdefault((tuple(name in f for f in kind_flags), shape), []).append(name)
    return _rows(classes, texts, spaced, _IN_MAP), _rows(classes, texts, spaced, _ELSEWHERE)


def _rows(
    classes: dict[tuple[object, ...], list[str]],
    texts: Mapping[str, tuple[str, ...]],
    spaced: Callable[[str, str, str, str, list[str]], bool],
    opened: tuple[list[str], ...],
) -> dict[str, Mapping[str, bool]]:
    rows: dict[str, Mapping[str, bool]] = {}
    for before in classes.values():
        row: dict[str, bool] = {}
        for after in classes.values():
            answers = {
                spaced(before[0], p, after[0], t, b)
                for p in texts[before[0]]
                for t in texts[after[0]]
                for b in opened
            }
            if len(answers) == 1:
                row.update(dict.fromkeys(after, answers.pop()))
        rows.update(dict.fromkeys(before, row))
    return rows
