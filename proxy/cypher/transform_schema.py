"""lark callbacks for Neo4j 5's index and constraint commands -> `SchemaDefinition` clauses.

One family of the AST builder's rules (assembled in builders.py). Pieces are picked by name
(the declared shapes) or by what they are (a `Part` of a named kind, a keyword token).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lark import Token

from query_guard.cypher.ast import Expr, MapLiteral, Parameter, SingleQuery
from query_guard.cypher.ast_schema import SchemaDefinition
from query_guard.cypher.build_children import Children, Rules
from query_guard.cypher.build_parts import Part, span_of, tok_span, unescape_name

# keyword tokens that make up a command's kind (`CREATE VECTOR INDEX`)
_KIND_WORDS = frozenset(
    {"CREATE", "DROP", "INDEX", "CONSTRAINT", "RANGE", "TEXT", "POINT", "LOOKUP", "FULLTEXT",
     "VECTOR", "BTREE"}
)  # fmt: skip


def _parts(children: Sequence[Any]) -> dict[str, Any]:
    return {x.kind: x.value for x in children if type(x) is Part}


def _keywords(children: Sequence[Any]) -> list[str]:
    return [t.value.upper() for t in children if isinstance(t, Token) and t.type in _KIND_WORDS]


def _names(children: Sequence[Any]) -> list[str]:
    return [x.value for x in children if type(x) is Part and x.kind == "name"]


RULES = Rules()
rule = RULES.rule


def _schema_definition(c: Sequence[Any], **fields: Any) -> SingleQuery:
    span = span_of(c)
    parts = _parts(c)
    target = parts.get("target", ("", None, []))
    node = SchemaDefinition(
        span,
        " ".join(_keywords(c)),
        name=fields.pop("name", parts.get("name")),
        name_parameter=next((x for x in c if isinstance(x, Parameter)), None),
        if_exists="if_exists" in parts,
        entity=target[0],
        variable=target[1],
        labels=list(target[2]),
        **fields,
    )
    return SingleQuery(span, [node])


@rule(
    "create_index",
    "CREATE index_kind? INDEX schema_name? if_not_exists? FOR schema_target index_on"
    " schema_options?",
)
def create_index(c: Children) -> SingleQuery:
    parts = _parts(c)
    return _schema_definition(c, properties=parts["on"], options=parts.get("options"))


@rule(
    "create_constraint",
    "CREATE CONSTRAINT schema_name? if_not_exists? FOR|ON schema_target REQUIRE|ASSERT"
    " constraint_props constraint_rule schema_options?",
)
def create_constraint(c: Children) -> SingleQuery:
    parts = _parts(c)
    return _schema_definition(
        c, properties=parts["props"], rule=parts["rule"], options=parts.get("options")
    )


@rule("drop_schema", "DROP INDEX|CONSTRAINT schema_name if_exists?")
def drop_schema(c: Children) -> SingleQuery:
    return _schema_definition(c)


def _legacy_index(c: Children) -> SingleQuery:
    """`CREATE INDEX ON :L(p)` (Neo4j 4, FalkorDB): a node index without a name."""
    target = Part("target", ("node", None, [c.label.value]), c.span)
    return _schema_definition([*c, target], name=None, properties=_names(c.keys))


RULES.rule(
    "create_index_legacy", "CREATE index_kind? INDEX ON COLON label=symbolic_name LPAR *keys RPAR"
)(_legacy_index)
RULES.rule("drop_index_legacy", "DROP INDEX ON COLON label=symbolic_name LPAR *keys RPAR")(
    _legacy_index
)


@rule("if_not_exists", "IF NOT EXISTS")
def if_not_exists(c: Children) -> Part:
    return Part("if_exists", True, c.span)


@rule("if_exists", "IF EXISTS")
def if_exists(c: Children) -> Part:
    return Part("if_exists", True, c.span)


def _schema_target(entity: str, c: Children) -> Part:
    labels = c.schema_labels.value if c.schema_labels is not None else []
    return Part("target", (entity, c.variable.name, labels), c.span)


@rule("schema_node", "LPAR variable schema_labels? RPAR")
def schema_node(c: Children) -> Part:
    return _schema_target("node", c)


@rule(
    "schema_rel",
    "LPAR RPAR DASH_BRACKET|LARROW_BRACKET variable schema_labels? RSQB MINUS|ARROW_RIGHT"
    " LPAR RPAR",
)
def schema_rel(c: Children) -> Part:
    return _schema_target("relationship", c)


@rule("schema_labels", "COLON *names")
def schema_labels(c: Children) -> Part:
    return Part("labels", _names(c.names), c.span)


@rule("schema_prop", "variable DOT key=symbolic_name")
def schema_prop(c: Children) -> Part:
    return Part("prop", c.key.value, c.span)


@rule("schema_props", "*props")
def schema_props(c: Children) -> Part:
    return Part("props", [x.value for x in c.props if type(x) is Part], c.span)


@rule("index_on", "ON *parts")
def index_on(c: Children) -> Part:
    props: list[str] = []
    for x in c.parts:
        if type(x) is Part:
            props += x.value if x.kind == "props" else [x.value]
    return Part("on", props, c.span)


@rule("index_on_lookup", "ON EACH? function=NAME LPAR variable RPAR")
def index_on_lookup(c: Children) -> Part:
    """`ON EACH labels(n)` / `ON type(r)`: the function's name stands for the property."""
    return Part("on", [f"{c.function.value}()"], c.span)


@rule("constraint_props", "*parts")
def constraint_props(c: Children) -> Part:
    (found,) = (x for x in c.parts if type(x) is Part)
    value = found.value if found.kind == "props" else [found.value]
    return Part("props", value, c.span)


@rule("constraint_rule", "IS *words")
def constraint_rule(c: Children) -> Part:
    words = [t.value.upper() for t in c.words if isinstance(t, Token)]
    typed = next((x.value for x in c.words if type(x) is Part and x.kind == "type"), None)
    if typed is not None:
        return Part("rule", f":: {typed}", c.span)
    return Part("rule", " ".join(words), c.span)


@rule("property_type", "*terms")
def property_type(c: Children) -> Part:
    return Part("type", " | ".join(x.value for x in c.terms if type(x) is Part), c.span)


@rule("type_term", "*words LT? inner=property_type? GT? NOT? NULL?")
def type_term(c: Children) -> Part:
    words: list[str] = []
    for x in c:
        if isinstance(x, Token) and x.type not in ("LT", "GT"):
            words.append(x.value.upper())
        elif type(x) is Part:
            words[-1] += f"<{x.value}>"
    return Part("type_term", " ".join(words), c.span)


@rule("schema_options", "OPTIONS value=map_literal|PARAM")
def schema_options(c: Children) -> Part:
    value: Expr = c.value
    if isinstance(value, Token):
        value = Parameter(tok_span(value), unescape_name(value.value[1:]))
    assert isinstance(value, (MapLiteral, Parameter))
    return Part("options", value, c.span)
