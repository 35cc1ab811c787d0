"""A judged query as a template and the schema elements it uses, one function per language.

A template is the query with its literals abstracted into typed slots, numbered in order of
appearance: strings become `$s1, $s2, …`, numbers `$n1, $n2, …` (booleans and null stay: they
shape the query more than they parametrise it). Two runs that differ only in their literals
share a template, so the library keeps one example per template and question.

    >>> cypher_template("MATCH (p:Person {name: 'Tom Hanks'}) RETURN p LIMIT 5").text
    'MATCH (p:Person {name: $s1}) RETURN p LIMIT $n1'

The elements (labels, `(start)-[TYPE]->(end)` patterns, properties; SQL tables and columns;
Gremlin vertex and edge labels and property keys) are what reinforcement deposits on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlglot import exp

from query_guard.cypher import ast as cy
from query_guard.cypher.patterns import endpoint_labels, positive_names, read_hops
from query_guard.cypher.query import CypherQuery
from query_guard.gremlin import ast as gr
from query_guard.gremlin.parser import parse_traversal
from query_guard.sql.query import SqlQuery

_CYPHER_SLOTS = {"STRING": "s", "INTEGER": "n", "FLOAT": "n"}
# Gremlin steps whose string arguments are schema names, not values
_GREMLIN_LABEL_STEPS = frozenset({"hasLabel", "addV", "addE"})
_GREMLIN_EDGE_STEPS = frozenset({"out", "in", "both", "outE", "inE", "bothE"})
_GREMLIN_KEY_STEPS = frozenset(
    {"values", "valueMap", "properties", "elementMap", "hasKey", "hasNot", "by", "order"}
)


@dataclass(frozen=True)
class Template:
    text: str  # the query with typed slots
    literals: dict[str, object] = field(default_factory=dict)  # slot -> the literal's value
    elements: frozenset[tuple[str, str]] = frozenset()  # (kind, name): label/pattern/property


class _Slots:
    """Numbers slots by kind in order of appearance."""

    def __init__(self) -> None:
        self.count: dict[str, int] = {}
        self.values: dict[str, object] = {}

    def new(self, kind: str, value: object) -> str:
        self.count[kind] = self.count.get(kind, 0) + 1
        slot = f"${kind}{self.count[kind]}"
        self.values[slot] = value
        return slot


def _replace_spans(text: str, spans: Iterable[tuple[int, int, str]]) -> str:
    out, pos = [], 0
    for start, end, replacement in sorted(spans):
        out += [text[pos:start], replacement]
        pos = end
    return "".join([*out, text[pos:]])


def template_of(language: str, text: str, dialect: str = "postgres") -> Template:
    """The template of `text` in `language` (raises the language's syntax error)."""
    if language == "sql":
        return sql_template(text, dialect)
    if language == "gremlin":
        return gremlin_template(text)
    return cypher_template(text)


# ---------------------------------------------------------------- Cypher


def cypher_template(text: str) -> Template:
    """From the parsed tokens: every STRING / INTEGER / FLOAT token becomes a slot."""
    query = CypherQuery.parse(text)
    slots = _Slots()
    spans = []
    for token in query.tokens:
        kind = _CYPHER_SLOTS.get(token.type)
        if kind is not None and token.start_pos is not None and token.end_pos is not None:
            value = _unquoted(token.value) if kind == "s" else _number(token.value)
            spans.append((token.start_pos, token.end_pos, slots.new(kind, value)))
    return Template(_replace_spans(text, spans), slots.values, cypher_elements(query))


def _unquoted(raw: str) -> str:
    body = raw[1:-1]
    return body.replace("\\'", "'").replace('\\"', '"').replace("\\\\", "\\")


def _number(raw: str) -> object:
    try:
        return int(raw, 0)
    except ValueError:
        try:
            return float(raw)
        except ValueError:
            return raw


def cypher_elements(query: CypherQuery) -> frozenset[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for node in query.find(cy.NodePattern):
        out.update(("label", name) for name in positive_names(node.labels))
    for hop in read_hops(query):
        types = list(positive_names(hop.rel.types))
        left = sorted(endpoint_labels(query, hop.left)) or [""]
        right = sorted(endpoint_labels(query, hop.right)) or [""]
        start, end = (right, left) if hop.rel.direction == "in" else (left, right)
        for name in types:
            out.add(("pattern", f"({start[0]})-[:{name}]->({end[0]})"))
    for lookup in query.find(cy.PropertyLookup):
        out.add(("property", lookup.key))
    for mapping in query.find(cy.MapLiteral):
        out.update(("property", key) for key, _, _ in mapping.entries)
    return frozenset(out)


# ---------------------------------------------------------------- SQL


def sql_template(text: str, dialect: str = "postgres") -> Template:
    """With sqlglot: string and number literals become slots; the template is re-emitted."""
    query = SqlQuery.parse(text, dialect)
    slots = _Slots()
    elements: set[tuple[str, str]] = set()

    statements = []
    for statement in query.statements:
        elements.update(("label", t.name) for t in statement.tree.find_all(exp.Table))
        elements.update(("property", c.name) for c in statement.tree.find_all(exp.Column))
        tree = statement.tree.copy()
        literals = sorted(  # numbered in the order they are written
            tree.find_all(exp.Literal), key=lambda n: int(n.meta.get("start", 1 << 30))
        )
        named = {id(n): slots.new("s" if n.is_string else "n", n.this) for n in literals}
        for node in literals:
            node.replace(exp.var(named[id(node)]))
        statements.append(tree.sql(dialect=dialect, comments=False))
    return Template(";\n".join(statements), slots.values, frozenset(elements))


# ---------------------------------------------------------------- Gremlin


def gremlin_template(text: str) -> Template:
    """From the parsed traversal: numbers and the string *values* become slots (a label in
    `hasLabel('person')`, an edge label in `out('knows')` or a key in `has('name', …)` stay)."""
    traversal = parse_traversal(text)
    slots = _Slots()
    elements: set[tuple[str, str]] = set()
    names: set[int] = set()  # ids of String nodes that are schema names
    for step in traversal.find_all(gr.Step):
        strings = [a for a in step.args if isinstance(a, gr.String)]
        if step.name in _GREMLIN_LABEL_STEPS:
            kinds = ["label"] * len(strings)
        elif step.name in _GREMLIN_EDGE_STEPS:
            kinds = ["pattern"] * len(strings)
        elif step.name in _GREMLIN_KEY_STEPS:
            kinds = ["property"] * len(strings)
        elif step.name == "has" and len(step.args) >= 2:
            # has(key, value) / has(label, key, value): all but the value are names
            kinds = ["label", "property"] if len(step.args) == 3 else ["property"]
            strings = [a for a in step.args[:-1] if isinstance(a, gr.String)]
            kinds = kinds[: len(strings)]
        elif step.name == "has" and len(step.args) == 1:
            kinds = ["property"] * len(strings)
        else:
            continue
        for arg, kind in zip(strings, kinds, strict=False):
            names.add(id(arg))
            elements.add((kind, arg.value))
    spans = []
    for node in traversal.walk():
        if isinstance(node, gr.String) and id(node) not in names and not node.naked:
            spans.append((node.span[0], node.span[1], slots.new("s", node.value)))
        elif isinstance(node, gr.Literal) and node.gtype not in ("boolean", "null"):
            spans.append((node.span[0], node.span[1], slots.new("n", node.value)))
    return Template(_replace_spans(text, spans), slots.values, frozenset(elements))
