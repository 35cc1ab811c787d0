"""Resource limits on the query text — `LIM.QUERY_SIZE`, `LIM.NESTING` (before parsing).

Runs first in the text stage, before fences are stripped and before anything is parsed: a
query longer than `[limits] max_query_bytes` (UTF-8 bytes) or `max_query_tokens`, or whose
expressions nest deeper than `[limits] max_nesting`, is blocked with an error and never
reaches the parser's recursion or the backend. The guard judges about 40 tokens a
millisecond (2,000, the default, in about 50 ms; 64 KiB of `1+1+…` would take over a
second), and the longest of the real LLM queries below has 161 tokens. FalkorDB's parser
time doubles with every level of nesting, of any kind (measured, `RETURN` + 18 levels:
parentheses 1.7 s, lists 2.2 s, maps 6.7 s, `CASE` 4.1 s, `NOT` 5.2 s, unary minus 4.7 s; 22
levels of lists 60 s; its query TIMEOUT does not stop it).
The pipeline stops at a text-stage error, so no later rule (and nothing recursive) runs.

Nesting counts every open `(`, `[`, `{` and `CASE … END` — parenthesised expressions, lists,
maps, node and relationship patterns, `CALL {…}` / `EXISTS {…}` / `COUNT {…}` subqueries,
comprehensions, Gremlin's nested traversals `__.out(__.in(…))` — plus chains of prefix
operators (`NOT NOT x`, `- -1`). Brackets and words inside string literals, backtick names
and comments do not count. The scan is one linear pass (a regular expression skips
everything else). The default 12 is three times what real LLM Cypher needs: the deepest of
the 14,541 queries in `../shared/corpora` — text2cypher GPT-4 generations (9,846),
CypherBench gold (2,348) and Qwen drafts (2,347) — nests 4 levels (the longest is 790
characters, against the 64 KiB default size); the openCypher TCK's ordinary queries reach 7
(only its two deliberate deep-nesting scenarios go to 20 and 40). At 12 levels FalkorDB
parses in about 12 ms. 0 switches a limit off.

SQL is judged once more after parsing: a statement whose tree is deeper than
`SQL_MAX_TREE_DEPTH` (100) — a long chain of mixed operators, casts or comparisons
(`1 + 1 - 1 + …`, `x::int::int…`), which nests no bracket — is refused with `LIM.NESTING`,
because sqlglot prints it for the database recursively (AND / OR and UNION chains are
printed in a loop and do not count).

Example (max_nesting 12)::

    RETURN NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT true
    -> blocked, LIM.NESTING: expressions nest more than 12 levels deep at offset 55 …
"""

from __future__ import annotations

import re

from sqlglot import exp

from query_guard.api import Finding, GuardContext, Severity, hookimpl
from query_guard.api.sql import SqlQuery

# sqlglot's generator recurses once per level of its tree (chains of AND / OR and of set
# operations excepted: it prints those in a loop); 240 levels exhaust Python's stack, the
# 1,034 Spider queries reach 12
SQL_MAX_TREE_DEPTH = 100

# One alternation, left to right: things whose brackets do not count (strings, quoted
# names, comments — an unterminated one runs to the end of the text), then what nests.
# (Strings as "unrolled loops": a run of plain characters is one step, so a megabyte-long
# literal is skipped in milliseconds.)
_QUOTED = (
    r"""'[^'\\]*(?:\\.[^'\\]*)*(?:'|\Z)"""
    r"""|"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)"""
    r"|`[^`]*(?:`|\Z)"
    r"|//[^\n]*"
    r"|/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"
    r"|/\*.*"
)
# SQL as sqlglot reads PostgreSQL and SQLite: '' doubles a quote (backslash escapes only in
# E'…'), "…" and `…` names, $tag$…$tag$ bodies, -- and /* */ comments; `~` is a prefix too
_SQL_QUOTED = (
    r"""(?<![\w$])[eE]'[^'\\]*(?:(?:\\.|'')[^'\\]*)*(?:'|\Z)"""
    r"""|'[^']*(?:''[^']*)*(?:'|\Z)"""
    r"""|"[^"]*(?:""[^"]*)*(?:"|\Z)"""
    r"|`[^`]*(?:`|\Z)"
    r"|\$\$.*?(?:\$\$|\Z)"
    r"|\$(?P<tag>[A-Za-z_][A-Za-z_0-9]*)\$.*?(?:\$(?P=tag)\$|\Z)"
    r"|--[^\n]*"
    r"|/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"
    r"|/\*.*"
)
_NESTS = (
    r"|(?P<open>[(\[{]|\bCASE\b)"
    r"|(?P<close>[)\]}]|\bEND\b)"
    r"|(?P<is_not>\bIS\s+NOT\b)"
    r"|(?P<not>\bNOT\b)"
)
_FLAGS = re.DOTALL | re.IGNORECASE
_TOKENS = re.compile(
    _QUOTED + _NESTS + r"|(?P<bang>!(?!=))"  # a label negation `:!A` (not `!=`)
    r"|(?P<signs>[-+](?:\s*[-+])*)",
    _FLAGS,
)
_SQL_TOKENS = re.compile(_SQL_QUOTED + _NESTS + r"|(?P<signs>[-+~](?:\s*[-+~])*)", _FLAGS)
# for counting tokens: a string, name or comment is one, a word is one, any other character
_WORDS = re.compile(_QUOTED + r"|\w+|\S", _FLAGS)
_SQL_WORDS = re.compile(_SQL_QUOTED + r"|\w+|\S", _FLAGS)
_CLOSING = {")": "(", "]": "[", "}": "{"}
# a sign followed (after spaces) by another: each is one unary operator of a run (`- -1`)
_RUN_SIGNS = {"sql": re.compile(r"[-+~]\s*(?=[-+~])")}
_RUN_SIGNS["cypher"] = _RUN_SIGNS["gremlin"] = re.compile(r"[-+]\s*(?=[-+])")


def nesting(text: str, limit: int = 0, language: str = "cypher") -> tuple[int, int]:
    """(deepest expression nesting, offset where it is first reached). With `limit` > 0 the
    scan stops as soon as the nesting exceeds `limit` (the answer is then limit + 1).

    Nesting counts open brackets, open `CASE … END`, and chains of prefix operators (`NOT`,
    unary `-`/`+`, `!` in Cypher label expressions, `~` in SQL), which nest the expression
    after them just as deeply in a parser (a chain's operators stay counted inside a bracket
    that follows them). SQL is read with its own strings and comments; Gremlin: brackets only.

    >>> nesting("RETURN [(1), {a: ')'}]")
    (2, 8)
    >>> nesting("RETURN NOT (NOT - -1)")  # the first sign of a run counts as binary
    (4, 16)
    """
    stack: list[tuple[str, int]] = []  # (opener, prefix operators carried into it)
    carried = prefix = 0
    deepest = where = 0
    last_end = 0
    brackets_only = language == "gremlin"
    for match in (_SQL_TOKENS if language == "sql" else _TOKENS).finditer(text):
        kind = match.lastgroup
        if kind in (None, "tag"):  # a string, quoted name or comment
            continue
        token = match.group()
        if brackets_only and token[0] not in "([{)]}":
            continue
        if prefix and text[last_end : match.start()].strip():
            prefix = 0  # an operand came between: the chain ended
        last_end = match.end()
        if kind == "is_not":  # `x IS NOT NULL`: a postfix test, nothing nests
            prefix = 0
            continue
        if len(token) > 1 and text[match.start() - 1 : match.start()] in (".", "$", ":"):
            continue  # a property, parameter or label named case / end
        if kind == "close":
            opener = "CASE" if len(token) == 3 else _CLOSING[token]
            if stack and stack[-1][0].upper() == opener:
                carried -= stack.pop()[1]
            prefix = 0
            continue
        if kind == "open":
            stack.append((token, prefix))
            carried += prefix
            prefix = 0
        elif kind in ("not", "bang"):  # `NOT x`, a label negation `:!A`
            prefix += 1
        else:  # a run of signs: all but the first are unary
            prefix += sum(1 for c in token if c in "+-~") - 1
        depth = len(stack) + carried + prefix
        if depth > deepest:
            deepest, where = depth, match.start()
            if limit and deepest > limit:
                break
    return deepest, where


def nesting_bound(text: str, language: str = "cypher") -> int:
    """An upper bound of `nesting(text)[0]`, cheaply (str.count): every bracket, `CASE` and
    prefix operator in the text (strings and comments included) as if all were nested. Most
    queries are far below the limit, so the exact scan is needed only when this exceeds it.
    -1 (no bound) for non-ASCII text, whose case-insensitive words `str.upper` may not show."""
    if not text.isascii():
        return -1
    upper = text.upper()
    brackets = text.count("(") + text.count("[") + text.count("{") + upper.count("CASE")
    prefixes = upper.count("NOT") + text.count("!")
    return brackets + prefixes + len(_RUN_SIGNS.get(language, _RUN_SIGNS["sql"]).findall(text))


def query_size(text: str) -> int:
    """The query's size in UTF-8 bytes (what a client sent), cheaply bounded from below."""
    return len(text.encode("utf-8", "surrogatepass"))


def tokens(text: str, limit: int = 0, language: str = "cypher") -> tuple[int, int]:
    """(how many tokens `text` has, the offset after the last one counted): a word, a literal,
    a quoted name or a comment is one token, any other character one. With `limit` > 0 the
    count stops at limit + 1."""
    count = end = 0
    for count, match in enumerate((_SQL_WORDS if language == "sql" else _WORDS).finditer(text), 1):
        end = match.end()
        if count == limit + 1:
            break
    return count, end


def check_text(
    text: str, max_bytes: int, max_depth: int, language: str = "cypher", max_tokens: int = 0
) -> list[Finding]:
    """The findings for `text` under the limits (0 switches one off)."""
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
    scanned, too_many = text, False
    # every token is at least one character: a text no longer than the limit is within it
    if max_tokens and len(text) > max_tokens:
        # first: the nesting scan then reads no more than max_tokens tokens
        count, end = tokens(text, max_tokens, language)
        if count > max_tokens:
            scanned, too_many = text[:end], True
    if max_depth and not 0 <= nesting_bound(scanned, language) <= max_depth:
        deepest, where = nesting(scanned, max_depth, language)
        if deepest > max_depth:
            return [
                Finding(
                    "LIM.NESTING",
                    Severity.ERROR,
                    f"expressions nest more than {max_depth} levels deep at offset {where} "
                    "([limits] max_nesting). Flatten the query: drop redundant parentheses "
                    "and double negations, name intermediate results with WITH, avoid "
                    "nesting lists, maps, CASE and subqueries this deep",
                    (where, where + 1),
                )
            ]
    if too_many:
        return [
            Finding(
                "LIM.QUERY_SIZE",
                Severity.ERROR,
                f"the query has more than {max_tokens} tokens ([limits] max_query_tokens). "
                "Send a shorter query: pass long lists of values as parameters, and split "
                "long chains of conditions or operators into several queries",
                (0, 0),
            )
        ]
    return []


@hookimpl
def guard_text(text: str, language: str, ctx: GuardContext) -> list[Finding]:
    settings = ctx.settings
    return check_text(
        text, settings.max_query_bytes, settings.max_nesting, language, settings.max_query_tokens
    )


@hookimpl
def guard_sql(query: SqlQuery, ctx: GuardContext) -> list[Finding]:
    """A statement whose tree is deeper than `SQL_MAX_TREE_DEPTH` (a long chain of mixed
    operators, casts or comparisons: `1 + 1 - 1 + …`, `x::int::int…`) could not be printed for
    the database: LIM.NESTING."""
    for statement in query.statements:
        node = _too_deep(statement.tree, SQL_MAX_TREE_DEPTH)
        if node is not None:
            span = query.span_of(node, statement)
            return [
                Finding(
                    "LIM.NESTING",
                    Severity.ERROR,
                    f"the statement's expressions nest more than {SQL_MAX_TREE_DEPTH} levels "
                    f"deep at offset {span[0]} (a long chain of operators, casts or "
                    "comparisons). Split the expression or compute parts in a subquery",
                    span,
                )
            ]
    return []


def _too_deep(tree: exp.Expression, bound: int) -> exp.Expression | None:
    """The first node more than `bound` levels deep (an operand of an AND/OR chain or a set
    operation chain of the same kind stays at its chain's level), or None."""
    stack: list[tuple[exp.Expression, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > bound:
            return node
        chain = isinstance(node, exp.Connector | exp.SetOperation)
        for child in node.iter_expressions():
            same = chain and type(child) is type(node)
            stack.append((child, depth if same else depth + 1))
    return None
