"""lark callbacks for Neo4j 5's index and constraint commands -> `SchemaDefinition` clauses.

Part of the inline transformer (see transform.py). Pieces are picked by what they are (a `Part`
of a named kind, a keyword token), never by position.
"""

from __future__ import annotations

from typing import Any

from lark import Token

from query_guard.cypher.ast import Expr, MapLiteral, Parameter, SingleQuery, Variable
from query_guard.cypher.ast_schema import SchemaDefinition
from query_guard.cypher.build_parts import Part, span_of, tok_span, unescape_name

# keyword tokens that make up a command's kind (`CREATE VECTOR INDEX`)
_KIND_WORDS = frozenset(
    {"CREATE", "DROP", "INDEX", "CONSTRAINT", "RANGE", "TEXT", "POINT", "LOOKUP", "FULLTEXT",
     "VECTOR", "BTREE"}
)  # fmt: skip


def _parts(children: list[Any]) -> dict[str, Any]:
    return {x.kind: x.value for x in children if type(x) is Part}


def _keywords(children: list[Any]) -> list[str]:
    return [t.value.upper() for t in children if isinstance(t, Token) and t.type in _KIND_WORDS]


def _names(children: list[Any]) -> list[str]:
    return [x.value for x in children if type(x) is Part and x.kind == "name"]


class SchemaBuilder:
    """Builds `SchemaDefinition` clauses (mixed into CypherBuilder)."""

    def _schema_definition(self, c: list[Any], **fields: Any) -> SingleQuery:
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

    def create_index(self, c: list[Any]) -> SingleQuery:
        parts = _parts(c)
        return self._schema_definition(c, properties=parts["on"], options=parts.get("options"))

    def create_constraint(self, c: list[Any]) -> SingleQuery:
        parts = _parts(c)
        return self._schema_definition(
            c, properties=parts["props"], rule=parts["rule"], options=parts.get("options")
        )

    def drop_schema(self, c: list[Any]) -> SingleQuery:
        return self._schema_definition(c)

    def create_index_legacy(self, c: list[Any]) -> SingleQuery:
        label, *keys = _names(c)
        return self._legacy_index(c, label, keys)

    def drop_index_legacy(self, c: list[Any]) -> SingleQuery:
        label, *keys = _names(c)
        return self._legacy_index(c, label, keys)

    def _legacy_index(self, c: list[Any], label: str, keys: list[str]) -> SingleQuery:
        """`CREATE INDEX ON :L(p)` (Neo4j 4, FalkorDB): a node index without a name."""
        target = Part("target", ("node", None, [label]), span_of(c))
        return self._schema_definition([*c, target], name=None, properties=keys)

    def if_not_exists(self, c: list[Any]) -> Part:
        return Part("if_exists", True, span_of(c))

    def if_exists(self, c: list[Any]) -> Part:
        return Part("if_exists", True, span_of(c))

    def schema_node(self, c: list[Any]) -> Part:
        return self._schema_target("node", c)

    def schema_rel(self, c: list[Any]) -> Part:
        return self._schema_target("relationship", c)

    def _schema_target(self, entity: str, c: list[Any]) -> Part:
        variable = next(x.name for x in c if isinstance(x, Variable))
        labels = next((x.value for x in c if type(x) is Part and x.kind == "labels"), [])
        return Part("target", (entity, variable, labels), span_of(c))

    def schema_labels(self, c: list[Any]) -> Part:
        return Part("labels", _names(c), span_of(c))

    def schema_prop(self, c: list[Any]) -> Part:
        return Part("prop", _names(c)[0], span_of(c))

    def schema_props(self, c: list[Any]) -> Part:
        return Part("props", [x.value for x in c if type(x) is Part], span_of(c))

    def index_on(self, c: list[Any]) -> Part:
        props: list[str] = []
        for x in c:
            if type(x) is Part:
                props += x.value if x.kind == "props" else [x.value]
        return Part("on", props, span_of(c))

    def index_on_lookup(self, c: list[Any]) -> Part:
        """`ON EACH labels(n)` / `ON type(r)`: the function's name stands for the property."""
        fn = next(t for t in c if isinstance(t, Token) and t.type == "NAME")
        return Part("on", [f"{fn.value}()"], span_of(c))

    def constraint_props(self, c: list[Any]) -> Part:
        (found,) = (x for x in c if type(x) is Part)
        value = found.value if found.kind == "props" else [found.value]
        return Part("props", value, span_of(c))

    def constraint_rule(self, c: list[Any]) -> Part:
        words = [t.value.upper() for t in c if isinstance(t, Token) and t.type != "IS"]
        typed = next((x.value for x in c if type(x) is Part and x.kind == "type"), None)
        if typed is not None:
            return Part("rule", f":: {typed}", span_of(c))
        return Part("rule", " ".join(words), span_of(c))

    def property_type(self, c: list[Any]) -> Part:
        return Part("type", " | ".join(x.value for x in c if type(x) is Part), span_of(c))

    def type_term(self, c: list[Any]) -> Part:
        words: list[str] = []
        for x in c:
            if isinstance(x, Token) and x.type not in ("LT", "GT"):
                words.append(x.value.upper())
            elif type(x) is Part:
                words[-1] += f"<{x.value}>"
        return Part("type_term", " ".join(words), span_of(c))

    def schema_options(self, c: list[Any]) -> Part:
        value: Expr = c[1]
        if isinstance(value, Token):
            value = Parameter(tok_span(value), unescape_name(value.value[1:]))
        assert isinstance(value, (MapLiteral, Parameter))
        return Part("options", value, span_of(c))
