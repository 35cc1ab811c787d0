"""Fences — strip markdown code fences and surrounding prose from a query (`SYN.FENCE`).

LLMs wrap queries in ```` ```cypher … ``` ```` blocks, precede them with a sentence ("Here is
the query:") and follow them with an explanation. The rule keeps the first fenced block's body,
or — without fences — drops leading lines before the first line that starts like a query (a
Cypher clause keyword, `EXPLAIN`/`PROFILE` included, or `g.` for Gremlin) and a trailing prose
paragraph after a blank line ("\\n\\nNote: this query …", lowercase starts and bullets too).
Fences and blank lines inside string literals and comments are query text, never touched:
``MATCH (n) WHERE n.x CONTAINS '```' RETURN n`` is allowed unchanged. A name that starts with a
backtick (``n:```x` ``, the label "`x") is a name, not a fence. When the query comes first, its
first fence closes it (an answer whose opening fence was lost): the fence and what follows go.
A Cypher paragraph is only dropped when the text before it parses on its own and the whole text
does not read as one query. The edits are deletions, so the query's own bytes stay as they
were. Runs before parsing.

Nothing that holds a write is ever deleted: when the prose or fenced-off text holds a write
clause keyword (`CREATE`, `MERGE`, `DELETE`, `DETACH`, `SET`, `REMOVE`, `DROP`, `FOREACH`,
`LOAD CSV`, `CALL`; SQL's `INSERT`, `UPDATE`, `ALTER`, …; in any case) or a Gremlin mutation
step call (`drop(`, `addV(`, `property(`, …), the text is judged as written: under
`guard.read_only` it is refused with `SEC.WRITE` (the client asked for a write, and must not
silently get a read), otherwise the parser and the rules judge all of it.

Example: ``MATCH (m:Movie) RETURN m.title\\n\\nThis lists every title.`` →
``MATCH (m:Movie) RETURN m.title`` (SYN.FENCE, warning).
"""

from __future__ import annotations

import re

from query_guard.api import Edit, Finding, GuardContext, Severity, hookimpl
from query_guard.api.cypher import Segment, segments

_FENCE_OPEN = re.compile(r"^[ \t]*```[ \t]*([A-Za-z0-9_+-]*)[ \t]*(?:\r?\n|\Z)", re.M)
_FENCE_ANY = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*(?:\r?\n)?")
_CYPHER_START = re.compile(
    r"(?:(?:MATCH|OPTIONAL|WITH|UNWIND|RETURN|CALL|CREATE|MERGE|DELETE|DETACH|SET|REMOVE|"
    r"FOREACH|LOAD|USE|EXPLAIN|PROFILE|SHOW|DROP|UNION)\b|//|/\*)",
    re.I,
)
_GREMLIN_START = re.compile(r"(?:g\s*\.|__\s*\.|//)")
_BLANK_LINE = re.compile(r"\n[ \t]*\r?\n")
# a paragraph that starts like prose: a word, or a bullet / numbered item before a word
_PROSE_START = re.compile(r"(?:[-*•][ \t]+|\d+[.)][ \t]+)?[^\W\d_]")


@hookimpl
def guard_text(text: str, language: str, ctx: GuardContext) -> list[Finding]:
    if "```" in text:
        found = _fenced(text, language, ctx)
        if found is not None:
            return found
    return _prose(text, language, ctx)


def _fenced(text: str, language: str, ctx: GuardContext) -> list[Finding] | None:
    """Keep the first fenced block's body; None when every ``` is inside a string/comment."""
    backticks = language != "gremlin"
    if _query_start(language).match(text.lstrip()):
        # the text is query first: a fence inside one of its strings or comments is content
        spans = segments(text, backticks)
        fences = (m for m in _FENCE_ANY.finditer(text) if not _in_segment(spans, m.start()))
        closing = next(fences, None)
        if closing is None:
            return None
        # the query came first, so its first fence closes it (a block whose opening was lost)
        end = len(text[: closing.start()].rstrip())
        return _keep(text, 0, end, "markdown code fence removed after the query", language, ctx)
    else:  # prose first (its apostrophes are not quotes): a fence line, else any fence
        opening = _FENCE_OPEN.search(text) or _FENCE_ANY.search(text)
    if opening is None:
        return None
    body_start = opening.end()
    body = text[body_start:]
    spans = segments(body, backticks)  # the body is query text
    ends = (m.start() for m in re.finditer("```", body) if not _in_segment(spans, m.start()))
    body_end = body_start + len(body[: next(ends, len(body))].rstrip())
    return _keep(
        text, body_start, body_end, "markdown code fence removed around the query", language, ctx
    )


def _query_start(language: str) -> re.Pattern[str]:
    return _GREMLIN_START if language == "gremlin" else _CYPHER_START


def _in_segment(spans: list[Segment], pos: int) -> bool:
    return any(s.start <= pos < s.end for s in spans)


def _prose(text: str, language: str, ctx: GuardContext) -> list[Finding]:
    start = _query_start(language)
    stripped = text.lstrip()
    if not stripped or start.match(stripped):
        head = 0
    else:
        m = re.search(r"^[ \t]*" + start.pattern, text, re.M | (start.flags & re.I))
        if m is None:
            return []
        head = m.start()
        if _CODE_LIKE.search(text[:head]):
            return []  # code before the query is not prose: the parser judges all of it
        head += len(text[head:]) - len(text[head:].lstrip(" \t"))
    tail = _prose_tail(text, head, language, start)
    if head == 0 and tail == len(text):
        return []
    return _keep(text, head, tail, "prose around the query removed", language, ctx)


# a call, a statement separator or a block: what leads the query is code, not a sentence
_CODE_LIKE = re.compile(r"[\w'\"\])]\s*\.\s*\w+\s*\(|[;{}]|\w\(.*\)\s*$", re.M)


def _prose_tail(text: str, head: int, language: str, start: re.Pattern[str]) -> int:
    """Where a trailing prose paragraph begins (len(text) when there is none)."""
    if "\n" not in text:  # no blank line (most queries): no paragraph after one
        return len(text)
    blanks = list(_BLANK_LINE.finditer(text, head))
    if not blanks:
        return len(text)
    spans = segments(text[head:], backticks=language != "gremlin")
    for blank in blanks:
        if _in_segment(spans, blank.start() - head):
            continue
        paragraph = text[blank.end() :].lstrip()
        if not _PROSE_START.match(paragraph):
            continue
        if language == "cypher":
            # "With this query …" starts like a clause: the parser decides
            if not _prose_after_query(text[head : blank.start()], text[head:]):
                continue
        elif start.match(paragraph):
            continue
        return blank.start()
    return len(text)


def _prose_after_query(query: str, whole: str) -> bool:
    """The text before the paragraph is a query and the whole text is not."""
    from query_guard.api.cypher import CypherSyntaxError, parse

    try:
        parse(query)
    except CypherSyntaxError:
        return False
    try:
        parse(whole)
    except CypherSyntaxError:
        return True
    return False


# What a write looks like in the text a fix would delete: clause keywords of Cypher (and of
# SQL), or a Gremlin mutation step called. Prose that mentions one is never deleted.
_CYPHER_WRITE = r"CREATE|MERGE|DELETE|DETACH|SET|REMOVE|DROP|FOREACH|LOAD\s+CSV|CALL"
_WRITES = {
    "cypher": re.compile(rf"\b(?:{_CYPHER_WRITE})\b", re.I),
    "sql": re.compile(
        rf"\b(?:{_CYPHER_WRITE}|INSERT|UPDATE|UPSERT|REPLACE|ALTER|TRUNCATE|GRANT|REVOKE|COPY"
        r"|VACUUM|ATTACH|PRAGMA|DO|EXECUTE|LOCK)\b",
        re.I,
    ),
    "gremlin": re.compile(
        r"\b(?:addV|addE|property|drop|mergeV|mergeE|addLabel|dropLabel|io|call)\s*\("
    ),
}


def _keep(
    text: str, start: int, end: int, message: str, language: str, ctx: GuardContext
) -> list[Finding]:
    """A SYN.FENCE finding whose fix deletes everything outside text[start:end] — unless that
    text holds a write: then nothing is deleted and the query is judged as written (read-only:
    refused here, SEC.WRITE, so no write hides behind a blank line)."""
    writes = _WRITES.get(language, _WRITES["cypher"])
    found = writes.search(text, 0, start) or writes.search(text, end)
    if found is not None:
        if not ctx.settings.read_only:
            return []
        return [
            Finding(
                "SEC.WRITE",
                Severity.ERROR,
                f"the text around the query holds {found.group()!r}, a write: prose and "
                "code fences are only removed when they hold no write, so the text is judged "
                "as written, and writes are not allowed (read-only). Send the query alone",
                found.span(),
            )
        ]
    edits = [Edit(0, start, "")] if start > 0 else []
    if end < len(text):
        edits.append(Edit(end, len(text), ""))
    return [Finding("SYN.FENCE", Severity.WARNING, message, (0, len(text)), fix=tuple(edits))]
