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
from query_guard.cypher.build_children import Rules, Slots
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


CREATE_INDEX = rule(
    "create_index",
    "CREATE index_kind? INDEX schema_name? if_not_exists? FOR schema_target index_on"
    " schema_options?",
)


@CREATE_INDEX
def create_index(c: list[Any]) -> SingleQuery:
    parts = _parts(c)
    return _schema_definition(c, properties=parts["on"], options=parts.get("options"))


CREATE_CONSTRAINT = rule(
    "create_constraint",
    "CREATE CONSTRAINT schema_name? if_not_exists? FOR|ON schema_target REQUIRE|ASSERT"
    " constraint_props constraint_rule schema_options?",
)


@CREATE_CONSTRAINT
def create_constraint(c: list[Any]) -> SingleQuery:
    parts = _parts(c)
    return _schema_definition(
        c, properties=parts["props"], rule=parts["rule"], options=parts.get("options")
    )


DROP_SCHEMA = rule("drop_schema", "DROP INDEX|CONSTRAINT schema_name if_exists?")


@DROP_SCHEMA
def drop_schema(c: list[Any]) -> SingleQuery:
    return _schema_definition(c)


def _legacy_index(c: list[Any], s: Slots) -> SingleQuery:
    """`CREATE INDEX ON :L(p)` (Neo4j 4, FalkorDB): a node index without a name."""
    target = Part("target", ("node", None, [c[s.label].value]), span_of(c))
    return _schema_definition([*c, target], name=None, properties=_names(c[s.keys]))


CREATE_INDEX_LEGACY = rule(
    "create_index_legacy", "CREATE index_kind? INDEX ON COLON label=symbolic_name LPAR *keys RPAR"
)


@CREATE_INDEX_LEGACY
def create_index_legacy(c: list[Any]) -> SingleQuery:
    return _legacy_index(c, CREATE_INDEX_LEGACY)


DROP_INDEX_LEGACY = rule(
    "drop_index_legacy", "DROP INDEX ON COLON label=symbolic_name LPAR *keys RPAR"
)


@DROP_INDEX_LEGACY
def drop_index_legacy(c: list[Any]) -> SingleQuery:
    return _legacy_index(c, DROP_INDEX_LEGACY)


IF_NOT_EXISTS = rule("if_not_exists", "IF NOT EXISTS")


@IF_NOT_EXISTS
def if_not_exists(c: list[Any]) -> Part:
    return Part("if_exists", True, span_of(c))


IF_EXISTS = rule("if_exists", "IF EXISTS")


@IF_EXISTS
def if_exists(c: list[Any]) -> Part:
    return Part("if_exists", True, span_of(c))


def _schema_target(entity: str, c: list[Any], s: Slots) -> Part:
    labels = c[s.schema_labels].value if c[s.schema_labels] is not None else []
    return Part("target", (entity, c[s.variable].name, labels), span_of(c))


SCHEMA_NODE = rule("schema_node", "LPAR variable schema_labels? RPAR")


@SCHEMA_NODE
def schema_node(c: list[Any]) -> Part:
    return _schema_target("node", c, SCHEMA_NODE)


SCHEMA_REL = rule(
    "schema_rel",
    "LPAR RPAR DASH_BRACKET|LARROW_BRACKET variable schema_labels? RSQB MINUS|ARROW_RIGHT"
    " LPAR RPAR",
)


@SCHEMA_REL
def schema_rel(c: list[Any]) -> Part:
    return _schema_target("relationship", c, SCHEMA_REL)


SCHEMA_LABELS = rule("schema_labels", "COLON *names")


@SCHEMA_LABELS
def schema_labels(c: list[Any]) -> Part:
    return Part("labels", _names(c[SCHEMA_LABELS.names]), span_of(c))


SCHEMA_PROP = rule("schema_prop", "variable DOT key=symbolic_name")


@SCHEMA_PROP
def schema_prop(c: list[Any]) -> Part:
    return Part("prop", c[SCHEMA_PROP.key].value, span_of(c))


SCHEMA_PROPS = rule("schema_props", "*props")


@SCHEMA_PROPS
def schema_props(c: list[Any]) -> Part:
    return Part("props", [x.value for x in c[SCHEMA_PROPS.props] if type(x) is Part], span_of(c))


INDEX_ON = rule("index_on", "ON *parts")


@INDEX_ON
def index_on(c: list[Any]) -> Part:
    props: list[str] = []
    for x in c[INDEX_ON.parts]:
        if type(x) is Part:
            props += x.value if x.kind == "props" else [x.value]
    return Part("on", props, span_of(c))


INDEX_ON_LOOKUP = rule("index_on_lookup", "ON EACH? function=NAME LPAR variable RPAR")


@INDEX_ON_LOOKUP
def index_on_lookup(c: list[Any]) -> Part:
    """`ON EACH labels(n)` / `ON type(r)`: the function's name stands for the property."""
    return Part("on", [f"{c[INDEX_ON_LOOKUP.function].value}()"], span_of(c))


CONSTRAINT_PROPS = rule("constraint_props", "*parts")


@CONSTRAINT_PROPS
def constraint_props(c: list[Any]) -> Part:
    (found,) = (x for x in c[CONSTRAINT_PROPS.parts] if type(x) is Part)
    value = found.value if found.kind == "props" else [found.value]
    return Part("props", value, span_of(c))


CONSTRAINT_RULE = rule("constraint_rule", "IS *words")


@CONSTRAINT_RULE
def constraint_rule(c: list[Any]) -> Part:
    words = [t.value.upper() for t in c[CONSTRAINT_RULE.words] if isinstance(t, Token)]
    typed = next(
        (x.value for x in c[CONSTRAINT_RULE.words] if type(x) is Part and x.kind == "type"), None
    )
    if typed is not None:
        return Part("rule", f":: {typed}", span_of(c))
    return Part("rule", " ".join(words), span_of(c))


SCHEMA_OPTIONS = rule("schema_options", "OPTIONS value=map_literal|PARAM")


@SCHEMA_OPTIONS
def schema_options(c: list[Any]) -> Part:
    value: Expr = c[SCHEMA_OPTIONS.value]
    if isinstance(value, Token):
        value = Parameter(tok_span(value), unescape_name(value.value[1:]))
    assert isinstance(value, (MapLiteral, Parameter))
    return Part("options", value, span_of(c))
