"""Gremlin `\\uXXXX` escapes (issue 19, item 9): Groovy decodes them before lexing, like Java,
so an escape that decodes to the string's quote, a backslash or a line break would end or
shift a string on Gremlin Server while the guard read one string literal — refused with
SEC.AMBIGUOUS_TEXT, as in Cypher. Harmless escapes are judged decoded, and the proxy's own
printed strings (which escape control characters as `\\uXXXX`) read back unchanged."""

from __future__ import annotations

import pytest

from query_guard.build import build_guard
from query_guard.gremlin import graphersal_dialect
from query_guard.gremlin.ast import String
from query_guard.gremlin.parser import parse_traversal
from query_guard.gremlin.printer import quote
from query_guard.guard.unsafe_chars import UNSAFE
from query_guard.model import Action

GUARD = build_guard(None)


@pytest.mark.parametrize(
    "traversal",
    [
        r"g.V().has('name', 'x\u0027).drop().iterate() //').values('age')",
        r"g.V().has('name', 'x\uu0027').values('age')",
        r"g.V().has('name', 'x\u005c').values('age')",
        r'g.V().has("name", "x\u0022").values("age")',
        r"g.V().has('name', 'x\u000a').values('age')",
        r"g.V().has('name', 'x\u000D').values('age')",
        "g.V().has('name', 'x').values('age') // \\u000ag.V().drop()",
        "g.V().has('name', 'x').values('age') /* \\u002a/ g.V().drop() */",
    ],
    ids=[
        "quote",
        "uu-quote",
        "backslash",
        "double-quote",
        "lf",
        "cr",
        "line-comment",
        "block-comment",
    ],
)
def test_an_escape_groovy_reads_differently_is_refused(traversal: str) -> None:
    verdict = GUARD.check(traversal, "gremlin")
    assert verdict.action is Action.BLOCK
    codes = [f.code for f in verdict.findings]
    assert codes == ["SEC.AMBIGUOUS_TEXT"], verdict.findings
    assert "\\u" in verdict.findings[0].message


@pytest.mark.parametrize(
    ("traversal", "value"),
    [
        (r"g.V().has('name', 'caf\u00e9').values('age')", "café"),
        (r'g.V().has("name", "it\u0027s").values("age")', "it's"),
    ],
)
def test_a_harmless_escape_is_judged_decoded(traversal: str, value: str) -> None:
    verdict = GUARD.check(traversal, "gremlin")
    assert verdict.action is not Action.BLOCK
    assert value in [s.value for s in parse_traversal(verdict.forward).find_all(String)]


def test_a_decoded_dollar_in_double_quotes_is_an_interpolation() -> None:
    verdict = GUARD.check(r'g.V().has("name", "\u0024{System.exit(0)}")', "gremlin")
    assert verdict.action is Action.BLOCK and "SEC.SCRIPT" in verdict.codes


CONTROL = "".join(chr(c) for c in range(0x00, 0xA0) if UNSAFE.match(chr(c))) + "\u2028\u2029"


@pytest.mark.parametrize("value", [CONTROL, "it's a \\ test\n", "tab\tand\rreturn", "$x ${y}"])
def test_the_printers_own_escapes_read_back_the_same(value: str) -> None:
    printed = f"g.V().has('name', {quote(value)}).values('age')"
    verdict = GUARD.check(printed, "gremlin")
    assert "SEC.AMBIGUOUS_TEXT" not in verdict.codes, verdict.findings
    assert verdict.action is not Action.BLOCK
    # the string the guard judged is the value printed
    tree = parse_traversal(printed)
    strings = [n.value for n in tree.walk() if isinstance(n, String)]
    assert value in strings
    # graphersal's dialect escapes the same characters, never a quote or backslash as \\u
    dialect = graphersal_dialect.quote(value)
    assert "\\u0027" not in dialect and "\\u005c" not in dialect and "\\u0022" not in dialect
