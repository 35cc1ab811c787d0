"""Gremlin parser: AST shape and spans, literals, errors, script detection, robustness."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from query_guard.build import build_guard
from query_guard.gremlin.ast import (
    CardinalityValue,
    DateTimeLit,
    Enum,
    ListLit,
    Literal,
    MapLit,
    Node,
    Predicate,
    SetLit,
    Step,
    Strategy,
    String,
    Traversal,
    UUIDLit,
    Variable,
)
from query_guard.gremlin.edits import (
    append_step,
    rename_step,
    replace_node,
    traversals,
)
from query_guard.gremlin.errors import GremlinError, GremlinScriptError, GremlinSyntaxError
from query_guard.gremlin.language import GremlinQuery, gremlin_language
from query_guard.gremlin.parser import parse_traversal
from query_guard.gremlin.printer import quote, to_text
from query_guard.guard.unsafe_chars import UNSAFE
from query_guard.model import apply_edits
from tests.budget import examples


def arg(text: str, n: int = 0) -> Node:
    """The n-th argument of the first step after the spawn of `g.V().x(...)`."""
    return parse_traversal(f"g.V().is({text})").steps[0].args[n]


# ---------------------------------------------------------------- structure


def test_root_traversal_structure() -> None:
    t = parse_traversal("g.withSack(1.0d).withSideEffect('a', []).V(1).out('knows').toList()")
    assert [s.name for s in t.source] == ["withSack", "withSideEffect"]
    assert t.spawn is not None and t.spawn.name == "V"
    assert [s.name for s in t.steps] == ["out"]
    assert t.terminal is not None and t.terminal.name == "toList"
    assert not t.anonymous
    assert [s.name for s in t.all_steps] == ["V", "out"]


def test_spans_cover_source_text() -> None:
    text = "g.V().has('name', P.within('a', \"b\")).out(xx1).limit(10)"
    t = parse_traversal(text)
    assert text[t.span[0]:t.span[1]] == text
    has = t.steps[0]
    assert text[has.span[0]:has.span[1]] == "has('name', P.within('a', \"b\"))"
    assert text[has.name_span[0]:has.name_span[1]] == "has"
    pred = has.args[1]
    assert text[pred.span[0]:pred.span[1]] == "P.within('a', \"b\")"
    assert [text[a.span[0]:a.span[1]] for a in pred.args] == ["'a'", '"b"']  # type: ignore[attr-defined]
    var = t.steps[1].args[0]
    assert isinstance(var, Variable) and text[var.span[0]:var.span[1]] == "xx1"


def test_every_node_has_a_span_inside_the_text() -> None:
    text = ("g.withStrategies(SubgraphStrategy(vertices: __.hasLabel('p'))).V()"
            ".group().by(T.label).by(values('x').fold()).mergeV([(T.id): 1, a: {1, 2}])")
    t = parse_traversal(text)
    for node in t.walk():
        start, end = node.span
        assert 0 <= start < end <= len(text), node


def test_anonymous_traversals_with_and_without_prefix() -> None:
    t = parse_traversal("g.V().where(__.out('a').count()).local(out().limit(1))")
    a, b = t.steps[0].args[0], t.steps[1].args[0]
    assert isinstance(a, Traversal) and a.anonymous
    assert [s.name for s in a.steps] == ["out", "count"]
    assert isinstance(b, Traversal) and b.anonymous
    assert [s.name for s in b.steps] == ["out", "limit"]
    assert to_text(b) == "__.out().limit(1)"


def test_allow_anonymous_at_top_level() -> None:
    with pytest.raises(GremlinSyntaxError):
        parse_traversal("__.out()")
    t = parse_traversal("__.out()", allow_anonymous=True)
    assert t.anonymous and t.spawn is None


def test_walk_and_find_all() -> None:
    t = parse_traversal("g.V().has('a', gt(1)).where(__.has('b', P.lt(2).or(eq(3))))")
    names = sorted(p.name for p in t.find_all(Predicate))
    assert names == ["eq", "gt", "lt"]
    assert [s.name for s in t.find_all(Step)] == ["V", "has", "where", "has"]


def test_comments_and_newlines_are_ignored() -> None:
    t = parse_traversal("g.V(). // all vertices\n  out('a').\n  count()")
    assert [s.name for s in t.steps] == ["out", "count"]


def test_trailing_semicolon_is_one_statement() -> None:
    assert parse_traversal("g.V().count();").steps[0].name == "count"


# ---------------------------------------------------------------- literals

@pytest.mark.parametrize(("text", "gtype", "value"), [
    ("1", "int", 1), ("-7", "int", -7), ("1i", "int", 1), ("1L", "long", 1), ("2l", "long", 2),
    ("3b", "byte", 3), ("4s", "short", 4), ("5n", "biginteger", 5), ("5N", "biginteger", 5),
    ("3000000000", "long", 3000000000), ("99999999999999999999", "biginteger", 10**20 - 1),
    ("0x1F", "int", 31), ("010", "int", 8), ("1_000", "int", 1000),
    ("1.5", "double", 1.5), ("1.0d", "double", 1.0), ("2f", "float", 2.0),
    ("1e3", "double", 1000.0),
    ("-2.5D", "double", -2.5), ("1.25m", "bigdecimal", Decimal("1.25")),
    ("true", "boolean", True), ("false", "boolean", False), ("null", "null", None),
])
def test_literal_types(text: str, gtype: str, value: object) -> None:
    node = arg(text)
    assert isinstance(node, Literal)
    assert (node.gtype, node.value) == (gtype, value)


def test_nan_and_infinity() -> None:
    nan, inf, neg = arg("NaN"), arg("+Infinity"), arg("-Infinity")
    assert isinstance(nan, Literal) and math.isnan(nan.value)  # type: ignore[arg-type]
    assert isinstance(inf, Literal) and inf.value == math.inf
    assert isinstance(neg, Literal) and neg.value == -math.inf


def test_out_of_range_suffix_is_a_syntax_error() -> None:
    with pytest.raises(GremlinSyntaxError, match="out of range for byte"):
        parse_traversal("g.inject(300b)")


@pytest.mark.parametrize(("text", "value"), [
    ("'a'", "a"), ('"b"', "b"), ("''", ""), (r"'it\'s'", "it's"), (r'"x\ny"', "x\ny"),
    (r"'\u00e9'", "é"), (r"'tab\there'", "tab\there"), (r"'\\'", "\\"), ("'a;b'", "a;b"),
])
def test_strings(text: str, value: str) -> None:
    node = arg(text)
    assert isinstance(node, String) and node.value == value


def test_collections() -> None:
    lst, st_, mp = arg("[1, 'a', xx1]"), arg("{1, 2}"), arg("[name: 'm', (T.id): 1, 'k': [:]]")
    assert isinstance(lst, ListLit) and len(lst.items) == 3
    assert isinstance(lst.items[2], Variable)
    assert isinstance(st_, SetLit) and [i.value for i in st_.items] == [1, 2]  # type: ignore[attr-defined]
    assert isinstance(mp, MapLit)
    keys = [e.key for e in mp.entries]
    assert isinstance(keys[0], String) and keys[0].naked and keys[0].value == "name"
    assert isinstance(keys[1], Enum) and (keys[1].kind, keys[1].value) == ("T", "id")
    assert isinstance(mp.entries[2].value, MapLit) and not mp.entries[2].value.entries
    assert isinstance(arg("[]"), ListLit) and isinstance(arg("[:]"), MapLit)


def test_datetime_uuid_cardinality() -> None:
    d = arg("datetime('2023-08-08T00:00:00Z')")
    assert isinstance(d, DateTimeLit) and d.value == dt.datetime(2023, 8, 8, tzinfo=dt.UTC)
    assert isinstance(arg("datetime('2023-08-08')"), DateTimeLit)
    assert isinstance(arg("datetime()"), DateTimeLit) and arg("datetime()").value is None  # type: ignore[attr-defined]
    u = arg("UUID('f47af10b-58cc-4372-a567-0f02b2f3d479')")
    assert isinstance(u, UUIDLit) and u.value == uuid.UUID("f47af10b-58cc-4372-a567-0f02b2f3d479")
    c = arg("Cardinality.list(3)")
    assert isinstance(c, CardinalityValue) and c.cardinality == "list"
    with pytest.raises(GremlinSyntaxError, match="bad datetime"):
        parse_traversal("g.inject(datetime('yesterday'))")


@pytest.mark.parametrize(("text", "kind", "value", "long_form"), [
    ("T.id", "T", "id", True), ("id", "T", "id", False), ("label", "T", "label", False),
    ("Order.desc", "Order", "desc", True), ("desc", "Order", "desc", False),
    ("Scope.local", "Scope", "local", True), ("local", "Scope", "local", False),
    ("Column.keys", "Column", "keys", True), ("values", "Column", "values", False),
    ("Direction.OUT", "Direction", "OUT", True), ("IN", "Direction", "IN", False),
    ("Direction.from", "Direction", "OUT", True), ("to", "Direction", "IN", False),
    ("Pop.all", "Pop", "all", True), ("last", "Pop", "last", False),
    ("Cardinality.single", "Cardinality", "single", True), ("list", "Cardinality", "list", False),
    ("Operator.sum", "Operator", "sum", True), ("addAll", "Operator", "addAll", False),
    ("Pick.any", "Pick", "any", True), ("none", "Pick", "none", False),
    ("Merge.onCreate", "Merge", "onCreate", True), ("onMatch", "Merge", "onMatch", False),
    ("DT.day", "DT", "day", True), ("hour", "DT", "hour", False),
    ("GType.INT", "GType", "INT", True), ("Barrier.normSack", "Barrier", "normSack", True),
    ("WithOptions.tokens", "WithOptions", "tokens", True), ("IO.reader", "IO", "reader", True),
])
def test_enums(text: str, kind: str, value: str, long_form: bool) -> None:
    node = arg(text)
    assert isinstance(node, Enum)
    assert (node.kind, node.value, node.long_form) == (kind, value, long_form)


def test_gtype_short_forms_only_in_type_context() -> None:
    t = parse_traversal("g.V().values('a').asNumber(int).is(typeOf(string)).has('x', int)")
    assert isinstance(t.steps[1].args[0], Enum)
    pred = t.steps[2].args[0]
    assert isinstance(pred, Predicate) and isinstance(pred.args[0], Enum)
    assert isinstance(t.steps[3].args[1], Variable)  # a parameter that happens to be named int


def test_variables() -> None:
    t = parse_traversal("g.V(vid1).has('age', xx1).out(xx2)")
    assert [v.name for v in t.find_all(Variable)] == ["vid1", "xx1", "xx2"]


# ---------------------------------------------------------------- predicates and strategies


def test_predicate_forms() -> None:
    p = arg("P.gt(1).and(lt(5)).or(P.eq(7)).negate()")
    assert isinstance(p, Predicate) and (p.kind, p.name, p.long_form) == ("P", "gt", True)
    assert [link.op for link in p.chain] == ["and", "or", "negate"]
    assert p.chain[0].other is not None and p.chain[0].other.name == "lt"
    w = arg("within('a', 'b')")
    assert isinstance(w, Predicate) and not w.long_form and len(w.args) == 2
    tp = arg("TextP.containing('x')")
    assert isinstance(tp, Predicate) and tp.kind == "TextP"
    assert isinstance(arg("startingWith('x')"), Predicate)
    n = arg("P.not(P.within(1, 2))")
    assert isinstance(n, Predicate) and n.name == "not" and isinstance(n.args[0], Predicate)


def test_not_step_versus_not_predicate() -> None:
    t = parse_traversal("g.V().where(not(within('a'))).not(out('x')).is(not(eq(1)))")
    assert isinstance(t.steps[0].args[0], Predicate)
    assert t.steps[1].name == "not" and isinstance(t.steps[1].args[0], Traversal)
    assert isinstance(t.steps[2].args[0], Predicate)


def test_strategies() -> None:
    t = parse_traversal("g.withStrategies(ReadOnlyStrategy, SubgraphStrategy(vertices: "
                        "__.hasLabel('person'), checkAdjacentVertices: false), "
                        "new SeedStrategy(seed: 99)).withoutStrategies(CountStrategy).V()")
    ro, sg, seed = t.source[0].args
    assert isinstance(ro, Strategy) and ro.name == "ReadOnlyStrategy" and not ro.config
    assert isinstance(sg, Strategy) and [o.key for o in sg.config] == ["vertices",
                                                                       "checkAdjacentVertices"]
    assert isinstance(sg.config[0].value, Traversal)
    assert isinstance(seed, Strategy) and seed.name == "SeedStrategy"
    assert isinstance(t.source[1].args[0], Strategy)


def test_source_with_steps() -> None:
    t = parse_traversal("g.with('a').with('b', 1).withBulk(false).withPath().V()")
    assert [s.name for s in t.source] == ["with", "with", "withBulk", "withPath"]


@pytest.mark.parametrize("spawn", [
    "V()", "E()", "addV('p')", "addE('k')", "inject(1)", "mergeV([a: 1])", "mergeE([:])",
    "io('f.json')", "call('x')", "union(__.V(), __.E())",
])
def test_spawn_steps(spawn: str) -> None:
    assert parse_traversal(f"g.{spawn}").spawn is not None


@pytest.mark.parametrize("terminal", [
    "next()", "next(2)", "toList()", "toSet()", "iterate()", "hasNext()", "tryNext()", "explain()",
])
def test_terminal_steps(terminal: str) -> None:
    t = parse_traversal(f"g.V().count().{terminal}")
    assert t.terminal is not None and t.terminal.name == terminal.split("(")[0]


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize(("text", "line", "column", "fragment"), [
    ("g.V().has('a',)", 1, 15, "unexpected ')'"),
    ("g.V().outt('x')", 1, 7, "unknown step 'outt'"),
    ("g", 1, 2, "spawn step"),
    ("g.out()", 1, 3, "cannot start a traversal"),
    ("g.V(\n).has('a'", 2, 10, "unexpected end"),
    ("g.V().has(P.gtt(1))", 1, 13, "not a P predicate"),
    ("g.V().by(T.idd)", 1, 12, "not a member of T"),
    ("g.V.out()", 1, 4, "needs parentheses"),
    ("g.V().has('a', P.gt())", 1, 20, "gt() takes 1 argument"),
    ("g.V().has('a', between(1))", 1, 23, "between() takes 2 argument"),
    ("g.V().property(Cardinality.lots(1))", 1, 28, "Cardinality.lots() is not Gremlin"),
    ("", 1, 1, "unexpected end"),
    ("g.V().values('a)", 1, 14, "unexpected"),
])
def test_syntax_errors(text: str, line: int, column: int, fragment: str) -> None:
    with pytest.raises(GremlinSyntaxError) as info:
        parse_traversal(text)
    err = info.value
    assert fragment in err.message
    assert (err.line, err.column) == (line, column)


def test_syntax_error_lists_expected_tokens() -> None:
    with pytest.raises(GremlinSyntaxError) as info:
        parse_traversal("g.V().has('a' 'b')")
    assert "')'" in info.value.expected and "','" in info.value.expected


@pytest.mark.parametrize(("text", "kind"), [
    ("g.V().map{ it.get().value('name') }", "closure"),
    ("g.V().filter({ it -> it.get().label() == 'person' })", "closure"),
    ("g.V().map(it -> it)", "closure"),
    ("g.V().sideEffect{ println it }", "closure"),
    ("g.V().map({ x = 1 })", "closure"),
    ("g.V().filter { true }", "closure"),
    ("g.V(); g.E()", "multi_statement"),
    ("g.V().count()\ng.E().count()", "multi_statement"),
    ("g.V().drop().iterate(); g.V().count()", "multi_statement"),
    ("def x = g.V().next()", "groovy"),
    ("x = g.V()", "groovy"),
    ("g.V().has('a', 1) == 2", "groovy"),
    ("import java.io.File", "groovy"),
    ("new File('/etc/passwd').text", "groovy"),
    ("g.V().has('name', new File('x'))", "groovy"),
    ("Runtime.getRuntime().exec('rm -rf /')", "class_reference"),
    ("System.exit(0)", "class_reference"),
    ("java.lang.Runtime.getRuntime()", "class_reference"),
    ("g.V().has('a', Math.random())", "class_reference"),
    ("g.V().has('name', System.getenv('HOME'))", "class_reference"),
    ("'rm -rf /'.execute()", "method_call"),
    ("g.V().getClass().forName('java.lang.Runtime')", "method_call"),
    ("g.V().has('x', ['a'].each())", "method_call"),
    ("g.V().next().property('a', 1).getClass()", "method_call"),
    ("g.V().out().name", "method_call"),
    ("g.V().has('a', xx1.execute())", "class_reference"),
    ("g.V().has('a', T.id.getClass())", "method_call"),
    ("println('hi')", "groovy"),
    ("g.V().count().next().intValue()", "method_call"),
])
def test_script_content_is_reported(text: str, kind: str) -> None:
    with pytest.raises(GremlinScriptError) as info:
        parse_traversal(text)
    err = info.value
    assert err.kind == kind, err
    start, end = err.span
    assert 0 <= start < end <= len(text)


def test_semicolon_inside_string_is_not_a_script() -> None:
    assert parse_traversal("g.V().has('a', 'x;y = 1 { it -> }')").steps[0].name == "has"


def test_script_error_is_not_a_syntax_error() -> None:
    assert not issubclass(GremlinScriptError, GremlinSyntaxError)
    assert issubclass(GremlinScriptError, GremlinError)


# ---------------------------------------------------------------- robustness

_ALPHABET = st.sampled_from([
    "g", ".", "V", "(", ")", "out", "'a'", "\"b\"", ",", "1", "1L", "[", "]", "{", "}", ":",
    "__", "P", "gt", "T", "id", "xx1", " ", "\n", ";", "=", "->", "new", "Strategy", "//",
    "has", "within", "-", "1.5", "NaN", "\\", "it", "def", "Infinity", "$", "é",
])


@settings(max_examples=examples(400))
@given(st.text(max_size=200))
def test_never_crashes_on_arbitrary_text(text: str) -> None:
    try:
        parse_traversal(text)
    except GremlinError as exc:
        assert "internal parser error" not in str(exc)


@settings(max_examples=examples(600))
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_never_crashes_on_token_soup(text: str) -> None:
    try:
        t = parse_traversal("g.V()." + text)
    except GremlinError as exc:
        assert "internal parser error" not in str(exc)
        return
    canonical = to_text(t)
    assert to_text(parse_traversal(canonical)) == canonical


@settings(max_examples=examples(300))
@given(st.text(max_size=12))
def test_any_label_prints_escaped_and_reads_back(label: str) -> None:
    """Labels and keys are strings in Gremlin: a line break or control character in one is
    escaped (`\\u2028`), never sent raw, and reads back as itself."""
    text = to_text(parse_traversal(f"g.V().hasLabel({quote(label)}).values({quote(label)})"))
    assert not UNSAFE.search(text), text
    args = [s.args[0] for s in parse_traversal(text).steps if s.name in ("hasLabel", "values")]
    assert [a.value for a in args] == [label, label]  # type: ignore[attr-defined]


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    deep = "g.V()" + ".where(__.out()" * 500 + ")" * 500
    with pytest.raises(GremlinSyntaxError, match="nesting"):
        parse_traversal(deep)
    with pytest.raises(GremlinSyntaxError):
        parse_traversal("g.inject(" + "[" * 5000)


def test_moderate_nesting_parses() -> None:
    text = "g.V()" + ".where(__.out()" * 30 + ")" * 30
    t = parse_traversal(text)
    assert sum(1 for _ in t.find_all(Traversal)) == 31


def test_non_string_input() -> None:
    with pytest.raises(GremlinSyntaxError):
        parse_traversal(None)  # type: ignore[arg-type]


# ---------------------------------------------------------------- span edits for rules


def test_edits_keep_the_rest_of_the_text() -> None:
    text = "g.V().hasLabel('case') // anchor\n  .outE('similarReason').inV().toList()"
    t = parse_traversal(text)
    out_e, in_v = t.steps[1], t.steps[2]
    edits = [rename_step(out_e, "bothE"), rename_step(in_v, "otherV"),
             append_step(t, ".limit(100)")]
    fixed = apply_edits(text, edits)
    assert fixed == ("g.V().hasLabel('case') // anchor\n"
                     "  .bothE('similarReason').otherV().limit(100).toList()")
    assert parse_traversal(fixed).steps[-1].name == "limit"


def test_replace_and_nested_traversals() -> None:
    text = "g.V().has('case', 'id', 'c1').where(__.out('a').count()).values('x')"
    t = parse_traversal(text)
    has = t.steps[0]
    edit = replace_node(has, Step((0, 0), "hasId", (0, 0), [String((0, 0), "c1")]))
    assert apply_edits(text, [edit]).startswith("g.V().hasId('c1').where(")
    nested = list(traversals(t))
    assert len(nested) == 2 and nested[1].anonymous


# ---------------------------------------------------------------- pipeline adapter


@pytest.mark.parametrize(("text", "code"), [
    ("g.V().outt()", "SYN.PARSE"),
    ("g.V().map{ it.get() }", "SEC.SCRIPT"),
    ("Runtime.getRuntime().exec('rm')", "SEC.SCRIPT"),
    ("g.V(); g.E()", "SEC.MULTI_STATEMENT"),
])
def test_language_describes_errors_as_findings(text: str, code: str) -> None:
    lang = gremlin_language()
    with pytest.raises(lang.syntax_errors) as info:
        lang.parse(text)
    (finding,) = lang.describe_error(info.value, text)
    assert finding.code == code and finding.severity == "error"
    assert 0 <= finding.span[0] <= finding.span[1] <= len(text)


def test_gremlin_query_helpers() -> None:
    q = GremlinQuery.parse("g.V().where(__.out('a')).count()")
    assert [s.name for s in q.steps()] == ["V", "where", "out", "count"]
    assert len(list(q.traversals())) == 2
    assert q.source(q.traversal.steps[0]) == "where(__.out('a'))"


# ---------------------------------------------------------------- Groovy strings (issue 8)


@pytest.mark.parametrize(
    "text",
    [
        'g.V().has("name", "${Runtime.getRuntime().exec(\'id\')}")',
        'g.V().has("name", "$x")',
        'g.V().has("name", "a ${1 + 1} b")',
        'g.V().has("name", "\\u0024{x}")',  # Groovy decodes \u escapes before the string
        'g.V().has("name", "\\u0024x")',
        'g.V().values("\\\\${x}")',  # an escaped backslash does not escape the $
    ],
)
def test_gstring_interpolation_is_script(text: str) -> None:
    with pytest.raises(GremlinScriptError) as info:
        parse_traversal(text)
    assert "interpolation" in info.value.reason
    verdict = build_guard().check(text, "gremlin")
    assert verdict.blocked and "SEC.SCRIPT" in verdict.codes


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("g.V().has('name', '${x}')", "${x}"),  # single quotes never interpolate
        ('g.V().has("name", "cost $5")', "cost $5"),
        ('g.V().has("name", "it\\u0027s")', "it's"),
        ("g.V().has('name', 'say \\u0022hi\\u0022')", 'say "hi"'),  # not a quote in '…'
    ],
)
def test_plain_strings_decode_and_print_canonically(text: str, value: str) -> None:
    tree = parse_traversal(text)
    [string] = [a for a in tree.find_all(String) if a.value == value]
    assert string.value == value
    printed = to_text(tree)
    assert "\\u" not in printed and '"' not in printed.replace(value, "")
    assert value in [a.value for a in parse_traversal(printed).find_all(String)]
    verdict = build_guard().check(text, "gremlin")
    assert not verdict.blocked and verdict.forward.startswith(printed)
