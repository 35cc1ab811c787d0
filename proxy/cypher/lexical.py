"""Where the strings, quoted names and comments of a query are, read the way the Cypher lexer
reads them (grammars/cypher.lark), without parsing: for the text-stage rules that must not
touch those regions (fences) or must look inside them (ambiguous_text)."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Segment", "segments"]

# leftmost match wins, as in the lexer: a `//` inside a string is string, a quote inside a
# comment is comment; an unterminated string or comment runs to the end of the text; three
# backticks are a markdown fence, not a quoted name, except where only a name can stand (right
# after `:`, `.`, `$`, `|`, `&`, `(`, `[`, `{` or `,`: ``n:```x` `` is the label "`x")
_SCAN = re.compile(
    r"(?P<string>'(?:[^'\\]|\\.)*(?:'|\Z)|\"(?:[^\"\\]|\\.)*(?:\"|\Z))"
    r"|(?P<name>(?:(?<=[:.$|&(\[{,])|(?!```))`(?:[^`]|``)*(?:`|\Z))"
    r"|(?P<line_comment>//[^\n]*)"
    r"|(?P<block_comment>/\*(?:[^*]|\*(?!/))*(?:\*/|\Z))",
    re.S,
)
_SCAN_NO_BACKTICKS = re.compile(
    r"(?P<string>'(?:[^'\\]|\\.)*(?:'|\Z)|\"(?:[^\"\\]|\\.)*(?:\"|\Z))"
    r"|(?P<line_comment>//[^\n]*)"
    r"|(?P<block_comment>/\*(?:[^*]|\*(?!/))*(?:\*/|\Z))",
    re.S,
)


@dataclass(frozen=True, slots=True)
class Segment:
    """A string literal, a backtick-quoted name or a comment: text[start:end]."""

    kind: str  # "string" | "name" | "line_comment" | "block_comment"
    start: int
    end: int


def segments(text: str, backticks: bool = True) -> list[Segment]:
    """The literal and comment regions of `text`, in order (Gremlin has no backtick names)."""
    scan = _SCAN if backticks else _SCAN_NO_BACKTICKS
    return [
        Segment(m.lastgroup or "", m.start(), m.end())
        for m in scan.finditer(text)
        if m.end() > m.start()
    ]
