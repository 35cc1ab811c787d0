"""The characters no name may carry in text the proxy forwards (SEC.AMBIGUOUS_TEXT).

Line terminators are where readers disagree most (`\\n` only in our Cypher grammar; `\\r`,
`\\x0b`, `\\x0c`, `\\x85`, `\\u2028`, `\\u2029` too in others), and a control character such
as NUL can end the text early in a C reader. Inside a string literal each language has escapes
for them; a name has none in Cypher (openCypher, Neo4j and FalkorDB backtick names only double
the backtick) nor in SQL's double-quoted identifiers (SQLite has no escapes; PostgreSQL's
`U&"…"` is not portable): such a name cannot be written unambiguously, so the query is refused
rather than forwarded with the character raw. Gremlin names are string literals: the printers
escape these characters as `\\uXXXX`.
"""

from __future__ import annotations

import re

__all__ = ["UNSAFE", "describe"]

# C0 and C1 control characters and DEL (\t \n \r \x0b \x0c \x85 among them), the Unicode line
# and paragraph separators, lone surrogates (not encodable)
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")

_NAMES = {
    "\n": "a line feed",
    "\r": "a carriage return",
    "\t": "a tab",
    "\x0b": "a vertical tab",
    "\x0c": "a form feed",
    "\x85": "a NEL line break",
    "\u2028": "a Unicode line separator",
    "\u2029": "a Unicode paragraph separator",
}


def describe(ch: str) -> str:
    """`ch` in words, for a finding's message ("a carriage return", "the character U+0000")."""
    return _NAMES.get(ch) or f"the control character U+{ord(ch):04X}"
