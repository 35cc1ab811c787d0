"""The canonical emitter (proxy/cypher/emit.py): what leaves the proxy parses to the AST the
guard judged, carries no comments, and spells strings and names one way only."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from query_guard.build import build_guard, default_languages
from query_guard.cli.main import main
from query_guard.config.load import parse_config
from query_guard.cypher import ast
from query_guard.cypher.emit import AmbiguousText, canonical_string, emit_query, structure
from query_guard.cypher.lexical import segments
from query_guard.cypher.parser import parse, parse_tokens
from query_guard.cypher.query import CypherQuery
from query_guard.guard.pipeline import Guard
from query_guard.guard.registry import build_plugin_manager
from query_guard.guard.unsafe_chars import UNSAFE
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.context import GuardContext
from tests.budget import examples
from tests.corpora import read_jsonl

SCHEMA = SchemaCatalog.from_triples("(Person, ACTED_IN, Movie), (Person, DIRECTED, Movie)")


def emitted(text: str) -> str:
    return emit_query(CypherQuery.parse(text))


def same_ast(a: str, b: str) -> bool:
    return structure(parse(a)) == structure(parse(b))


def blanked(text: str, kinds: frozenset[str]) -> str:
    """`text` with its tokens of `kinds` blanked out, as the Cypher lexer reads them (unlike
    `segments`, which reads three backticks as a markdown fence)."""
    out = list(text)
    for token in parse_tokens(text)[1]:
        if token.type in kinds:
            start, end = token.start_pos or 0, token.end_pos or 0
            out[start:end] = "_" * (end - start)
    return "".join(out)


STRINGS = frozenset({"STRING"})
LITERALS = frozenset({"STRING", "ESCAPED_NAME", "PARAM"})


# ---------------------------------------------------------------- examples


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("MATCH (m:Movie)  // all\n RETURN m", "MATCH (m:Movie) RETURN m"),
        ("MATCH (a)- [:R]->(b) /* x */ RETURN a", "MATCH (a)-[:R]->(b) RETURN a"),
        ('RETURN "it\'s \\"x\\"" AS s', "RETURN 'it\\'s \"x\"' AS s"),
        ("RETURN 'caf\\u00e9' AS s", "RETURN 'café' AS s"),
        ("RETURN 'a\\tb\\\\c' AS s", "RETURN 'a\\tb\\\\c' AS s"),
        ("MATCH (n:`We``ird label`) RETURN n", "MATCH (n:`We``ird label`) RETURN n"),
        ("MATCH (n) WHERE n.x != 1 RETURN n", "MATCH (n) WHERE n.x <> 1 RETURN n"),
        ("RETURN 017 AS octal, 0x1F AS hex", "RETURN 15 AS octal, 31 AS hex"),
        ("RETURN 1 - -1 AS x, 2 < -1 AS y", "RETURN 1- -1 AS x, 2 < -1 AS y"),
    ],
)
def test_emission_examples(source: str, expected: str) -> None:
    assert emitted(source) == expected
    assert same_ast(source, expected)


def test_carriage_return_comment_trick_is_not_forwarded() -> None:
    """Without the ambiguous_text rule, the emitter alone already sends the judged read."""
    pm = build_plugin_manager(builtins=["query_guard.rules.read_only"], entry_points=False)
    guard = Guard(pm, GuardContext(settings=parse_config({}).guard), default_languages())
    verdict = guard.check("MATCH (m:Movie) //\rCREATE (x:Hacked)\nRETURN m")
    assert not verdict.blocked
    assert verdict.forward == "MATCH (m:Movie) RETURN m"


def test_forward_after_appended_limit_and_flipped_arrow() -> None:
    guard = build_guard(schema=SCHEMA)
    verdict = guard.check("MATCH (m:Movie)-[:ACTED_IN]->(p:Person) // who\nRETURN p.name")
    assert "DIR.REVERSED" in verdict.codes and "LIM.INJECTED" in verdict.codes
    assert verdict.forward == "MATCH (m:Movie)<-[:ACTED_IN]-(p:Person) RETURN p.name LIMIT 1000"
    assert same_ast(verdict.forward, verdict.query)


def test_blocked_verdict_forwards_nothing() -> None:
    verdict = build_guard().check("MATCH (n) DETACH DELETE n")
    assert verdict.blocked and verdict.forward == ""


def test_check_json_prints_forward(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--json", "MATCH (m:Movie) /* c */ RETURN count(m) AS n"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["query"] == "MATCH (m:Movie) /* c */ RETURN count(m) AS n"
    assert out["forward"] == "MATCH (m:Movie) RETURN count(m) AS n"


def test_comment_that_decides_lexing_is_refused() -> None:
    """`(n) - /*c*/ [1]` is a subtraction only because of the comment: without it `-[` opens a
    relationship pattern. The emitter cannot print that, so the pipeline refuses the query."""
    text = "WITH [1] AS n RETURN (n) - /*c*/ [1] AS x"
    with pytest.raises(ValueError):
        emit_query(CypherQuery.parse(text))
    verdict = build_guard().check(text)
    assert verdict.blocked and verdict.codes[-1] == "SEC.AMBIGUOUS_TEXT"
    assert verdict.forward == ""
    # the same text with plain spaces is no problem
    assert not build_guard().check("WITH [1] AS n RETURN n - [1] AS x").blocked


def test_corpus_round_trip() -> None:
    """Every CypherBench gold query re-emits to text with the same AST."""
    rows = read_jsonl("cypher", "cypherbench", "test_question_gold.jsonl")
    checked = 0
    for row in rows[:400]:
        query = CypherQuery.parse(row["gold_cypher"])
        out = emit_query(query)
        assert structure(parse(out)) == structure(query.script), row["gold_cypher"]
        assert not [s for s in segments(out) if s.kind.endswith("comment")]
        checked += 1
    assert checked == min(400, len(rows))


# ---------------------------------------------------------------- generated variants

_SEPARATORS = [" ", "\n", "\t", "  \n  ", " /* note */ ", "// note\n", "/* a\nb */", "\r\n"]
_WORD = re.compile(r"\w")


def _quote(value: str, style: str, draw: st.DrawFn) -> str:
    out = []
    for ch in value:
        forms = []
        if ch not in ("\\", style):
            forms.append(ch)
        if ord(ch) <= 0xFFFF:
            forms.append(f"\\u{ord(ch):04x}")
        forms += {"\n": ["\\n"], "\t": ["\\t"], "'": ["\\'"], '"': ['\\"'], "\\": ["\\\\"]}.get(
            ch, []
        )
        out.append(draw(st.sampled_from(forms)))
    return style + "".join(out) + style


_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


@st.composite
def query_variants(draw: st.DrawFn) -> tuple[str, str, str]:
    """(query with random separators/escapes, the string value, the label name)."""
    value = draw(_TEXT)
    label = draw(st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=8))
    literal = _quote(value, draw(st.sampled_from(["'", '"'])), draw)
    name = "`" + label.replace("`", "``") + "`"
    tokens = [
        "MATCH", "(", "m", ":", name, ")", "-[", ":", "R", "*", "1", "..", "2", "]", "->",
        "(", "p", ")", "WHERE", "m", ".", "title", "=", literal, "OR", "m", ".", "x", "<>",
        "-", "1", "RETURN", "m", ".", "title", "AS", "t", ",", "[", "x", "IN", "[", "1", "]",
        "|", "x", "*", "2", "]", "AS", "l", "LIMIT", "5",
    ]  # fmt: skip
    parts = [tokens[0]]
    for token in tokens[1:]:
        parts.append(draw(st.sampled_from(_SEPARATORS)))
        parts.append(token)
    return "".join(parts), value, label


# issue 25: a label holding a carriage return was emitted with the character raw
_RAW_CR_LABEL = (
    "MATCH ( m : ```\r` ) -[ : R * 1 .. 2 ] -> ( p ) WHERE m . title = '' OR m . x <> - 1 "
    "RETURN m . title AS t , [ x IN [ 1 ] | x * 2 ] AS l LIMIT 5",
    "",
    "`\r",
)


@settings(max_examples=examples(150))  # HYPOTHESIS_PROFILE=search: 10,000 (tests/README.md)
@given(query_variants())
@example(_RAW_CR_LABEL)
def test_generated_variants_emit_the_same_ast(case: tuple[str, str, str]) -> None:
    text, value, label = case
    query = CypherQuery.parse(text)
    strings = [n.value for n in query.find(ast.Literal) if n.kind == "string"]
    assert strings == [value]  # the generator's escapes decode as intended
    assert next(n.name for n in query.find(ast.LabelName)) == label
    if UNSAFE.search(label):  # no backtick name can carry it unambiguously: refused
        with pytest.raises(AmbiguousText, match="a name contains"):
            emit_query(query)
        return
    out = emit_query(query)
    assert structure(parse(out)) == structure(query.script)
    assert not [s for s in segments(out) if s.kind.endswith("comment")]
    assert not UNSAFE.search(blanked(out, STRINGS)), out  # no raw line break outside strings
    assert "  " not in blanked(out, LITERALS), out
    assert emit_query(CypherQuery.parse(out)) == out  # canonical: a fixed point


@settings(max_examples=examples(200))
@given(_TEXT)
def test_canonical_string_decodes_to_its_value(value: str) -> None:
    literal = canonical_string(value)
    assert literal.startswith("'") and literal.endswith("'")
    assert not re.search(r"[\r\n\x00-\x08\x0b-\x1f\x7f\x85]", literal)
    script = parse(f"RETURN {literal} AS s")
    [node] = [n for n in script.walk() if isinstance(n, ast.Literal)]
    assert node.value == value


@st.composite
def dynamic_variants(draw: st.DrawFn) -> str:
    """Neo4j 5 dynamic labels/types and parameterised schema names, with random separators."""
    opener = draw(st.sampled_from(["$(", "$any(", "$all(", "$ALL("]))
    inner = draw(st.sampled_from([["$label"], ["row", ".", "labels"], ["[", "'A'", "]"]]))
    tokens = draw(st.sampled_from([
        ["MATCH", "(", "n", ":", opener, *inner, ")", "{", "x", ":", "1", "}", ")", "-[", ":",
         opener, *inner, ")", "]", "->", "(", "m", ")", "WHERE", "m", ":", opener, *inner, ")",
         "SET", "n", ":", opener, *inner, ")", "REMOVE", "m", ":", "$(", "$l", ")"],
        ["EXPLAIN", "CREATE", "INDEX", "$name", "IF", "NOT", "EXISTS", "FOR", "(", "n", ":",
         "L", ")", "ON", "(", "n", ".", "p", ")"],
        ["DROP", "CONSTRAINT", "$name", "IF", "EXISTS"],
    ]))  # fmt: skip
    parts = [tokens[0]]
    for token in tokens[1:]:
        parts.append(draw(st.sampled_from(_SEPARATORS)))
        parts.append(token)
    return "".join(parts)


@settings(max_examples=examples(100))
@given(dynamic_variants())
def test_dynamic_names_emit_the_same_ast(text: str) -> None:
    query = CypherQuery.parse(text)
    out = emit_query(query)
    assert structure(parse(out)) == structure(query.script)
    assert emit_query(CypherQuery.parse(out)) == out  # canonical: a fixed point
