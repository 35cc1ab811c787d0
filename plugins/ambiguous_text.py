"""Ambiguous text — refuse Cypher (or Gremlin) whose tokens another reader could see
differently (`SEC.AMBIGUOUS_TEXT`, error, always on).

The guard judges one reading of the text; the text that leaves the proxy is re-emitted from
that reading (proxy/cypher/emit.py), but a query built to be read two ways is an attack, not a
question, and is refused outright. Readers disagree on:

* **line breaks in `//` comments** — our grammar ends a line comment at `\\n` only; Neo4j and
  ArcadeDB end it at `\\r` too, other readers at `\\x0b`, `\\x0c`, `\\x85`, `\\u2028`, `\\u2029`
  (a CRLF line end reads the same everywhere and is fine).
  `MATCH (m:Movie) //<CR>CREATE (x)<LF>RETURN m` is a read here and a write there.
* **`\\u` escapes outside the string decoder** — Neo4j's older parser decodes `\\uXXXX` (also
  `\\uuXXXX`) in the raw text before lexing, so `\\u000a` in a comment ends it, and `\\u0027` in
  a string ends the string. Refused: any `\\u`/`\\U` in a comment; an escape in a string or a
  backtick name that decodes to a quote, a backslash, a backtick or a line break.
* **line breaks and control characters in names** — a Cypher name in backticks cannot escape
  them (openCypher, Neo4j and FalkorDB only double the backtick; a `\\u` escape in a name is
  decoded by some readers and read as text by others), nor can a double-quoted SQL identifier,
  so the canonical text would carry them raw: refused in every name the guard re-emits
  (labels, relationship types, property and map keys, variables, parameters, procedure and
  function names; SQL identifiers). The characters: proxy/guard/unsafe_chars.py. Gremlin names are
  string literals, escaped by the printers. The emitters refuse such names too (fail closed).

* **Gremlin `\\u` escapes** — Groovy, like Java, decodes `\\uXXXX` (also `\\uuXXXX`) before
  lexing, so Gremlin Server would end `'x\\u0027).drop().iterate() //'` at the escape, while
  a reader of string literals sees one string. Refused as in Cypher: any `\\u` in a comment,
  and an escape in a string that decodes to the string's own quote, a backslash, `\\n` or
  `\\r` (a decoded `$` in `"…"` is an interpolation, SEC.SCRIPT). Other escapes
  (`'caf\\u00e9'`, `"it\\u0027s"`) mean the same to both readers and are judged decoded.
  The proxy's printers escape control characters as `\\uXXXX` in what they send: never one
  of these, so their output reads back the same.

Example: ``MATCH (n) WHERE n.name = 'x\\u0027 OR true //' RETURN n`` → blocked, "remove the
\\u escape; write the character itself".
"""

from __future__ import annotations

import re

from query_guard.api import UNSAFE, Finding, GuardContext, Severity, describe, hookimpl
from query_guard.api.cypher import CypherQuery, segments
from query_guard.api.sql import SqlQuery, unsafe_names

CODE = "SEC.AMBIGUOUS_TEXT"
_LINE_BREAKS = "\r\x0b\x0c\x85\u2028\u2029"
_COMMENT_BREAK = re.compile(f"[{_LINE_BREAKS}]")
_SUSPICIOUS = re.compile(f"[\\\\{_LINE_BREAKS}]")  # a backslash or an odd line break
_ANY_UNICODE_ESCAPE = re.compile(r"\\[uU]")
_UNICODE_ESCAPE = re.compile(r"\\u+([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})")
_DANGEROUS = frozenset("'\"\\`\n" + _LINE_BREAKS)
# Groovy (Gremlin Server's script engine) decodes \uXXXX in the raw text before lexing, as
# Java does: an escape of the string's own quote or a backslash ends or shifts the string, a
# line break ends it (a decoded `$` in "…" is an interpolation: the parser's SEC.SCRIPT)
_GROOVY_DANGEROUS = {"'": frozenset("'\\\n\r"), '"': frozenset('"\\\n\r')}
_READERS = {"cypher": {"'": _DANGEROUS, '"': _DANGEROUS, "`": _DANGEROUS},
            "gremlin": _GROOVY_DANGEROUS}  # fmt: skip
# the name tokens that can hold any character (a NAME is letters, digits and `_` only)
_QUOTED_NAMES = frozenset({"ESCAPED_NAME", "PARAM"})


@hookimpl
def guard_text(text: str, language: str, ctx: GuardContext) -> list[Finding]:
    if language not in _READERS or not _suspicious(text):
        return []
    readers = _READERS[language]
    out: list[Finding] = []
    for seg in segments(text, backticks=language == "cypher"):
        body = text[seg.start : seg.end]
        if seg.kind == "line_comment":
            # a \r right before the \n (a CRLF line end) ends the comment for every reader
            m = _COMMENT_BREAK.search(body.rstrip("\r"))
            if m is not None:
                what = describe(m.group())
                out.append(
                    _finding(
                        seg.start + m.start(),
                        f"a // comment contains {what}, where some databases end the comment "
                        "and read the rest as query text; remove the comment (or use plain "
                        "\\n line breaks)",
                    )
                )
        if seg.kind in ("line_comment", "block_comment"):
            m = _ANY_UNICODE_ESCAPE.search(body)
            if m is not None:
                out.append(
                    _finding(
                        seg.start + m.start(),
                        "a comment contains a \\u escape, which some databases decode before "
                        "reading comments; remove the comment",
                    )
                )
        elif seg.kind in ("string", "name"):
            dangerous = readers.get(body[:1], _DANGEROUS)
            for m in _UNICODE_ESCAPE.finditer(body):
                code = int(m.group(1) or m.group(2), 16)
                if code < 0x110000 and chr(code) in dangerous:
                    where = "string" if seg.kind == "string" else "quoted name"
                    out.append(
                        _finding(
                            seg.start + m.start(),
                            f"the {where} contains the escape {m.group()}, which some databases "
                            "decode before finding where the "
                            f"{where} ends; write the character itself (a quote as \\' inside "
                            "a '…' string, a line break as \\n)",
                        )
                    )
                    break
    return out


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    if "`" not in query.text:
        return []
    for token in query.tokens:
        m = UNSAFE.search(token.value) if token.type in _QUOTED_NAMES else None
        if m is not None:
            return [_name_finding((token.start_pos or 0) + m.start(), m.group(), "Cypher")]
    return []


@hookimpl
def guard_sql(query: SqlQuery, ctx: GuardContext) -> list[Finding]:
    for statement in query.statements:
        for node, name in unsafe_names(statement.tree):
            m = UNSAFE.search(name)
            assert m is not None
            start = query.span_of(node, statement)[0]
            at = query.text.find(m.group(), start)  # the character itself, when it is there
            return [_name_finding(at if at >= 0 else start, m.group(), "SQL")]
    return []


def _name_finding(pos: int, ch: str, language: str) -> Finding:
    return _finding(
        pos,
        f"a name contains {describe(ch)}, which {language} cannot escape in a name, so the "
        "query cannot be forwarded in a form every database reads the same way; rename it "
        "without line breaks or control characters",
    )


def _suspicious(text: str) -> bool:
    """Cheap pre-check: most queries have neither backslashes nor odd line breaks."""
    return _SUSPICIOUS.search(text) is not None


def _finding(pos: int, message: str) -> Finding:
    return Finding(CODE, Severity.ERROR, message, (pos, pos + 1))
