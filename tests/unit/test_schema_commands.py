"""Neo4j 5 index and constraint commands (grammars/cypher.lark `create_index`,
`create_constraint`, `drop_schema`): parsed in full into `SchemaDefinition`, re-printed from the
guard's tokens like any other query (comments and odd spacing gone, names re-quoted), so what
runs is what the guard judged; administration commands stay coarse and are never printed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from query_guard.build import default_languages
from query_guard.compat.served import idempotent
from query_guard.config.load import parse_config
from query_guard.cypher import ast
from query_guard.cypher.ast_schema import SchemaDefinition
from query_guard.cypher.emit import Unforwardable, canonical_name, emit_query, structure
from query_guard.cypher.parser import CypherSyntaxError, parse
from query_guard.cypher.query import CypherQuery
from query_guard.cypher.statement import query_type
from query_guard.guard.pipeline import Guard
from query_guard.guard.registry import build_plugin_manager
from query_guard.schema.context import GuardContext
from tests.budget import examples


def definition(text: str) -> SchemaDefinition:
    (statement,) = parse(text).statements
    assert isinstance(statement, ast.SingleQuery)
    (clause,) = statement.clauses
    assert isinstance(clause, SchemaDefinition), clause
    return clause


def emitted(text: str) -> str:
    return emit_query(CypherQuery.parse(text))


# Every form, as LLM apps and libraries send it (llama-index, langchain, graphrag), and its
# canonical text. The canonical text is itself a fixed point and parses to the same AST.
FORMS = [
    ("CREATE CONSTRAINT IF NOT EXISTS FOR (n:__Node__) REQUIRE n.id IS UNIQUE",
     "CREATE CONSTRAINT IF NOT EXISTS FOR (n:__Node__) REQUIRE n.id IS UNIQUE"),
    ("CREATE VECTOR INDEX entity IF NOT EXISTS FOR (m:__Entity__) ON m.embedding OPTIONS "
     "{indexConfig: {`vector.dimensions`:1536,`vector.similarity_function`:\"cosine\"}}",
     "CREATE VECTOR INDEX entity IF NOT EXISTS FOR (m:__Entity__) ON m.embedding OPTIONS "
     "{indexConfig: {`vector.dimensions`: 1536, `vector.similarity_function`: 'cosine'}}"),
    ("CREATE FULLTEXT INDEX keyword IF NOT EXISTS FOR (n:L1|L2) ON EACH [n.a, n.b]",
     "CREATE FULLTEXT INDEX keyword IF NOT EXISTS FOR (n:L1|L2) ON EACH [n.a, n.b]"),
    ("create index name if not exists for (n:L) on (n.p)",
     "create index name if not exists for (n:L) on (n.p)"),
    ("CREATE INDEX FOR (n:Person) ON (n.name, n.born)",
     "CREATE INDEX FOR (n:Person) ON (n.name, n.born)"),
    ("CREATE RANGE INDEX r FOR ()-[r:KNOWS]-() ON (r.since)",
     "CREATE RANGE INDEX r FOR ()-[r:KNOWS]-() ON (r.since)"),
    ("CREATE TEXT INDEX t FOR ()<-[r:R]-() ON (r.note) OPTIONS {indexProvider: 'text-2.0'}",
     "CREATE TEXT INDEX t FOR ()<-[r:R]-() ON (r.note) OPTIONS {indexProvider: 'text-2.0'}"),
    ("CREATE POINT INDEX p IF NOT EXISTS FOR (n:Place) ON (n.location)",
     "CREATE POINT INDEX p IF NOT EXISTS FOR (n:Place) ON (n.location)"),
    ("CREATE LOOKUP INDEX l FOR (n) ON EACH labels(n)",
     "CREATE LOOKUP INDEX l FOR (n) ON EACH labels(n)"),
    ("CREATE LOOKUP INDEX l FOR ()-[r]-() ON type(r)",
     "CREATE LOOKUP INDEX l FOR ()-[r]-() ON type(r)"),
    ("CREATE VECTOR INDEX v FOR (n:Doc) ON (n.emb) OPTIONS {dimension: 3, similarityFunction: "
     "'euclidean'}",
     "CREATE VECTOR INDEX v FOR (n:Doc) ON (n.emb) OPTIONS {dimension: 3, similarityFunction: "
     "'euclidean'}"),
    ("CREATE CONSTRAINT c FOR (n:P) REQUIRE (n.a, n.b) IS NODE KEY",
     "CREATE CONSTRAINT c FOR (n:P) REQUIRE (n.a, n.b) IS NODE KEY"),
    ("CREATE CONSTRAINT c FOR ()-[r:R]->() REQUIRE r.a IS RELATIONSHIP UNIQUE",
     "CREATE CONSTRAINT c FOR ()-[r:R]->() REQUIRE r.a IS RELATIONSHIP UNIQUE"),
    ("CREATE CONSTRAINT c FOR (n:P) REQUIRE n.a IS NOT NULL",
     "CREATE CONSTRAINT c FOR (n:P) REQUIRE n.a IS NOT NULL"),
    ("CREATE CONSTRAINT c FOR (n:P) REQUIRE n.a IS::INTEGER",
     "CREATE CONSTRAINT c FOR (n:P) REQUIRE n.a IS :: INTEGER"),
    ("CREATE CONSTRAINT c FOR (n:P) REQUIRE n.a IS :: LIST<INTEGER NOT NULL> OPTIONS {}",
     "CREATE CONSTRAINT c FOR (n:P) REQUIRE n.a IS :: LIST<INTEGER NOT NULL> OPTIONS {}"),
    ("CREATE CONSTRAINT c FOR (n:P) REQUIRE n.a IS TYPED INTEGER | FLOAT",
     "CREATE CONSTRAINT c FOR (n:P) REQUIRE n.a IS TYPED INTEGER|FLOAT"),
    ("CREATE CONSTRAINT ON (n:P) ASSERT n.a IS UNIQUE",
     "CREATE CONSTRAINT ON (n:P) ASSERT n.a IS UNIQUE"),
    ("CREATE INDEX ON :Person(name)", "CREATE INDEX ON :Person(name)"),
    ("DROP INDEX ON :Person(name, born)", "DROP INDEX ON :Person(name, born)"),
    ("DROP INDEX name IF EXISTS", "DROP INDEX name IF EXISTS"),
    ("DROP CONSTRAINT name IF EXISTS", "DROP CONSTRAINT name IF EXISTS"),
    ("DROP INDEX `odd name`", "DROP INDEX `odd name`"),
]  # fmt: skip


@pytest.mark.parametrize(("source", "expected"), FORMS)
def test_each_form_is_reprinted_from_its_tokens(source: str, expected: str) -> None:
    assert emitted(source) == expected
    assert emitted(expected) == expected
    assert structure(parse(source)) == structure(parse(expected))


def test_the_parts_are_in_the_ast() -> None:
    c = definition("CREATE CONSTRAINT c IF NOT EXISTS FOR (n:Chunk) REQUIRE (n.a, n.b) IS NODE KEY")
    assert (c.kind, c.name, c.if_exists, c.entity) == ("CREATE CONSTRAINT", "c", True, "node")
    assert (c.variable, c.labels, c.properties, c.rule) == ("n", ["Chunk"], ["a", "b"], "NODE KEY")
    v = definition(
        "CREATE VECTOR INDEX e IF NOT EXISTS FOR ()-[r:`SIMILAR TO`]-() ON r.embedding "
        "OPTIONS {indexConfig: {`vector.dimensions`: 3}}"
    )
    assert (v.kind, v.entity, v.labels, v.properties) == (
        "CREATE VECTOR INDEX", "relationship", ["SIMILAR TO"], ["embedding"],
    )  # fmt: skip
    assert isinstance(v.options, ast.MapLiteral)
    f = definition("CREATE FULLTEXT INDEX f FOR (n:A|B) ON EACH [n.x, n.y]")
    assert (f.labels, f.properties) == (["A", "B"], ["x", "y"])
    typed = definition("CREATE CONSTRAINT t FOR (n:P) REQUIRE n.a IS :: LIST<INTEGER NOT NULL>")
    assert typed.rule == ":: LIST<INTEGER NOT NULL>"
    legacy = definition("CREATE INDEX ON :Person(name)")
    assert (legacy.name, legacy.labels, legacy.properties) == (None, ["Person"], ["name"])
    drop = definition("DROP CONSTRAINT c IF EXISTS")
    assert (drop.kind, drop.name, drop.if_exists, drop.entity) == ("DROP CONSTRAINT", "c", True, "")


def test_what_the_plugins_read_still_holds() -> None:
    """query type `s`, compat idempotence from the parsed IF NOT EXISTS (not from the text)."""
    for text in [f[0] for f in FORMS]:
        assert query_type(CypherQuery.parse(text)) == "s", text
    yes = CypherQuery.parse("CREATE INDEX i IF NOT EXISTS FOR (n:P) ON (n.x)")
    no = CypherQuery.parse("CREATE INDEX i FOR (n:P) ON (n.x) // IF NOT EXISTS")
    drop = CypherQuery.parse("DROP INDEX i IF EXISTS")
    assert [idempotent(q, next(q.find(ast.SchemaCommand))) for q in (yes, no, drop)] == [
        True, False, False,
    ]  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "CREATE INDEX i FOR (n:P) ON (n.x) RETURN 1",
        "CREATE INDEX i FOR (n:P) ON n.x.y",
        "CREATE CONSTRAINT c FOR (n:P) REQUIRE n.x IS SOMETHING",
        "CREATE INDEX i FOR (n:P&Q) ON (n.x)",
        "CREATE INDEX i FOR (n:P) ON (n.x) OPTIONS {a: 1} MATCH (m) DETACH DELETE m",
        "DROP INDEX",
    ],
)
def test_anything_else_is_a_syntax_error(text: str) -> None:
    with pytest.raises(CypherSyntaxError):
        parse(text)


def test_comments_and_odd_spacing_are_reprinted_canonically() -> None:
    source = (
        "CREATE /* kind */ VECTOR\tINDEX `entity` // the name\n"
        "  IF  NOT EXISTS FOR ( m : __Entity__ )\n ON m . embedding\n"
        "  OPTIONS { indexConfig : { `vector.dimensions` : 0x10 } } // done"
    )
    assert emitted(source) == (
        "CREATE VECTOR INDEX `entity` IF NOT EXISTS FOR (m:__Entity__) ON m.embedding "
        "OPTIONS {indexConfig: {`vector.dimensions`: 16}}"
    )


def _guard(**g: object) -> Guard:
    settings_ = parse_config({"guard": {"read_only": False, **g}}).guard
    pm = build_plugin_manager(builtins=["query_guard.rules.read_only"], entry_points=False)
    return Guard(pm, GuardContext(settings=settings_), default_languages())


@pytest.mark.parametrize(
    ("source", "forward"),
    [
        # a carriage return ends a // comment for Neo4j, not for the guard: the hidden
        # statement is comment text here and is not printed (the guard judged one index)
        ("CREATE INDEX i FOR (n:P) ON (n.x) //\rDROP INDEX other",
         "CREATE INDEX i FOR (n:P) ON (n.x)"),
        # a quote inside a backtick name or an OPTIONS string stays inside it
        ("CREATE INDEX i FOR (n:`P) ON (n.x) // `) ON (n.y)",
         "CREATE INDEX i FOR (n:`P) ON (n.x) // `) ON (n.y)"),
        ("CREATE TEXT INDEX t FOR (n:P) ON (n.x) OPTIONS {indexProvider: \"x'} DROP INDEX y //\"}",
         "CREATE TEXT INDEX t FOR (n:P) ON (n.x) OPTIONS {indexProvider: 'x\\'} DROP INDEX y //'}"),
        # a block comment hiding a clause is dropped, the clause with it
        ("DROP INDEX i /* IF EXISTS */", "DROP INDEX i"),
    ],
)  # fmt: skip
def test_a_trick_inside_a_schema_command_cannot_change_what_runs(source: str, forward: str) -> None:
    verdict = _guard().check(source)
    assert verdict.action == "allow", verdict.findings
    assert verdict.forward == forward
    assert structure(parse(verdict.forward)) == structure(parse(source))


def test_an_administration_command_is_never_printed() -> None:
    for text in ["CREATE USER eve SET PASSWORD 'pw'", "GRANT ROLE admin TO eve", "DRYRUN"]:
        with pytest.raises(Unforwardable):
            emitted(text)


# ---------------------------------------------------------------- generated


# any name a backtick can carry (a line break or control character in one is refused:
# tests/unit/test_ambiguous_text.py)
_NAMES = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
    st.text(
        st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")),
        min_size=1,
        max_size=8,
    ),
)
_GAPS = st.sampled_from([" ", "  ", "\n", "\t", " /* c */ ", " // c\n"])
_KINDS = st.sampled_from(["", "RANGE ", "TEXT ", "POINT ", "VECTOR "])


def _name(value: str) -> str:
    return canonical_name(value)


@st.composite
def index_commands(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    """(source with random spacing and comments, its canonical text, its properties)."""
    kind = draw(_KINDS)
    name, label = draw(_NAMES), draw(_NAMES)
    props = draw(st.lists(_NAMES, min_size=1, max_size=3))
    exists = draw(st.booleans())
    on = ", ".join(f"n.{_name(p)}" for p in props)
    pieces = [
        "CREATE", *kind.split(), "INDEX", _name(name), *(["IF NOT EXISTS"] if exists else []),
        "FOR", f"(n:{_name(label)})", "ON", f"({on})",
    ]  # fmt: skip
    canonical = " ".join(pieces)
    source = pieces[0]
    for piece in pieces[1:]:
        source += draw(_GAPS) + piece
    return source, canonical, props


@settings(max_examples=examples(150))
@given(index_commands())
def test_generated_index_commands_round_trip(case: tuple[str, str, list[str]]) -> None:
    source, canonical, props = case
    assert emitted(source) == canonical
    assert definition(source).properties == props
    assert structure(parse(source)) == structure(parse(canonical))


def test_options_are_judged_like_any_expression() -> None:
    from query_guard.build import build_guard

    guard = build_guard(parse_config({"guard": {"read_only": False}}))
    sneaky = guard.check(
        "CREATE VECTOR INDEX v FOR (n:D) ON n.e OPTIONS {indexConfig: "
        "{x: apoc.cypher.runFirstColumnSingle('MATCH (n) DETACH DELETE n', {})}}"
    )
    assert sneaky.action == "block" and sneaky.codes == ["SEC.PROCEDURE"] and not sneaky.forward
    llama = "CREATE CONSTRAINT IF NOT EXISTS FOR (n:__Node__) REQUIRE n.id IS UNIQUE"
    plain = guard.check(llama)
    assert plain.action == "allow" and plain.codes == [] and plain.forward == llama
