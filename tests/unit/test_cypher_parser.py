"""Unit tests of the Cypher parser: tricky constructs, spans, errors, and robustness."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from query_guard.cypher.ast import (
    BinaryOp,
    CallProcedure,
    CallSubquery,
    CaseExpr,
    Create,
    Delete,
    Foreach,
    FunctionCall,
    LabelAnd,
    LabelCheck,
    LabelName,
    LabelNot,
    LabelOr,
    LabelWildcard,
    ListComprehension,
    ListLiteral,
    Literal,
    LoadCsv,
    MapLiteral,
    MapProjection,
    Match,
    Merge,
    NodePattern,
    OtherClause,
    OtherExpr,
    Parameter,
    PathPattern,
    PatternComprehension,
    PatternPredicate,
    PropertyLookup,
    QuantifiedPath,
    RelPattern,
    Return,
    SchemaCommand,
    Script,
    SetClause,
    SingleQuery,
    SubqueryExpr,
    Subscript,
    UnaryOp,
    UnionQuery,
    Unwind,
    Variable,
    With,
)
from query_guard.cypher.parser import CypherSyntaxError, parse
from tests.budget import examples


def text_of(query: str, span: tuple[int, int]) -> str:
    return query[span[0] : span[1]]


def only(query: str) -> SingleQuery:
    script = parse(query)
    assert len(script.statements) == 1
    stmt = script.statements[0]
    assert isinstance(stmt, SingleQuery)
    return stmt


def first(script: Script, cls: type) -> object:
    return next(script.find_all(cls))


def replace(query: str, edits: list[tuple[tuple[int, int], str]]) -> str:
    for (start, end), new in sorted(edits, reverse=True):
        query = query[:start] + new + query[end:]
    return query


# ---------------------------------------------------------------- arrows and spans


@pytest.mark.parametrize(
    ("arrow", "direction", "left", "right"),
    [
        ("-[:R]->", "out", "-", "->"),
        ("<-[:R]-", "in", "<-", "-"),
        ("-[:R]-", "both", "-", "-"),
        ("<-[:R]->", "both", "<-", "->"),
        ("-->", "out", "-", "->"),
        ("<--", "in", "<-", "-"),
        ("--", "both", "-", "-"),
        ("<-->", "both", "<-", "->"),
        ("- [:R] ->", "out", "-", "->"),
    ],
)
def test_arrow_pieces(arrow: str, direction: str, left: str, right: str) -> None:
    query = f"MATCH (a){arrow}(b) RETURN a"
    rel = first(parse(query), RelPattern)
    assert isinstance(rel, RelPattern)
    assert rel.direction == direction
    assert text_of(query, rel.left_span) == left
    assert text_of(query, rel.right_span) == right


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("MATCH (a)-[:R]->(b) RETURN a", "MATCH (a)<-[:R]-(b) RETURN a"),
        ("MATCH (a)-->(b) RETURN a", "MATCH (a)<--(b) RETURN a"),
        ("MATCH (a)<-[r:R*1..2]-(b) RETURN a", "MATCH (a)-[r:R*1..2]->(b) RETURN a"),
        ("MATCH (a)<--(b) RETURN a", "MATCH (a)-->(b) RETURN a"),
    ],
)
def test_flipping_arrow_pieces_is_byte_exact(before: str, after: str) -> None:
    rel = first(parse(before), RelPattern)
    assert isinstance(rel, RelPattern)
    new_left, new_right = ("<-", "-") if rel.direction == "out" else ("-", "->")
    flipped = replace(before, [(rel.left_span, new_left), (rel.right_span, new_right)])
    assert flipped == after
    reparsed = first(parse(flipped), RelPattern)
    assert isinstance(reparsed, RelPattern)
    assert reparsed.direction == ("in" if rel.direction == "out" else "out")


def test_relationship_type_name_span_swaps_the_type() -> None:
    query = "MATCH (a:Person)-[r:`ACTED IN`|DIRECTED]->(m) RETURN m"
    rel = first(parse(query), RelPattern)
    assert isinstance(rel, RelPattern)
    assert isinstance(rel.types, LabelOr)
    first_type, second_type = rel.types.items
    assert isinstance(first_type, LabelName) and isinstance(second_type, LabelName)
    assert first_type.name == "ACTED IN"
    assert text_of(query, first_type.name_span) == "`ACTED IN`"
    assert text_of(query, second_type.name_span) == "DIRECTED"
    swapped = replace(query, [(first_type.name_span, "ACTED_IN")])
    assert swapped == "MATCH (a:Person)-[r:ACTED_IN|DIRECTED]->(m) RETURN m"


def test_every_node_has_a_sane_span() -> None:
    query = (
        "MATCH p = (a:Person {name: 'x'})-[r:KNOWS*1..2]->(b) WHERE a.age > 3 AND b:Movie "
        "WITH a, count(b) AS c ORDER BY c DESC LIMIT 5 "
        "RETURN a {.name, c}, [x IN range(1, c) WHERE x > 1 | x * 2], "
        "CASE WHEN c > 1 THEN 'many' ELSE 'few' END AS size"
    )
    for node in parse(query).walk():
        start, end = node.span
        assert 0 <= start <= end <= len(query), node
        assert text_of(query, node.span) == text_of(query, node.span).strip(), node


def test_spans_of_expressions_include_parentheses() -> None:
    query = "RETURN (a + b) * (c)"
    item = only(query).clauses[0].items[0]  # type: ignore[attr-defined]
    assert isinstance(item.expr, BinaryOp)
    assert text_of(query, item.expr.span) == "(a + b) * (c)"
    assert text_of(query, item.expr.op_span) == "*"
    assert text_of(query, item.expr.left.span) == "a + b"


def test_property_lookup_key_span() -> None:
    query = "MATCH (n) RETURN n.`first name`, n.count"
    lookups = list(parse(query).find_all(PropertyLookup))
    assert [p.key for p in lookups] == ["first name", "count"]
    assert [text_of(query, p.key_span) for p in lookups] == ["`first name`", "count"]


def test_node_labels_and_label_expressions() -> None:
    query = "MATCH (a:A:B), (b:A|B), (c:!A), (d:A&B), (e:%), (f:(A|B)&C) RETURN a"
    nodes = list(parse(query).find_all(NodePattern))
    kinds = [type(n.labels) for n in nodes]
    assert kinds == [LabelAnd, LabelOr, LabelNot, LabelAnd, LabelWildcard, LabelAnd]
    labels = nodes[0].labels
    assert isinstance(labels, LabelAnd)
    assert [text_of(query, x.name_span) for x in labels.items] == ["A", "B"]  # type: ignore
    assert text_of(query, labels.span) == ":A:B"


def test_legacy_relationship_type_alternatives() -> None:
    query = "MATCH (a)-[:A|:B]->(b), (c)-[:!A]->(d) RETURN a"
    rels = list(parse(query).find_all(RelPattern))
    assert isinstance(rels[0].types, LabelOr)
    assert [x.name for x in rels[0].types.items] == ["A", "B"]  # type: ignore[attr-defined]
    assert isinstance(rels[1].types, LabelNot)


def test_keywords_as_names() -> None:
    query = "MATCH (o:Order)-[:CONTAINS]->(n) WHERE n.count > 1 RETURN {end: n.end} AS order"
    script = parse(query)
    assert [n.labels.name for n in script.find_all(NodePattern) if n.labels] == ["Order"]
    assert [p.key for p in script.find_all(PropertyLookup)] == ["count", "end"]
    alias = only("MATCH (c) WITH count(c) AS count RETURN count").clauses[2]
    assert isinstance(alias, Return)
    assert isinstance(alias.items[0].expr, Variable)


def test_case_insensitive_keywords() -> None:
    stmt = only("match (n) where n.x = 1 return distinct n order by n.x desc limit 3")
    ret = stmt.clauses[1]
    assert isinstance(ret, Return)
    assert ret.distinct and ret.order_by[0].descending


# ---------------------------------------------------------------- clauses


def test_projection_fields() -> None:
    stmt = only("MATCH (n) WITH DISTINCT n AS m, 1 ORDER BY m SKIP 2 LIMIT 3 WHERE m.x RETURN *")
    with_ = stmt.clauses[1]
    assert isinstance(with_, With)
    assert with_.distinct and not with_.star
    assert [i.alias.name if i.alias else None for i in with_.items] == ["m", None]
    assert isinstance(with_.skip, Literal) and with_.skip.value == 2
    assert isinstance(with_.limit, Literal) and with_.limit.value == 3
    assert isinstance(with_.where, PropertyLookup)
    ret = stmt.clauses[2]
    assert isinstance(ret, Return) and ret.star and ret.items == []


def test_write_clauses() -> None:
    query = (
        "MERGE (a:P {id: 1}) ON CREATE SET a.c = 1 ON MATCH SET a += {x: 1} "
        "CREATE (a)-[:R]->(b) SET b:X:Y, b.v = 2 REMOVE b.v, b:Y "
        "FOREACH (x IN [1] | CREATE (:N {v: x})) DETACH DELETE a, b"
    )
    clauses = only(query).clauses
    merge = clauses[0]
    assert isinstance(merge, Merge) and len(merge.actions) == 2
    assert isinstance(merge.actions[1].items[0], BinaryOp)
    assert merge.actions[1].items[0].op == "+="
    assert isinstance(clauses[1], Create)
    set_clause = clauses[2]
    assert isinstance(set_clause, SetClause)
    assert isinstance(set_clause.items[0], LabelCheck)
    assert isinstance(clauses[4], Foreach)
    delete = clauses[5]
    assert isinstance(delete, Delete) and delete.detach and len(delete.exprs) == 2


def test_load_csv() -> None:
    clause = only(
        "LOAD CSV WITH HEADERS FROM 'file:///x.csv' AS row FIELDTERMINATOR ';' RETURN row"
    ).clauses[0]
    assert isinstance(clause, LoadCsv)
    assert clause.with_headers and clause.variable.name == "row"
    assert isinstance(clause.source, Literal)


def test_call_procedure() -> None:
    query = "CALL db.index.fulltext.queryNodes('idx', $q) YIELD node, score AS s WHERE s > 1"
    call = only(query).clauses[0]
    assert isinstance(call, CallProcedure)
    assert call.name == "db.index.fulltext.queryNodes"
    assert text_of(query, call.name_span) == "db.index.fulltext.queryNodes"
    assert len(call.args or []) == 2
    assert [i.alias.name if i.alias else i.expr.name for i in call.yield_items] == [  # type: ignore
        "node",
        "s",
    ]
    assert call.where is not None
    bare = only("CALL db.labels").clauses[0]
    assert isinstance(bare, CallProcedure) and bare.args is None


def test_call_subqueries() -> None:
    stmt = only(
        "MATCH (n) CALL (n) { MATCH (n)-->(m) RETURN m } "
        "CALL { WITH n RETURN 1 AS one UNION RETURN 2 AS one } "
        "CALL (*) { RETURN 3 AS three } RETURN m"
    )
    scoped, classic, star = stmt.clauses[1:4]
    assert isinstance(scoped, CallSubquery) and [v.name for v in scoped.imports or []] == ["n"]
    assert isinstance(classic, CallSubquery) and classic.imports is None
    assert isinstance(classic.body, UnionQuery)
    assert isinstance(star, CallSubquery) and star.import_all
    tx = only("CALL { MATCH (n) DETACH DELETE n } IN TRANSACTIONS OF 10 ROWS").clauses[0]
    assert isinstance(tx, CallSubquery) and tx.in_transactions


def test_union() -> None:
    stmt = parse("RETURN 1 AS x UNION RETURN 2 AS x UNION ALL RETURN 3 AS x").statements[0]
    assert isinstance(stmt, UnionQuery)
    assert len(stmt.branches) == 3 and stmt.all == [False, True]


def test_multiple_statements_and_schema_commands() -> None:
    script = parse(
        "CREATE INDEX i FOR (n:P) ON (n.x); SHOW INDEXES; DROP INDEX i; MATCH (n) RETURN n;"
    )
    kinds = [s.clauses[0].kind for s in script.statements[:3]]  # type: ignore[union-attr]
    assert kinds == ["CREATE INDEX", "SHOW INDEXES", "DROP INDEX"]
    assert all(isinstance(s.clauses[0], SchemaCommand) for s in script.statements[:3])  # type: ignore
    assert isinstance(script.statements[3], SingleQuery)
    text = only("CREATE TEXT INDEX t IF NOT EXISTS FOR (n:P) ON (n.x)").clauses[0]
    assert isinstance(text, SchemaCommand) and text.kind == "CREATE TEXT INDEX"


def test_use_and_explain() -> None:
    stmt = only("EXPLAIN USE movies MATCH (n) RETURN n")
    assert isinstance(stmt.clauses[0], OtherClause) and stmt.clauses[0].kind == "EXPLAIN"
    assert isinstance(stmt.clauses[1], OtherClause) and stmt.clauses[1].kind == "USE"


# ---------------------------------------------------------------- patterns


def test_quantified_paths_and_relationships() -> None:
    query = "MATCH p = (x)((a)-[:R]->(b)){1,3}(y), (c)-[:S]->{2,}(d), (e)((f)--(g))+(h) RETURN p"
    patterns = only(query).clauses[0].patterns  # type: ignore[attr-defined]
    qpp = patterns[0].elements[1]
    assert isinstance(qpp, QuantifiedPath)
    assert qpp.quantifier is not None
    assert (qpp.quantifier.min, qpp.quantifier.max) == (1, 3)
    rel = patterns[1].elements[1]
    assert isinstance(rel, RelPattern) and rel.quantifier is not None
    assert (rel.quantifier.min, rel.quantifier.max) == (2, None)
    plus = patterns[2].elements[1]
    assert isinstance(plus, QuantifiedPath) and plus.quantifier is not None
    assert (plus.quantifier.min, plus.quantifier.max) == (1, None)


@pytest.mark.parametrize(
    ("length", "bounds"),
    [
        ("*", (None, None)),
        ("*2", (2, 2)),
        ("*1..3", (1, 3)),
        ("*..3", (None, 3)),
        ("*2..", (2, None)),
    ],
)
def test_variable_length(length: str, bounds: tuple[int | None, int | None]) -> None:
    rel = first(parse(f"MATCH (a)-[:R{length}]->(b) RETURN a"), RelPattern)
    assert isinstance(rel, RelPattern) and rel.length is not None
    assert (rel.length.min, rel.length.max) == bounds


def test_shortest_paths_and_selectors() -> None:
    for query, shortest in [
        ("MATCH p = shortestPath((a)-[*]-(b)) RETURN p", "shortestPath"),
        ("MATCH p = allShortestPaths((a)-[*]-(b)) RETURN p", "allShortestPaths"),
        ("MATCH p = SHORTEST 1 (a)-[:R]-+(b) RETURN p", "SHORTEST 1"),
        ("MATCH p = ALL SHORTEST (a)-[:R]-+(b) RETURN p", "ALL SHORTEST"),
        ("MATCH p = ANY (a)-[:R]-+(b) RETURN p", "ANY"),
    ]:
        pattern = first(parse(query), PathPattern)
        assert isinstance(pattern, PathPattern) and pattern.shortest == shortest, query
        assert pattern.variable is not None and pattern.variable.name == "p"


def test_inline_where_in_node_and_relationship() -> None:
    query = "MATCH (n:Person WHERE n.age > 3)-[r:R WHERE r.x = 1]->(m) RETURN n"
    node = first(parse(query), NodePattern)
    rel = first(parse(query), RelPattern)
    assert isinstance(node, NodePattern) and isinstance(node.where, BinaryOp)
    assert isinstance(rel, RelPattern) and isinstance(rel.where, BinaryOp)


def test_pattern_predicates_in_expressions() -> None:
    query = (
        "MATCH (n) WHERE (n)-[:R]->(:X {a: 1}) AND NOT (n:Person)<-[:S]-() "
        "AND ({k: 1})-->(n) AND (n {name: 'y'})-->() RETURN n"
    )
    preds = list(parse(query).find_all(PatternPredicate))
    assert len(preds) == 4
    firsts = [p.pattern.elements[0] for p in preds]
    assert all(isinstance(n, NodePattern) for n in firsts)
    assert [text_of(query, n.span) for n in firsts] == [
        "(n)",
        "(n:Person)",
        "({k: 1})",
        "(n {name: 'y'})",
    ]
    assert isinstance(firsts[1].labels, LabelName)  # type: ignore[union-attr]
    props = firsts[3].properties  # type: ignore[union-attr]
    assert isinstance(props, MapLiteral) and text_of(query, props.span) == "{name: 'y'}"
    assert props.entries[0][0] == "name" and text_of(query, props.entries[0][1]) == "name"


# ---------------------------------------------------------------- expressions


def test_operator_precedence() -> None:
    query = "RETURN NOT a = b AND c OR d XOR e, a + b * c ^ 2, -x ^ 2, x IS NOT NULL"
    items = [i.expr for i in only(query).clauses[0].items]  # type: ignore[attr-defined]
    top = items[0]
    assert isinstance(top, BinaryOp) and top.op == "OR"
    assert isinstance(top.left, BinaryOp) and top.left.op == "AND"
    assert isinstance(top.left.left, UnaryOp) and top.left.left.op == "NOT"
    assert isinstance(top.left.left.operand, BinaryOp) and top.left.left.operand.op == "="
    assert isinstance(top.right, BinaryOp) and top.right.op == "XOR"
    arith = items[1]
    assert isinstance(arith, BinaryOp) and arith.op == "+"
    assert isinstance(arith.right, BinaryOp) and arith.right.op == "*"
    assert isinstance(arith.right.right, BinaryOp) and arith.right.right.op == "^"
    power = items[2]
    assert isinstance(power, BinaryOp) and power.op == "^" and isinstance(power.left, UnaryOp)
    assert isinstance(items[3], UnaryOp) and items[3].op == "IS NOT NULL"


def test_string_and_list_predicates() -> None:
    query = (
        "MATCH (n) WHERE n.a STARTS WITH 'x' AND n.b ENDS WITH 'y' AND n.c CONTAINS 'z' "
        "AND n.d =~ 'r' AND n.e IN [1] AND n.f <> 1 AND n.g != 2 RETURN n"
    )
    ops = sorted(b.op for b in parse(query).find_all(BinaryOp) if b.op != "AND")
    assert ops == sorted(["STARTS WITH", "ENDS WITH", "CONTAINS", "=~", "IN", "<>", "<>"])
    starts = next(b for b in parse(query).find_all(BinaryOp) if b.op == "STARTS WITH")
    assert text_of(query, starts.op_span) == "STARTS WITH"


@pytest.mark.parametrize(
    ("literal", "kind", "value"),
    [
        (r"'a\'b\n\t\\\u00e9'", "string", "a'b\n\t\\é"),
        (r'"dq \"x\""', "string", 'dq "x"'),
        ("0x1F", "integer", 31),
        ("0o17", "integer", 15),
        ("017", "integer", 15),
        ("42", "integer", 42),
        ("1.5e3", "float", 1500.0),
        (".5", "float", 0.5),
        ("3e-2", "float", 0.03),
        ("true", "boolean", True),
        ("NULL", "null", None),
    ],
)
def test_literals(literal: str, kind: str, value: object) -> None:
    lit = first(parse(f"RETURN {literal}"), Literal)
    assert isinstance(lit, Literal) and (lit.kind, lit.value) == (kind, value)


def test_parameters_and_backticks() -> None:
    params = list(parse("RETURN $x, $0, $`a b`").find_all(Parameter))
    assert [p.name for p in params] == ["x", "0", "a b"]
    var = first(parse("MATCH (`we``ird`) RETURN 1"), Variable)
    assert isinstance(var, Variable) and var.name == "we`ird"


def test_functions() -> None:
    query = "RETURN count(*), count(DISTINCT x), apoc.coll.contains(l, 1), exists(n.p)"
    calls = list(parse(query).find_all(FunctionCall))
    assert [(c.name, c.star, c.distinct, len(c.args)) for c in calls] == [
        ("count", True, False, 0),
        ("count", False, True, 1),
        ("apoc.coll.contains", False, False, 2),
        ("exists", False, False, 1),
    ]


def test_comprehensions_and_quantifiers() -> None:
    query = (
        "MATCH (a) RETURN [x IN l WHERE x > 1 | x * 2], [x IN l], [1 IN l], "
        "[(a)-[:R]->(b) WHERE b.x | b.name], [p = (a)-->() | p], "
        "all(x IN l WHERE x > 1), reduce(acc = 0, x IN l | acc + x), "
        "[x IN l WHERE x:A | x.name]"
    )
    items = [i.expr for i in only(query).clauses[1].items]  # type: ignore[attr-defined]
    assert isinstance(items[0], ListComprehension) and items[0].projection is not None
    assert isinstance(items[1], ListComprehension) and items[1].where is None
    assert isinstance(items[2], ListLiteral)
    assert isinstance(items[3], PatternComprehension) and items[3].where is not None
    assert isinstance(items[4], PatternComprehension)
    assert items[4].path_variable is not None and items[4].path_variable.name == "p"
    assert isinstance(items[5], OtherExpr) and items[5].kind == "all"
    assert isinstance(items[6], OtherExpr) and items[6].kind == "reduce"
    last = items[7]
    assert isinstance(last, ListComprehension) and isinstance(last.where, LabelCheck)
    assert isinstance(last.projection, PropertyLookup)


def test_label_check_disjunction_in_where() -> None:
    where = only("MATCH (n) WHERE n:A|B AND n:C RETURN n").clauses[0].where  # type: ignore
    assert isinstance(where, BinaryOp)
    assert isinstance(where.left, LabelCheck) and isinstance(where.left.labels, LabelOr)


def test_map_projection_and_subscripts() -> None:
    query = "MATCH (n) RETURN n {.name, .*, x, k: n.age + 1}, l[0], l[1..2], l[..2], m['k']"
    proj = first(parse(query), MapProjection)
    assert isinstance(proj, MapProjection)
    assert [i[0] for i in proj.items] == ["property", "all", "variable", "literal"]
    subs = list(parse(query).find_all(Subscript))
    assert [s.is_slice for s in subs] == [False, True, True, False]


def test_case_expressions() -> None:
    query = "RETURN CASE WHEN a THEN 1 ELSE 2 END, CASE x WHEN 1 THEN 'a' WHEN 2 THEN 'b' END"
    cases = list(parse(query).find_all(CaseExpr))
    assert cases[0].subject is None and cases[0].default is not None
    assert cases[1].subject is not None and len(cases[1].alternatives) == 2
    assert cases[1].default is None


def test_subquery_expressions() -> None:
    query = (
        "MATCH (n) WHERE EXISTS { MATCH (n)-->(m) WHERE m.x = 1 } AND COUNT { (n)-->() } > 2 "
        "AND exists { (n)-[:R]->(:X) WHERE n.a = 1 } "
        "RETURN COLLECT { MATCH (n)-->(m) RETURN m.name } AS names"
    )
    subs = list(parse(query).find_all(SubqueryExpr))
    assert [(s.kind, s.body is not None) for s in subs] == [
        ("EXISTS", True),
        ("COUNT", False),
        ("EXISTS", False),
        ("COLLECT", True),
    ]
    assert subs[2].where is not None and len(subs[2].patterns) == 1


def test_comments_are_ignored() -> None:
    stmt = only("MATCH (n) // line\n/* block\n comment */ RETURN n // end")
    assert isinstance(stmt.clauses[0], Match) and isinstance(stmt.clauses[1], Return)


def test_subtraction_is_not_an_arrow() -> None:
    query = "MATCH (n) RETURN n.x - 1, n.x-1, x < -1, x<-1, (n.x)-1, l[0]-1"
    ops = [i.expr.op for i in only(query).clauses[1].items]  # type: ignore[attr-defined]
    assert ops == ["-", "-", "<", "<", "-", "-"]


def test_unwind() -> None:
    clause = only("UNWIND [1, 2] AS x RETURN x").clauses[0]
    assert isinstance(clause, Unwind) and clause.variable.name == "x"


# ---------------------------------------------------------------- errors


def test_error_location_and_expected_words() -> None:
    with pytest.raises(CypherSyntaxError) as info:
        parse("MATCH (n)\nRETRUN n")
    err = info.value
    assert (err.line, err.column, err.offset) == (2, 1, 10)
    assert "RETURN" in err.expected and "WITH" in err.expected
    assert len(err.expected) <= 8
    assert err.message.startswith("line 2, column 1: unexpected 'RETRUN'; expected one of: ")


def test_error_at_end_of_input() -> None:
    with pytest.raises(CypherSyntaxError) as info:
        parse("MATCH (n) WHERE n.x = ")
    assert info.value.offset == len("MATCH (n) WHERE n.x = ")
    assert "an expression" in info.value.expected
    assert "unexpected end of input" in info.value.message


def test_error_for_bad_label() -> None:
    with pytest.raises(CypherSyntaxError) as info:
        parse("MATCH (n:) RETURN n")
    assert info.value.column == 10 and "a name" in info.value.expected


@pytest.mark.parametrize(
    "query",
    [
        "",
        ";",
        "MATCH",
        "RETURN [x IN l WHERE]",
        "MATCH (a)-[:R]->-(b) RETURN a",
        "MATCH (a)(b) RETURN a",
        "RETURN (a.b)-->(c)",
        "RETURN 'unterminated",
        "RETURN f(x)(y)",
        "RETURN [1 IN l WHERE 1 | 2]",
    ],
)
def test_invalid_queries_raise_syntax_errors(query: str) -> None:
    with pytest.raises(CypherSyntaxError):
        parse(query)


def test_deep_nesting_is_a_syntax_error_not_a_crash() -> None:
    for depth in (50, 5000):
        query = "RETURN " + "NOT " * depth + "x"
        with contextlib.suppress(CypherSyntaxError):
            parse(query)
        query = "RETURN " + "[" * depth + "]" * depth
        with contextlib.suppress(CypherSyntaxError):
            parse(query)


@settings(max_examples=examples(300))
@given(st.text(max_size=80))
def test_arbitrary_text_raises_only_syntax_errors(text: str) -> None:
    try:
        parse(text)
    except CypherSyntaxError as err:
        assert 0 <= err.offset <= len(text)
        assert err.line >= 1 and err.column >= 1


_CHARS = list("()[]{}<>-=:|,.;*+!&%$'\"`\\ \n0123456789abcnxMATCHRETURNWHERE")
_CHUNKS = ["MATCH ", "RETURN ", " WHERE ", "-->", "<-[", "]->", "CALL {", "}", " AND ", "EXISTS {"]
_ALPHABET = st.sampled_from([*_CHARS, *_CHUNKS])


@settings(max_examples=examples(300))
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_cypher_like_text_raises_only_syntax_errors(text: str) -> None:
    with contextlib.suppress(CypherSyntaxError):
        parse(text)
