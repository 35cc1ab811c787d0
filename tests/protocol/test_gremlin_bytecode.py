"""Gremlin AST <-> gremlinpython Bytecode: fluent-API equivalence, reverse translation, lambdas.

Equivalence is checked on a type-exact structural view (`norm`), because gremlinpython's own
`Bytecode ==` treats 1 and 1L alike and compares strategies by class only. Traversals are written
twice -- as Gremlin text and with the fluent API -- by a table and by a hypothesis generator.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from aenum import Enum as AEnum
from gremlin_python import statics
from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.strategies import (
    LambdaRestrictionStrategy,
    OptionsStrategy,
    PartitionStrategy,
    ReadOnlyStrategy,
    SeedStrategy,
    SubgraphStrategy,
)
from gremlin_python.process.traversal import (
    DT,
    IO,
    Barrier,
    Binding,
    Bindings,
    Bytecode,
    Cardinality,
    CardinalityValue,
    Column,
    Direction,
    GType,
    Merge,
    Operator,
    Order,
    P,
    Pick,
    Pop,
    Scope,
    T,
    TextP,
    Traversal,
    TraversalStrategies,
    TraversalStrategy,
    WithOptions,
)
from gremlin_python.structure.graph import Graph
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from query_guard.gremlin.bytecode import Float32, from_bytecode, to_bytecode
from query_guard.gremlin.errors import BytecodeError, GremlinScriptError
from query_guard.gremlin.parser import parse_traversal
from query_guard.gremlin.printer import to_text
from tests.budget import examples

# ---------------------------------------------------------------- helpers

def source() -> GraphTraversalSource:
    """A fluent `g` with no connection: only bytecode is built."""
    return GraphTraversalSource(Graph(), TraversalStrategies())


def norm(x: Any) -> Any:
    """A comparable, type-exact view of bytecode (gremlinpython's own == ignores int/long and
    strategy configuration)."""
    if isinstance(x, Traversal):
        x = x.bytecode
    if isinstance(x, Bytecode):
        return ("BC", tuple(map(norm, x.source_instructions)),
                tuple(map(norm, x.step_instructions)))
    if isinstance(x, type):
        return ("class", x.__name__)
    if isinstance(x, TraversalStrategy):
        config = tuple(sorted((k, norm(v)) for k, v in x.configuration.items()))
        return ("strategy", type(x).__name__, x.strategy_name, x.fqcn, config)
    if isinstance(x, P):
        return (type(x).__name__, x.operator, norm(x.value), norm(x.other))
    if isinstance(x, Binding):
        return ("binding", x.key, norm(x.value))
    if isinstance(x, AEnum):
        return ("enum", type(x).__name__, x.name)
    if isinstance(x, (list, tuple)):
        return ("list", tuple(map(norm, x)))
    if isinstance(x, (set, frozenset)):
        return ("set", tuple(sorted(map(repr, map(norm, x)))))
    if isinstance(x, dict):
        return ("dict", tuple((norm(k), norm(v)) for k, v in x.items()))
    if isinstance(x, float) and math.isnan(x):
        return (type(x).__name__, "nan")
    return (type(x).__name__, x)


def quote(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


Pair = tuple[str, Any]  # (Gremlin text, gremlinpython value)
Builder = Callable[[Any], Any]  # applies one step to a fluent traversal

_names = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=6)
strings: st.SearchStrategy[Pair] = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=8
).map(lambda s: (quote(s), s))
ints: st.SearchStrategy[Pair] = st.integers(-(2**31), 2**31 - 1).map(lambda i: (str(i), i))
longs: st.SearchStrategy[Pair] = st.integers(-(2**63), 2**63 - 1).map(
    lambda i: (f"{i}L", statics.long(i)))
doubles: st.SearchStrategy[Pair] = st.floats(allow_nan=False, allow_infinity=False).map(
    lambda f: (repr(f) + ("" if ("." in repr(f) or "e" in repr(f)) else ".0"), f))
bools: st.SearchStrategy[Pair] = st.booleans().map(lambda b: (str(b).lower(), b))
variables: st.SearchStrategy[Pair] = st.sampled_from(["xx1", "xx2", "vid1"]).map(
    lambda n: (n, Bindings.of(n, None)))
enums: st.SearchStrategy[Pair] = st.sampled_from([
    ("T.id", T.id), ("T.label", T.label), ("Order.desc", Order.desc), ("asc", Order.asc),
    ("Scope.local", Scope.local), ("Column.keys", Column.keys), ("values", Column.values),
    ("Pop.all", Pop.all_), ("last", Pop.last), ("Cardinality.list", Cardinality.list_),
])
scalars = st.one_of(strings, ints, longs, doubles, bools, variables)


def _lists(items: st.SearchStrategy[Pair]) -> st.SearchStrategy[Pair]:
    return st.lists(items, max_size=3).map(
        lambda xs: ("[" + ", ".join(t for t, _ in xs) + "]", [v for _, v in xs]))


def _maps(items: st.SearchStrategy[Pair]) -> st.SearchStrategy[Pair]:
    return st.dictionaries(_names, items, max_size=3).map(
        lambda d: ("[" + ", ".join(f"{quote(k)}: {t}" for k, (t, _) in d.items()) + "]"
                   if d else "[:]", {k: v for k, (_, v) in d.items()}))


values = st.one_of(scalars, enums, _lists(scalars), _maps(scalars))


@st.composite
def predicates(draw: st.DrawFn) -> Pair:
    kind = draw(st.sampled_from(["cmp", "range", "within", "text", "chain", "not"]))
    if kind == "cmp":
        op = draw(st.sampled_from(["eq", "neq", "lt", "lte", "gt", "gte"]))
        text, v = draw(st.one_of(ints, doubles, strings, variables))
        long_form = draw(st.booleans())
        return (f"{'P.' if long_form else ''}{op}({text})", getattr(P, op)(v))
    if kind == "range":
        op = draw(st.sampled_from(["between", "inside", "outside"]))
        (a, va), (b, vb) = draw(ints), draw(ints)
        return (f"P.{op}({a}, {b})", getattr(P, op)(va, vb))
    if kind == "within":
        op = draw(st.sampled_from(["within", "without"]))
        xs = draw(st.lists(st.one_of(strings, ints), max_size=3))
        return (f"{op}({', '.join(t for t, _ in xs)})", getattr(P, op)(*[v for _, v in xs]))
    if kind == "text":
        op = draw(st.sampled_from(["containing", "starting_with", "ending_with", "regex",
                                   "not_containing"]))
        camel = op.split("_")[0] + "".join(p.title() for p in op.split("_")[1:])
        text, v = draw(strings)
        return (f"TextP.{camel}({text})", getattr(TextP, op)(v))
    if kind == "not":
        text, p = draw(predicates())
        return (f"P.not({text})", P.not_(p))
    (ta, pa), (tb, pb) = draw(predicates()), draw(predicates())
    op = draw(st.sampled_from(["and", "or"]))
    return (f"{ta}.{op}({tb})", getattr(pa, op + "_")(pb))


def _step(name: str, method: str, args: list[Pair]) -> tuple[str, Builder]:
    text = f"{name}({', '.join(t for t, _ in args)})"
    pyargs = [v for _, v in args]
    return text, lambda trav: getattr(trav, method)(*pyargs)


@st.composite
def steps(draw: st.DrawFn, depth: int = 0) -> tuple[str, Builder]:
    leaf = [
        st.tuples(st.sampled_from([("out", "out"), ("in", "in_"), ("both", "both"),
                                   ("outE", "out_e"), ("values", "values"),
                                   ("hasLabel", "has_label")]),
                  st.lists(strings, max_size=2)).map(lambda a: _step(a[0][0], a[0][1], a[1])),
        st.sampled_from([("count", "count"), ("fold", "fold"), ("unfold", "unfold"),
                         ("dedup", "dedup"), ("path", "path"), ("id", "id_"),
                         ("label", "label"), ("otherV", "other_v"), ("simplePath", "simple_path"),
                         ("elementMap", "element_map"), ("sum", "sum_"), ("max", "max_"),
                         ("order", "order"), ("identity", "identity")]).map(
            lambda a: _step(a[0], a[1], [])),
        st.tuples(strings, st.one_of(values, predicates())).map(
            lambda a: _step("has", "has", [a[0], a[1]])),
        predicates().map(lambda p: _step("is", "is_", [p])),
        st.one_of(ints, longs).map(lambda n: _step("limit", "limit", [n])),
        st.tuples(strings, enums).map(lambda a: _step("by", "by", [a[0], a[1]])),
        st.lists(strings, min_size=1, max_size=3).map(lambda a: _step("select", "select", a)),
        strings.map(lambda s: _step("as", "as_", [s])),
        values.map(lambda v: _step("constant", "constant", [v])),
        st.lists(values, max_size=3).map(lambda a: _step("inject", "inject", a)),
    ]
    if depth < 2:
        anon = anonymous(depth + 1)
        leaf += [
            st.tuples(st.sampled_from([("where", "where"), ("not", "not_"), ("local", "local"),
                                       ("repeat", "repeat"), ("optional", "optional"),
                                       ("filter", "filter_"), ("by", "by")]), anon).map(
                lambda a: _step(a[0][0], a[0][1], [a[1]])),
            st.tuples(st.sampled_from([("union", "union"), ("coalesce", "coalesce"),
                                       ("and", "and_"), ("or", "or_")]),
                      st.lists(anon, max_size=3)).map(lambda a: _step(a[0][0], a[0][1], a[1])),
        ]
    return draw(st.one_of(leaf))


@st.composite
def anonymous(draw: st.DrawFn, depth: int) -> Pair:
    chain = draw(st.lists(steps(depth), min_size=1, max_size=3))
    trav: Any = __.start()  # an empty anonymous traversal: `__.by` does not exist
    for _, build in chain:
        trav = build(trav)
    return "__." + ".".join(t for t, _ in chain), trav


@st.composite
def traversals(draw: st.DrawFn) -> tuple[str, Any]:
    g: Any = source()
    text = "g"
    src = draw(st.sampled_from(["", "sack", "side", "ro", "subgraph", "seed"]))
    if src == "sack":
        t, v = draw(st.one_of(ints, doubles))
        text, g = text + f".withSack({t})", g.with_sack(v)
    elif src == "side":
        t, v = draw(values)
        text, g = text + f".withSideEffect('a', {t})", g.with_side_effect("a", v)
    elif src == "ro":
        text, g = text + ".withStrategies(ReadOnlyStrategy)", g.with_strategies(ReadOnlyStrategy())
    elif src == "subgraph":
        t, v = draw(anonymous(1))
        text += f".withStrategies(SubgraphStrategy(vertices: {t}))"
        g = g.with_strategies(SubgraphStrategy(vertices=v))
    elif src == "seed":
        t, v = draw(ints)
        text, g = text + f".withStrategies(new SeedStrategy(seed: {t}))", g.with_strategies(
            SeedStrategy(seed=v))
    spawn = draw(st.sampled_from(["V", "E", "inject"]))
    args = draw(st.lists(st.one_of(ints, longs, strings, variables), max_size=2))
    text += f".{spawn}({', '.join(t for t, _ in args)})"
    trav = getattr(g, spawn)(*[v for _, v in args])
    for t, build in draw(st.lists(steps(), max_size=5)):
        text += "." + t
        trav = build(trav)
    return text, trav


# ---------------------------------------------------------------- fluent equivalence: table

g = source()
_TABLE: list[tuple[str, Any]] = [
    ("g.V().has('name','marko').out('knows')", g.V().has("name", "marko").out("knows")),
    ("g.V(1).values('age')", g.V(1).values("age")),
    ("g.V(1L, 2L)", g.V(statics.long(1), statics.long(2))),
    ("g.E().hasLabel('knows').inV()", g.E().has_label("knows").in_v()),
    ("g.V().has('age', P.gt(30)).count()", g.V().has("age", P.gt(30)).count()),
    ("g.V().has('age', gt(30).and(lt(40)))", g.V().has("age", P.gt(30).and_(P.lt(40)))),
    ("g.V().has('age', P.between(20, 30).or(eq(50)))",
     g.V().has("age", P.between(20, 30).or_(P.eq(50)))),
    ("g.V().has('name', within('a', 'b'))", g.V().has("name", P.within("a", "b"))),
    ("g.V().has('name', within(['a', 'b']))", g.V().has("name", P.within(["a", "b"]))),
    ("g.V().has('name', without())", g.V().has("name", P.without())),
    ("g.V().has('name', TextP.containing('ar'))", g.V().has("name", TextP.containing("ar"))),
    ("g.V().has('name', notStartingWith('m'))", g.V().has("name", TextP.not_starting_with("m"))),
    ("g.V().has('name', regex('^m.*'))", g.V().has("name", TextP.regex("^m.*"))),
    ("g.V().is(P.not(P.within(1, 2)))", g.V().is_(P.not_(P.within(1, 2)))),
    ("g.V().is(P.eq(1).negate())", g.V().is_(P.not_(P.eq(1)))),
    ("g.V().values('x').is(P.typeOf(GType.INT))", g.V().values("x").is_(P.type_of(GType.INT))),
    ("g.V().values('x').asNumber(GType.LONG)", g.V().values("x").as_number(GType.LONG)),
    ("g.V().order().by('age', desc).by(T.id, Order.asc)",
     g.V().order().by("age", Order.desc).by(T.id, Order.asc)),
    ("g.V().group().by(label).by(values('name').fold())",
     g.V().group().by(T.label).by(__.values("name").fold())),
    ("g.V().groupCount().by(T.label).unfold().select(keys)",
     g.V().group_count().by(T.label).unfold().select(Column.keys)),
    ("g.V().local(__.outE().limit(2L))", g.V().local(__.out_e().limit(statics.long(2)))),
    ("g.V().count(Scope.local).sum(local)", g.V().count(Scope.local).sum_(Scope.local)),
    ("g.V().as('a').out().as('b').select(Pop.all, 'a')",
     g.V().as_("a").out().as_("b").select(Pop.all_, "a")),
    ("g.V().select(last, 'a')", g.V().select(Pop.last, "a")),
    ("g.withSack(1.0d).V().sack(mult).by('w').sack()",
     g.with_sack(1.0).V().sack(Operator.mult).by("w").sack()),
    ("g.withSack(0).V().sack(Operator.sum).by('w')",
     g.with_sack(0).V().sack(Operator.sum_).by("w")),
    ("g.withSack(1, sum).V()", g.with_sack(1, Operator.sum_).V()),
    ("g.withSideEffect('a', []).V().aggregate('a').cap('a')",
     g.with_side_effect("a", []).V().aggregate("a").cap("a")),
    ("g.withBulk(false).V()", g.with_bulk(False).V()),
    ("g.withPath().V()", g.with_path().V()),
    ("g.withStrategies(ReadOnlyStrategy).V()", g.with_strategies(ReadOnlyStrategy()).V()),
    ("g.withStrategies(SubgraphStrategy(vertices: __.hasLabel('person'))).V()",
     g.with_strategies(SubgraphStrategy(vertices=__.has_label("person"))).V()),
    ("g.withStrategies(PartitionStrategy(partitionKey: '_p', writePartition: 'a', "
     "readPartitions: ['a'])).V()",
     g.with_strategies(PartitionStrategy(partition_key="_p", write_partition="a",
                                         read_partitions=["a"])).V()),
    ("g.withStrategies(new SeedStrategy(seed: 999)).V().coin(0.5)",
     g.with_strategies(SeedStrategy(seed=999)).V().coin(0.5)),
    ("g.withoutStrategies(LambdaRestrictionStrategy).V()",
     g.without_strategies(LambdaRestrictionStrategy).V()),
    ("g.with('evaluationTimeout', 500L).with('x').V()",
     g.with_("evaluationTimeout", statics.long(500)).with_("x").V()),
    ("g.V(xx1).out(xx2)", g.V(Bindings.of("xx1", None)).out(Bindings.of("xx2", None))),
    ("g.inject(1b, 2s, 3i, 4L, 5N, 1.5f, 2.5d, 3.5m, true, null)",
     g.inject(statics.SingleByte(1), statics.short(2), 3, statics.long(4), statics.bigint(5),
              Float32(1.5), 2.5, statics.bigdecimal(Decimal("3.5")), True, None)),
    ("g.inject(NaN, Infinity, -Infinity)", g.inject(math.nan, math.inf, -math.inf)),
    ("g.inject([1, 'a'], [a: 1, (T.id): 2], {'x'}, [:])",
     g.inject([1, "a"], {"a": 1, T.id: 2}, {"x"}, {})),
    ("g.inject(datetime('2023-08-08T10:00:00Z'))",
     g.inject(dt.datetime(2023, 8, 8, 10, tzinfo=dt.UTC))),
    ("g.inject(UUID('f47af10b-58cc-4372-a567-0f02b2f3d479'))",
     g.inject(uuid.UUID("f47af10b-58cc-4372-a567-0f02b2f3d479"))),
    ("g.V().valueMap().with(WithOptions.tokens, WithOptions.labels)",
     g.V().value_map().with_(WithOptions.tokens, WithOptions.labels)),
    ("g.V().index().with(WithOptions.indexer, WithOptions.map)",
     g.V().index().with_(WithOptions.indexer, WithOptions.map)),
    ("g.io('x.json').with(IO.reader, IO.graphson).read()",
     g.io("x.json").with_(IO.reader, IO.graphson).read()),
    ("g.V().branch(values('age')).option(Pick.any, __.label())",
     g.V().branch(__.values("age")).option(Pick.any_, __.label())),
    ("g.mergeV([(T.label): 'p']).option(Merge.onCreate, [name: 'x'])",
     g.merge_v({T.label: "p"}).option(Merge.on_create, {"name": "x"})),
    ("g.V().property(list, 'a', 1).property(Cardinality.single, 'b', 2)",
     g.V().property(Cardinality.list_, "a", 1).property(Cardinality.single, "b", 2)),
    ("g.mergeV([a: Cardinality.set(1)])", g.merge_v({"a": CardinalityValue.set_(1)})),
    ("g.V().to(Direction.OUT).from(IN)", g.V().to(Direction.OUT).from_(Direction.IN)),
    ("g.inject(Direction.from, to)", g.inject(Direction.from_, Direction.to)),
    ("g.V().values('d').dateAdd(DT.day, 1)", g.V().values("d").date_add(DT.day, 1)),
    ("g.V().barrier(normSack)", g.V().barrier(Barrier.norm_sack)),
    ("g.V().repeat(out()).times(2).emit().until(has('a'))",
     g.V().repeat(__.out()).times(2).emit().until(__.has("a"))),
    ("g.V().choose(hasLabel('p'), out(), __.in())",
     g.V().choose(__.has_label("p"), __.out(), __.in_())),
    ("g.V().where(__.not(out('x'))).and(out(), __.in()).or()",
     g.V().where(__.not_(__.out("x"))).and_(__.out(), __.in_()).or_()),
    ("g.V().project('a', 'b').by(outE().count()).by(constant(1))",
     g.V().project("a", "b").by(__.out_e().count()).by(__.constant(1))),
    ("g.addV('p').property('n', 'x').addE('k').to(__.V(1))",
     g.add_v("p").property("n", "x").add_e("k").to(__.V(1))),
    ("g.V().drop().iterate()", g.V().drop()),
    ("g.call('tinker.search', [search: 'x'])", g.call("tinker.search", {"search": "x"})),
    ("g.union(__.V(1), __.V(2)).values('name')",
     g.union(__.V(1), __.V(2)).values("name")),
    ("g.V().math('a + b').by('x')", g.V().math("a + b").by("x")),
    ("g.V().range(local, 1, 2).tail(3).skip(1).sample(2).coin(0.1)",
     g.V().range_(Scope.local, 1, 2).tail(3).skip(1).sample(2).coin(0.1)),
    ("g.V().hasId(1, 2).hasNot('x').hasKey('k').hasValue('v')",
     g.V().has_id(1, 2).has_not("x").has_key("k").has_value("v")),
    ("g.V().shortestPath().with(ShortestPath.target, __.hasId(2))", None),
]


@pytest.mark.parametrize(("text", "fluent"), [c for c in _TABLE if c[1] is not None],
                         ids=[c[0][:60] for c in _TABLE if c[1] is not None])
def test_bytecode_equals_fluent_api(text: str, fluent: Any) -> None:
    bc = to_bytecode(parse_traversal(text))
    assert norm(bc) == norm(fluent.bytecode)
    if "NaN" not in text:  # nan != nan
        assert bc == fluent.bytecode  # gremlinpython's own equality agrees


@pytest.mark.parametrize("text", [c[0] for c in _TABLE])
def test_table_round_trips(text: str) -> None:
    tree = parse_traversal(text)
    back = from_bytecode(to_bytecode(tree))
    assert to_text(back, terminal=False) == to_text(tree, terminal=False)


# ---------------------------------------------------------------- fluent equivalence: generated


@settings(max_examples=examples(300),
          suppress_health_check=[HealthCheck.data_too_large])
@given(traversals())
def test_generated_traversals_match_fluent_api(case: tuple[str, Any]) -> None:
    text, fluent = case
    tree = parse_traversal(text)
    bc = to_bytecode(tree)
    assert norm(bc) == norm(fluent.bytecode), text
    # and the reverse direction reads the fluent API's bytecode into the same tree
    assert to_text(from_bytecode(fluent.bytecode)) == to_text(tree)


# ---------------------------------------------------------------- reverse translation


def test_a_binding_name_that_is_no_identifier_is_not_printed() -> None:
    """A bytecode binding is printed bare: a name such as `x).drop().V(y` would be read as
    other steps, so the printer refuses it (the front answers "unreadable bytecode")."""
    tree = from_bytecode(source().V(Bindings.of("x).drop().V(y", 1)).bytecode)
    with pytest.raises(ValueError, match="not a Gremlin identifier"):
        to_text(tree)


def test_from_bytecode_reads_fluent_traversals() -> None:
    t = source().V().has("age", P.gt(30).and_(P.lt(40))).order().by("age", Order.desc)
    tree = from_bytecode(t.bytecode)
    assert to_text(tree) == "g.V().has('age', P.gt(30).and(P.lt(40))).order().by('age', Order.desc)"
    assert tree.spawn is not None and tree.spawn.span == (0, 0)


def test_from_bytecode_terminal_and_anonymous() -> None:
    tree = from_bytecode(source().V().count().bytecode, terminal="next")
    assert to_text(tree) == "g.V().count().next()"
    anon = from_bytecode(__.out("a").bytecode, anonymous=True)
    assert anon.anonymous and to_text(anon) == "__.out('a')"


def test_variables_become_bindings_with_values() -> None:
    bc = to_bytecode(parse_traversal("g.V(vid1).where(__.has('a', xx1))"), {"vid1": 7, "xx1": "x"})
    assert bc.step_instructions[0] == ["V", Binding("vid1", 7)]
    assert bc.bindings == {"vid1": 7, "xx1": "x"}


@pytest.mark.parametrize("fluent", [
    lambda: source().V().map(lambda: "it.get()"),
    lambda: source().V().filter_(lambda: ("x -> true", "gremlin-groovy")),
    lambda: source().V().where(__.map(lambda: "it")),
    lambda: source().V().has("a", P.eq(lambda: "x")),
    lambda: source().with_side_effect("a", lambda: "x").V(),
])
def test_lambda_in_bytecode_is_script(fluent: Callable[[], Any]) -> None:
    with pytest.raises(GremlinScriptError) as info:
        from_bytecode(fluent().bytecode)
    assert info.value.kind == "lambda"


def test_graphson_lambda_is_script() -> None:
    bc = Bytecode()
    bc.add_step("V")
    bc.add_step("map", {"@type": "g:Lambda", "@value": {"script": "it.get()"}})
    with pytest.raises(GremlinScriptError):
        from_bytecode(bc)


def test_unknown_objects_and_bad_shapes_raise_bytecode_error() -> None:
    bc = Bytecode()
    bc.add_step("V", object())
    with pytest.raises(BytecodeError):
        from_bytecode(bc)
    with pytest.raises(BytecodeError):
        from_bytecode(Bytecode())
    with pytest.raises(BytecodeError):
        to_bytecode(parse_traversal("g.V().where(g.V().count())"))


def test_unknown_strategy_keeps_its_name() -> None:
    bc = to_bytecode(parse_traversal("g.withStrategies(AcmeStrategy(level: 2)).V()"))
    strategy = bc.source_instructions[0][1]
    assert strategy.strategy_name == "AcmeStrategy" and strategy.configuration == {"level": 2}
    assert to_text(from_bytecode(bc)) == "g.withStrategies(AcmeStrategy(level: 2)).V()"


def test_python_types_are_exact() -> None:
    bc = to_bytecode(parse_traversal("g.inject(1, 1L, 1b, 1s, 1N, 1.0f, 1.0, 1.0m)"))
    kinds = [type(a).__name__ for a in bc.step_instructions[0][1:]]
    assert kinds == ["int", "long", "SingleByte", "short", "bigint", "Float32", "float",
                     "BigDecimal"]
    assert isinstance(bc.step_instructions[0][8], statics.BigDecimal)
    assert isinstance(Operator.sum_, AEnum) and isinstance(OptionsStrategy(), TraversalStrategy)
