"""Recognise script content in text that failed to parse as a traversal.

When the LALR parser rejects a text, this module decides whether the text is merely a broken
traversal (`SYN.PARSE`) or contains code from outside the traversal language (`SEC.SCRIPT`):
closures `{ it -> ... }`, lambdas, Groovy statements (`def x = ...`, assignments, `new File()`),
several statements (`;` or one per line). It scans a tolerant token stream in which strings and
comments are opaque, so a `;` or `=` inside a string literal never counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from query_guard.gremlin import lexicon as lx
from query_guard.gremlin.errors import GremlinScriptError

_TOKEN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<comment>//[^\n]*|/\*[\s\S]*?(?:\*/|$))
      | (?P<string>"(?:[^"\\]|\\[\s\S])*(?:"|$)|'(?:[^'\\]|\\[\s\S])*(?:'|$))
      | (?P<number>[0-9][\w.]*)
      | (?P<name>(?!\d)[\w$]+)
      | (?P<op>->|==|!=|<=|>=|=~|==~|\+=|-=|\*=|/=|\?\.|\*\.|\.&|::|\+\+|--|&&|\|\||<<|>>)
      | (?P<punct>.)""",
    re.VERBOSE,
)
_ASSIGN_OPS = frozenset({"=", "+=", "-=", "*=", "/=", "++", "--"})
# Operators that only Groovy has; single characters such as `>` are left to the syntax error,
# since a malformed predicate (`has('age', >30)`) is a mistake, not an attempt to run code.
_GROOVY_OPS = frozenset({"==", "!=", "=~", "==~", "&&", "||", "<<", ">>", "?.", "*.", ".&",
                         "::"})
_VALUE_KINDS = frozenset({"name", "string", "number"})


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str
    text: str
    start: int
    end: int
    newline_before: bool


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    newline = False
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "punct"
        if kind in ("ws", "comment"):
            newline = newline or "\n" in m.group()
            continue
        out.append(_Tok(kind, m.group(), m.start(), m.end(), newline))
        newline = False
    return out


def _brace_regions(toks: list[_Tok]) -> list[tuple[int, int]]:
    regions: list[tuple[int, int]] = []
    stack: list[int] = []
    for t in toks:
        if t.text == "{":
            stack.append(t.start)
        elif t.text == "}" and stack:
            regions.append((stack.pop(), t.end))
    regions.extend((s, toks[-1].end) for s in stack)  # unclosed braces run to the end
    return regions


def detect_script(text: str, error_offset: int | None = None) -> GremlinScriptError | None:
    """Return the script error for `text`, or None when it looks like a plain syntax error.

    `error_offset` is where the parser failed; a failure inside `{...}` means a closure (a set
    literal would have parsed).
    """
    toks = _tokens(text)
    if not toks:
        return None
    # A failure inside braces is a closure whatever it contains; then statements, then Groovy.
    return (_lambda(toks) or _closure(toks, error_offset) or _statements(toks)
            or _groovy(toks))


def _lambda(toks: list[_Tok]) -> GremlinScriptError | None:
    for t in toks:
        if t.text == "->":
            return GremlinScriptError("lambda/closure arrow '->' is not Gremlin",
                                      (t.start, t.end), "closure")
    return None


def _statements(toks: list[_Tok]) -> GremlinScriptError | None:
    depth = 0
    for i, t in enumerate(toks):
        if t.text in "([{" and t.kind == "punct":
            depth += 1
        elif t.text in ")]}" and t.kind == "punct":
            depth = max(depth - 1, 0)
        elif t.text == ";" and i < len(toks) - 1:
            return GremlinScriptError("several statements separated by ';'",
                                      (t.start, toks[-1].end), "multi_statement")
        elif depth == 0 and i > 0 and t.newline_before and t.kind == "name" and (
                toks[i - 1].text in (")", "]", "}") or toks[i - 1].kind in _VALUE_KINDS):
            return GremlinScriptError("several statements, one per line",
                                      (t.start, toks[-1].end), "multi_statement")
    return None


def _groovy(toks: list[_Tok]) -> GremlinScriptError | None:
    for i, t in enumerate(toks):
        if (t.kind == "op" and t.text in _ASSIGN_OPS) or (t.kind == "punct" and t.text == "="):
            return GremlinScriptError(f"Groovy assignment '{t.text}' is not Gremlin",
                                      (t.start, t.end), "groovy")
        if t.kind == "op" and t.text in _GROOVY_OPS:
            return GremlinScriptError(f"Groovy operator '{t.text}' is not Gremlin",
                                      (t.start, t.end), "groovy")
        prev = toks[i - 1].text if i else ""
        if t.kind == "name" and prev != "." and t.text in lx.GROOVY_KEYWORDS - {"it"}:
            return GremlinScriptError(f"Groovy keyword '{t.text}' is not Gremlin",
                                      (t.start, t.end), "groovy")
        if t.kind == "name" and t.text == "new" and i + 1 < len(toks):
            nxt = toks[i + 1]
            if not nxt.text.endswith("Strategy"):
                return GremlinScriptError(f"object creation 'new {nxt.text}' is not Gremlin",
                                          (t.start, nxt.end), "groovy")
        if t.kind == "name" and prev == "." and t.text in lx.REFLECTION_METHODS:
            return GremlinScriptError(f"'{t.text}' is a Groovy/Java method, not a Gremlin step",
                                      (t.start, t.end), "method_call")
    return None


def _closure(toks: list[_Tok], error_offset: int | None) -> GremlinScriptError | None:
    if error_offset is None:
        return None
    for start, end in _brace_regions(toks):
        if start <= error_offset < end or error_offset == end:
            return GremlinScriptError("closure '{ ... }' is not Gremlin", (start, end), "closure")
    # `map{ ... }`: a brace straight after a method name is a closure argument
    for i, t in enumerate(toks[1:], 1):
        if t.text == "{" and toks[i - 1].kind == "name" and t.start == error_offset:
            return GremlinScriptError("closure '{ ... }' is not Gremlin", (t.start, t.end),
                                      "closure")
    return None
