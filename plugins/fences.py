"""Fences — strip markdown code fences and surrounding prose from a query (`SYN.FENCE`).

LLMs wrap queries in ```` ```cypher … ``` ```` blocks or precede them with a sentence
("Here is the query:"). The rule keeps the first fenced block's body, or — without fences —
drops leading lines before the first line that starts like a query (a Cypher clause keyword,
or `g.` for Gremlin) and a trailing explanation after a blank line. The edits are deletions,
so the query's own bytes stay as they were. Runs before parsing.
"""

from __future__ import annotations

import re

from proxy.context import GuardContext
from proxy.hookspecs import hookimpl
from proxy.model import Edit, Finding, Severity

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)(?:```|\Z)", re.S)
_CYPHER_START = re.compile(
    r"(?:(?:MATCH|OPTIONAL|WITH|UNWIND|RETURN|CALL|CREATE|MERGE|DELETE|DETACH|SET|REMOVE|"
    r"FOREACH|LOAD|USE|EXPLAIN|PROFILE|SHOW|DROP|UNION)\b|//|/\*)",
    re.I,
)
_GREMLIN_START = re.compile(r"(?:g\s*\.|__\s*\.|//)")
_PROSE_END = re.compile(r"\n[ \t]*\r?\n(?=[ \t]*[A-Z][a-z]+[ ,][^\n]*[.:!?][ \t]*(?:\n|\Z))")


@hookimpl
def guard_text(text: str, language: str, ctx: GuardContext) -> list[Finding]:
    if "```" in text:
        return _fenced(text)
    return _prose(text, _GREMLIN_START if language == "gremlin" else _CYPHER_START)


def _fenced(text: str) -> list[Finding]:
    m = _FENCE.search(text)
    if m is None:
        return []
    body_start = m.start(2)
    body_end = body_start + len(m.group(2).rstrip())
    return _keep(text, body_start, body_end, "markdown code fence removed around the query")


def _prose(text: str, start: re.Pattern[str]) -> list[Finding]:
    stripped = text.lstrip()
    if not stripped or start.match(stripped):
        head = 0
    else:
        m = re.search(r"^[ \t]*" + start.pattern, text, re.M | (start.flags & re.I))
        if m is None:
            return []
        head = m.start()
        head += len(text[head:]) - len(text[head:].lstrip(" \t"))
    tail_match = _PROSE_END.search(text, head)
    tail = tail_match.start() if tail_match else len(text)
    if head == 0 and tail == len(text):
        return []
    return _keep(text, head, tail, "prose around the query removed")


def _keep(text: str, start: int, end: int, message: str) -> list[Finding]:
    """A SYN.FENCE finding whose fix deletes everything outside text[start:end]."""
    edits = [Edit(0, start, "")] if start > 0 else []
    if end < len(text):
        edits.append(Edit(end, len(text), ""))
    return [Finding("SYN.FENCE", Severity.WARNING, message, (0, len(text)), fix=tuple(edits))]
