"""Errors of the Gremlin front end: plain syntax errors and script (non-traversal) content.

Callers branch on the class: a `GremlinSyntaxError` becomes `SYN.PARSE`, a `GremlinScriptError`
becomes `SEC.SCRIPT` (or `SEC.MULTI_STATEMENT` when `kind == "multi_statement"`).
"""

from __future__ import annotations

from query_guard.model import Span


class GremlinError(Exception):
    """Base of every error the Gremlin parser, transformer and bytecode codec raise."""


class GremlinSyntaxError(GremlinError):
    """The text is not a Gremlin traversal. Positions are 1-based line/column, 0-based offset."""

    def __init__(
        self,
        line: int,
        column: int,
        offset: int,
        expected: list[str],
        message: str,
    ) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.offset = offset
        self.expected = expected
        self.message = message

    @property
    def span(self) -> Span:
        return (self.offset, self.offset + 1)

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}: {self.message}"


class GremlinScriptError(GremlinError):
    """The text contains code outside the traversal language (closure, Groovy, class reference,
    several statements, lambda in bytecode). `span` locates the offending part.

    `kind` is one of: "closure", "lambda", "groovy", "class_reference", "method_call",
    "multi_statement".
    """

    def __init__(self, reason: str, span: Span, kind: str = "groovy") -> None:
        super().__init__(reason)
        self.reason = reason
        self.span = span
        self.kind = kind

    def __str__(self) -> str:
        return f"{self.reason} (at {self.span[0]}..{self.span[1]})"


class BytecodeError(GremlinError):
    """A traversal (or bytecode) cannot be translated: e.g. a root traversal used as an
    argument, an unhashable set element, an object of unknown type in bytecode."""
