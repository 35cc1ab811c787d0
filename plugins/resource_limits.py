"""Resource limits on the query text — `LIM.QUERY_SIZE`, `LIM.NESTING` (before parsing).

Runs first in the text stage, before fences are stripped and before anything is parsed: a
query longer than `[limits] max_query_bytes` (UTF-8 bytes), or whose brackets nest deeper
than `[limits] max_nesting`, is blocked with an error and never reaches the parser's
recursion or the backend: FalkorDB's parser time doubles with every level of
`RETURN ((((…1…))))` (measured: 12 levels 12 ms, 16 levels 0.4 s, 20 levels 9 s, and its
query TIMEOUT does not stop it). The pipeline stops at a text-stage error, so no later rule
(and nothing recursive) runs on such input.

Nesting counts every open `(`, `[` and `{`: parenthesised expressions, lists, maps, node and
relationship patterns, `CALL {…}` / `EXISTS {…}` / `COUNT {…}` subqueries, comprehensions,
Gremlin's nested traversals `__.out(__.in(…))`. Brackets inside string literals, backtick
identifiers and comments do not count. The scan is one linear pass (a regular expression
skips everything that is not a bracket, string or comment). The default 12 is three times
what real LLM Cypher needs: the deepest of the 14,541 queries in `../shared/corpora` —
text2cypher GPT-4 generations (9,846), CypherBench gold (2,348) and Qwen drafts (2,347) —
nests 4 levels; the openCypher TCK's ordinary queries reach 7 (only its two deliberate
deep-nesting scenarios go to 20 and 40). 0 switches a limit off.

Example (max_nesting 20)::

    RETURN ((((((((((((((((((((((1))))))))))))))))))))))
    -> blocked, LIM.NESTING: brackets nest 22 levels deep at offset 28; the limit is 20 …
"""

from __future__ import annotations

import re

from proxy.context import GuardContext
from proxy.hookspecs import hookimpl
from proxy.model import Finding, Severity

# One alternation, left to right: things whose brackets do not count (strings, quoted
# names, comments — an unterminated one runs to the end of the text), then the brackets.
# (Strings as "unrolled loops": a run of plain characters is one step, so a megabyte-long
# literal is skipped in milliseconds.)
_TOKENS = re.compile(
    r"""'[^'\\]*(?:\\.[^'\\]*)*(?:'|\Z)"""
    r"""|"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)"""
    r"|`[^`]*(?:`|\Z)"
    r"|//[^\n]*"
    r"|/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"
    r"|/\*.*"
    r"|[(\[{]"
    r"|[)\]}]",
    re.DOTALL,
)
_OPEN = frozenset("([{")
_CLOSE = frozenset(")]}")


def nesting(text: str, limit: int = 0) -> tuple[int, int]:
    """(deepest bracket nesting, offset where it is first reached). With `limit` > 0 the scan
    stops at the first bracket that goes deeper than `limit` (the answer is then limit + 1).

    >>> nesting("RETURN [(1), {a: ')'}]")
    (2, 8)
    """
    depth = deepest = 0
    where = 0
    for match in _TOKENS.finditer(text):
        char = match.group()
        if char in _OPEN:
            depth += 1
            if depth > deepest:
                deepest, where = depth, match.start()
                if limit and deepest > limit:
                    break
        elif char in _CLOSE:
            depth = max(0, depth - 1)
    return deepest, where


def query_size(text: str) -> int:
    """The query's size in UTF-8 bytes (what a client sent), cheaply bounded from below."""
    return len(text.encode("utf-8", "surrogatepass"))


def check_text(text: str, max_bytes: int, max_depth: int) -> list[Finding]:
    """The findings for `text` under the two limits (0 switches one off)."""
    if max_bytes and len(text) * 4 > max_bytes:  # only then can the byte size exceed it
        size = query_size(text)
        if size > max_bytes:
            return [
                Finding(
                    "LIM.QUERY_SIZE",
                    Severity.ERROR,
                    f"the query is {size} bytes long; the limit is {max_bytes} bytes "
                    "([limits] max_query_bytes). Send a shorter query: pass long values "
                    "as parameters, and split work into several queries",
                    (0, 0),
                )
            ]
    if max_depth:
        deepest, where = nesting(text, max_depth)
        if deepest > max_depth:
            return [
                Finding(
                    "LIM.NESTING",
                    Severity.ERROR,
                    f"brackets nest more than {max_depth} levels deep at offset {where} "
                    "([limits] max_nesting). Flatten the query: drop redundant parentheses, "
                    "name intermediate results with WITH, avoid nesting lists, maps and "
                    "subqueries this deep",
                    (where, where + 1),
                )
            ]
    return []


@hookimpl
def guard_text(text: str, language: str, ctx: GuardContext) -> list[Finding]:
    settings = ctx.settings
    return check_text(text, settings.max_query_bytes, settings.max_nesting)
