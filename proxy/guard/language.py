"""How the guard pipeline handles one query language: its parser, its rule hook and its
canonical printer (`Language`). Each language package builds its own (`cypher.language`,
`gremlin.language`, `sql.language`); `query_guard.build.default_languages` collects them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from query_guard.model import Edit, Finding


@dataclass(frozen=True)
class Language:
    """How the pipeline parses one query language and which hook checks it."""

    name: str
    parse: Callable[[str], Any]
    syntax_errors: tuple[type[Exception], ...]
    hook: str
    # turns a syntax exception into findings (SYN.PARSE, or SEC.SCRIPT for Gremlin scripts)
    describe_error: Callable[[Exception, str], list[Finding]]
    sample: str = ""  # a valid query, parsed once at start-up to build the parser
    argument: str = "query"  # the hook's parameter name for the parsed query
    # the canonical text that leaves the proxy (DESIGN §1), from the judged parse and the edits
    # applied to its text since; raises ValueError when it cannot be printed unambiguously
    emit: Callable[[Any, Sequence[Edit]], str] | None = None
    # (is it an EXPLAIN, Neo4j's query type) of a parse: Verdict.explain / query_type
    statement: Callable[[Any], tuple[bool, str]] | None = None
    # queries of another language inside a parse (AGE's `cypher('g', $$ … $$)` in SQL): their
    # (start, end) spans in the text and language; the guard checks each with that language
    embedded: Callable[[Any], list[tuple[tuple[int, int], str]]] | None = None
