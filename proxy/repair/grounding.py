"""Literal grounding (DESIGN §6): when a query returns nothing, check the string literals it
filters on against what the database stores, and say what is stored instead (`ENT.LITERAL`).

Bindings (variable, label, property, value) come from inline maps `(m:Movie {title: 'x'})`,
equality `m.title = 'x'`, case-insensitive comparisons `toLower(m.title) = 'x'` and `IN`
lists; `$parameters` count when their value is a string. The label is the node pattern's or
the variable's (scope resolution); without one every label is probed. At most
`MAX_BINDINGS` bindings, 2 bounded, parameterised probes: does the exact value exist? if not,
which stored values contain the literal's longest token (case-insensitively)? The probes are
plain Cypher that Neo4j and FalkorDB both run (`toLower`, `toString`, `CONTAINS`).

The second probe also yields *fixes* (`LiteralFix`, DESIGN §6 safe vs speculative) when it saw
every stored value holding the token: exactly one stored value equal to the literal but for
case is a **safe** fix ('keanu reeves' -> 'Keanu Reeves'); otherwise exactly one stored value
containing the literal is a **speculative** one ('Matrix' -> 'The Matrix').
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from query_guard.backend import BackendError, ResultStream, collect
from query_guard.cypher import ast
from query_guard.cypher.patterns import quote_name
from query_guard.cypher.query import CypherQuery
from query_guard.model import Edit, Finding, Severity

log = logging.getLogger(__name__)

MAX_BINDINGS = 3
MAX_SUGGESTIONS = 3
SIMILAR_SAMPLE = 50  # stored values fetched for ranking; the note keeps the best 3
_CASE_FUNCTIONS = frozenset({"tolower", "toupper", "lower", "upper"})
_TOKEN = re.compile(r"\w+", re.UNICODE)

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


@dataclass(frozen=True, slots=True)
class LiteralFix:
    """A binding's literal replaced by the one stored value it stands for."""

    binding: Binding
    value: str
    safe: bool  # equal but for case (safe) or merely containing the literal (speculative)

    @property
    def edit(self) -> Edit:
        return Edit(self.binding.span[0], self.binding.span[1], cypher_literal(self.value))

    def describe(self) -> str:
        how = "equal but for case" if self.safe else "the only stored value containing it"
        return (
            f"{cypher_literal(self.binding.value)} is not stored on {self.binding.where}; "
            f"used {cypher_literal(self.value)} ({how})"
        )


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


def longest_token(value: str) -> str:
    tokens = _TOKEN.findall(value)
    return max(tokens, key=len) if tokens else ""


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


async def ground_literals(
    bindings: list[Binding], execute: Execute, span_offset: int = 0
) -> tuple[list[Finding], list[LiteralFix]]:
    """The probes' notes (one `ENT.LITERAL` per binding whose value is not stored) and the
    fixes they found (at most one per binding)."""
    findings = []
    fixes: list[LiteralFix] = []
    for b in bindings:
        exact, similar = probe_queries(b)
        try:
            if await collect(await execute(exact, {"value": b.value})):
                continue
            token = longest_token(b.value)
            stored: list[tuple[str, Any]] = []
            if token:
                rows = await collect(await execute(similar, {"token": token}))
                stored = [(str(r[0]), r[1]) for r in rows if len(r) >= 2]
        except BackendError as exc:  # a probe the database refuses says nothing
            log.debug("grounding probe failed: %s", exc)
            continue
        fix = literal_fix(b, stored) if len(stored) < SIMILAR_SAMPLE else None
        if fix is not None:
            fixes.append(fix)
        best = rank_stored(b.value, stored)
        findings.append(
            Finding(
                "ENT.LITERAL",
                Severity.WARNING,
                literal_note(b, best),
                (b.span[0] + span_offset, b.span[1] + span_offset),
                hint=cypher_literal(best[0][1]) if best else None,
                rule="grounding",
            )
        )
    return findings, fixes


def literal_fix(b: Binding, stored: list[tuple[str, Any]]) -> LiteralFix | None:
    """The fix for a binding, given every stored value that holds its longest token."""
    if b.case_insensitive:  # `toLower(x.p) = 'v'`: a stored value's case would not compare
        return None
    target = b.value.lower()
    values = {v for _, v in stored if isinstance(v, str)}
    equal = [v for v in values if v.lower() == target]
    if len(equal) == 1:
        return LiteralFix(b, equal[0], safe=True)
    containing = [v for v in values if target in v.lower()]
    if not equal and len(containing) == 1:
        return LiteralFix(b, containing[0], safe=False)
    return None


def rank_stored(value: str, stored: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The closest `MAX_SUGGESTIONS` distinct stored values, most similar first."""
    target = value.lower()
    unique: dict[str, tuple[str, Any]] = {}
    for label, v in stored:
        unique.setdefault(f"{label}\x00{v!r}", (label, v))

    def score(item: tuple[str, Any]) -> tuple[float, int, str]:
        text = str(item[1]).lower()
        return (-difflib.SequenceMatcher(None, target, text).ratio(), len(text), text)

    return sorted(unique.values(), key=score)[:MAX_SUGGESTIONS]


def literal_note(b: Binding, stored: list[tuple[str, Any]]) -> str:
    """DESIGN §6 wording: what is stored instead, or that nothing similar is."""
    head = f"{cypher_literal(b.value)} is not stored on {b.where}"
    if not stored:
        return f"{head}; no similar value — reconsider the property or label"
    if b.labels:
        shown = ", ".join(cypher_literal(v) for _, v in stored)
    else:
        shown = ", ".join(f"{label}.{b.prop} {cypher_literal(v)}" for label, v in stored)
    return f"{head}; stored: {shown} — copy it exactly"


def cypher_literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)
