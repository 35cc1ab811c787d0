"""Pattern facts the schema rules share: which paths are checked, the labels an endpoint may
carry, the types a relationship admits, and how an arrow is flipped."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import NamedTuple

from query_guard.cypher import ast
from query_guard.cypher.query import CypherQuery
from query_guard.model import Edit
from query_guard.schema.catalog import SchemaCatalog

_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class Hop(NamedTuple):
    """One relationship with its two endpoint node patterns, as checked by the schema rules (a
    named tuple: made for every hop of every query, in a fraction of a frozen dataclass's time)."""

    left: ast.NodePattern
    rel: ast.RelPattern
    right: ast.NodePattern
    variable_length: bool  # `*…`, a quantifier, or inside a quantified path


def read_hops(query: CypherQuery) -> list[Hop]:
    """Every hop the schema rules look at: patterns that *match* (MATCH, OPTIONAL MATCH,
    WHERE, EXISTS/COUNT/COLLECT, CALL subqueries, pattern comprehensions, every UNION branch)
    — not the patterns of CREATE / MERGE, which describe data to be written. Computed once
    per query and shared by the rules."""
    return query.memo("hops", lambda: _hops(query))  # type: ignore[return-value]


def _hops(query: CypherQuery) -> list[Hop]:
    written = query.written()
    quantified: set[int] = set()
    for qpp in query.find(ast.QuantifiedPath):
        if qpp.quantifier is not None:
            quantified.update(id(p) for p in qpp.inner.find_all(ast.PathPattern))
    hops = []
    for path in query.paths():
        if id(path) in written:
            continue
        for left, rel, right in path.triples():
            varlen = id(path) in quantified or rel.length is not None or rel.quantifier is not None
            hops.append(Hop(left, rel, right, varlen))
    return hops


def endpoint_labels(query: CypherQuery, node: ast.NodePattern) -> frozenset[str]:
    """Labels the endpoint may carry: every positive name in its own label expression (any of
    them may satisfy the schema) plus what its variable is known to carry in the scope."""
    labels = node.labels
    if labels is None or type(labels) is ast.LabelName:  # the common cases: none, one label
        return query.scopes.labels(node)  # holds the node's own plain label
    return frozenset(positive_names(labels)) | query.scopes.labels(node)


def positive_names(expr: ast.LabelExpr | None) -> Iterator[str]:
    if expr is None:
        return
    if isinstance(expr, ast.LabelName):
        yield expr.name
    elif isinstance(expr, (ast.LabelOr, ast.LabelAnd)):
        for item in expr.items:
            yield from positive_names(item)


def type_names(expr: ast.LabelExpr | None) -> Iterator[ast.LabelName]:
    """Every relationship type name written in a type expression (negated ones included)."""
    if expr is not None:
        yield from expr.find_all(ast.LabelName)


def admissible_types(expr: ast.LabelExpr | None, schema: SchemaCatalog) -> set[str] | None:
    """Declared types the relationship may have; None when the expression cannot be judged
    (a conjunction of types matches nothing and is left alone)."""
    if isinstance(expr, ast.LabelName):  # the common case, without building `declared`
        return {expr.name} if schema.has_type(expr.name) else set()
    declared = set(schema.relationship_types)
    negated = False
    while isinstance(expr, ast.LabelNot):  # a loop: `!!!…A` is as deep as it is long
        negated, expr = not negated, expr.item
    if negated:
        sub = admissible_types(expr, schema)
        return None if sub is None else declared - sub
    if expr is None or isinstance(expr, ast.LabelWildcard):
        return declared
    if isinstance(expr, ast.LabelName):
        return {expr.name} & declared
    if isinstance(expr, ast.LabelOr):
        out: set[str] = set()
        for item in expr.items:
            sub = admissible_types(item, schema)
            if sub is None:
                return None
            out |= sub
        return out
    return None


def flip_edits(rel: ast.RelPattern) -> tuple[Edit, ...]:
    """Edits that reverse a directed relationship's arrow, keeping everything between."""
    if rel.direction == "out":
        return (Edit(*rel.left_span, "<-"), Edit(*rel.right_span, "-"))
    if rel.direction == "in":
        return (Edit(*rel.left_span, "-"), Edit(*rel.right_span, "->"))
    raise ValueError("an undirected relationship has no direction to flip")


def arrow(direction: str) -> str:
    return {"out": "-[]->", "in": "<-[]-", "both": "-[]-"}[direction]


def quote_name(name: str) -> str:
    """A label / type / key as Cypher source: backticked unless it is a plain identifier."""
    if _PLAIN_NAME.match(name):
        return name
    return "`" + name.replace("`", "``") + "`"


def closest(name: str, candidates: frozenset[str] | set[str] | list[str]) -> str | None:
    """The most similar declared name (case-insensitive, separators ignored), if any is close."""
    if not candidates:
        return None
    norm = {_norm(c): c for c in sorted(candidates)}
    match = difflib.get_close_matches(_norm(name), list(norm), n=1, cutoff=0.5)
    return norm[match[0]] if match else None


def similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, _norm(a), _norm(b)).ratio()


def _norm(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "").replace(" ", "")
