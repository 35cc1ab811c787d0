"""Cypher's side of literal grounding (`query_guard.repair.grounding`): the bindings of a query
and the probes that look for their values.

Bindings (variable, label, property, value) come from inline maps `(m:Movie {title: 'x'})`,
equality `m.title = 'x'`, case-insensitive comparisons `toLower(m.title) = 'x'` and `IN`
lists; `$parameters` count when their value is a string. The label is the node pattern's or
the variable's (scope resolution); without one every label is probed. The probes are
parameterised, plain Cypher that Neo4j and FalkorDB both run (`toLower`, `toString`,
`CONTAINS`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from query_guard.backend import ResultStream, collect
from query_guard.cypher import ast
from query_guard.cypher.patterns import quote_name
from query_guard.cypher.query import CypherQuery
from query_guard.repair.grounding import MAX_BINDINGS, SIMILAR_SAMPLE
from query_guard.repair.model import Words

_CASE_FUNCTIONS = frozenset({"tolower", "toupper", "lower", "upper"})

Execute = Callable[[str, dict[str, Any]], Awaitable[ResultStream]]


@dataclass(frozen=True, slots=True)
class Binding:
    """A string a query requires some property to equal."""

    variable: str
    labels: tuple[str, ...]  # node labels (or relationship types); empty: probe all
    prop: str
    value: str
    span: tuple[int, int]  # the literal (or parameter) in the query text
    relationship: bool = False
    case_insensitive: bool = False  # `toLower(x.p) = 'v'`: the probe compares the same way

    @property
    def where(self) -> str:
        """`Movie.title`, `ACTED_IN.roles`, or `any label's title`."""
        if not self.labels:
            kind = "relationship type" if self.relationship else "label"
            return f"any {kind}'s {self.prop}"
        return f"{'|'.join(self.labels)}.{self.prop}"

    def show(self, label: str, quoted: str) -> str:
        """A stored value in a note: with its label when the binding named none."""
        return quoted if self.labels else f"{label}.{self.prop} {quoted}"


def cypher_literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


WORDS = Words(cypher_literal)


# ---------------------------------------------------------------- extraction (pure)


def extract_bindings(
    query: CypherQuery, parameters: Mapping[str, Any] | None = None, limit: int = MAX_BINDINGS
) -> list[Binding]:
    """The first `limit` distinct bindings, in source order."""
    params = parameters or {}
    rel_vars = _relationship_variables(query)
    found: list[Binding] = []
    for node in query.nodes:
        if isinstance(node, ast.NodePattern | ast.RelPattern):
            found += _from_map(query, node, params, rel_vars)
        elif isinstance(node, ast.BinaryOp):
            found += _from_comparison(query, node, params, rel_vars)
    out: list[Binding] = []
    keys: set[tuple[tuple[str, ...], str, str]] = set()
    for b in sorted(found, key=lambda b: b.span):
        key = (b.labels, b.prop, b.value)
        if key not in keys:
            keys.add(key)
            out.append(b)
    return out[:limit]


def _relationship_variables(query: CypherQuery) -> dict[str, tuple[str, ...]]:
    """Relationship variable -> its plain types (empty when untyped or an expression)."""
    out: dict[str, tuple[str, ...]] = {}
    for rel in query.find(ast.RelPattern):
        if rel.variable is not None:
            types = (rel.types.name,) if isinstance(rel.types, ast.LabelName) else ()
            out.setdefault(rel.variable.name, types)
    return out


def _value(expr: ast.Expr, params: Mapping[str, Any]) -> str | None:
    if isinstance(expr, ast.Literal) and expr.kind == "string" and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.Parameter) and isinstance(params.get(expr.name), str):
        return str(params[expr.name])
    if isinstance(expr, ast.FunctionCall) and expr.name.lower() in _CASE_FUNCTIONS:
        return _value(expr.args[0], params) if len(expr.args) == 1 else None
    return None


def _labels(query: CypherQuery, var: ast.Variable | ast.NodePattern) -> tuple[str, ...]:
    try:
        return tuple(sorted(query.scopes.labels(var)))
    except Exception:  # a construct the resolver does not know: probe every label
        return ()


def _make(
    query: CypherQuery,
    subject: ast.Variable | ast.NodePattern,
    name: str,
    prop: str,
    value: str,
    span: tuple[int, int],
    rel_vars: dict[str, tuple[str, ...]],
) -> Binding:
    if name in rel_vars:
        return Binding(name, rel_vars[name], prop, value, span, relationship=True)
    return Binding(name, _labels(query, subject), prop, value, span)


def _from_map(
    query: CypherQuery,
    node: ast.NodePattern | ast.RelPattern,
    params: Mapping[str, Any],
    rel_vars: dict[str, tuple[str, ...]],
) -> list[Binding]:
    if not isinstance(node.properties, ast.MapLiteral) or id(node) in query.written():
        return []
    out = []
    for key, _, expr in node.properties.entries:
        value = _value(expr, params)
        if value is None:
            continue
        if isinstance(node, ast.RelPattern):
            types = (node.types.name,) if isinstance(node.types, ast.LabelName) else ()
            name = node.variable.name if node.variable else ""
            out.append(Binding(name, types, key, value, expr.span, relationship=True))
        else:
            name = node.variable.name if node.variable else ""
            out.append(_make(query, node, name, key, value, expr.span, {}))
    return out


def _lookup(expr: ast.Expr) -> ast.PropertyLookup | None:
    """`x.p`, or `toLower(x.p)` / `toUpper(x.p)` (a case-insensitive comparison)."""
    if isinstance(expr, ast.FunctionCall) and expr.name.lower() in _CASE_FUNCTIONS:
        expr = expr.args[0] if len(expr.args) == 1 else expr
    if isinstance(expr, ast.PropertyLookup) and isinstance(expr.subject, ast.Variable):
        return expr
    return None


def _from_comparison(
    query: CypherQuery,
    op: ast.BinaryOp,
    params: Mapping[str, Any],
    rel_vars: dict[str, tuple[str, ...]],
) -> list[Binding]:
    pairs: list[tuple[ast.Expr, ast.Expr]] = []
    if op.op == "=":
        pairs = [(op.left, op.right), (op.right, op.left)]
    elif op.op == "IN" and isinstance(op.right, ast.ListLiteral):
        pairs = [(op.left, item) for item in op.right.items]
    out = []
    for side, other in pairs:
        lookup = _lookup(side)
        value = _value(other, params)
        if lookup is None or value is None:
            continue
        var = lookup.subject
        assert isinstance(var, ast.Variable)
        b = _make(query, var, var.name, lookup.key, value, other.span, rel_vars)
        if lookup is not side:  # the property was wrapped in toLower / toUpper
            b = replace(b, case_insensitive=True)
        out.append(b)
        if op.op == "=":
            break
    return out


# ---------------------------------------------------------------- probes (I/O)


def probe_queries(b: Binding) -> tuple[str, str]:
    """(exact probe, similar-values probe) for one binding; parameters `$value`, `$token`."""
    labels = "".join(":" + quote_name(x) for x in b.labels[:1])
    if b.relationship:
        match = f"MATCH ()-[n{labels}]->()"
        kind = "type(n)"
    else:
        match = f"MATCH (n{''.join(':' + quote_name(x) for x in b.labels)})"
        kind = "labels(n)[0]"
    prop = f"n.{quote_name(b.prop)}"
    test = f"toLower({prop}) = toLower($value)" if b.case_insensitive else f"{prop} = $value"
    exact = f"{match} WHERE {test} RETURN 1 AS found LIMIT 1"
    similar = (
        f"{match} WHERE {prop} IS NOT NULL AND toLower(toString({prop})) CONTAINS toLower($token) "
        f"RETURN DISTINCT {kind} AS label, {prop} AS value LIMIT {SIMILAR_SAMPLE}"
    )
    return exact, similar


def prober(execute: Execute) -> Callable[[Binding, str], Awaitable[list[tuple[str, Any]] | None]]:
    """The two probes of a binding on `execute` (`query_guard.repair.grounding.Stored`)."""

    async def stored(b: Binding, token: str) -> list[tuple[str, Any]] | None:
        exact, similar = probe_queries(b)
        if await collect(await execute(exact, {"value": b.value})):
            return None
        if not token:
            return []
        rows = await collect(await execute(similar, {"token": token}))
        return [(str(r[0]), r[1]) for r in rows if len(r) >= 2]

    return stored

