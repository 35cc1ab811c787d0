"""The Cypher AST builder: every family's callbacks in one table, handed to lark as its inline
transformer, and checked against the compiled grammar when the parser is built.

Families (one module each, each a `RULES` table of rule name -> builder with a declared shape):
queries and reading clauses (transform.py), writing clauses and CALL (transform_clauses.py),
expressions (transform_expr.py), lists, maps, CASE and subqueries (transform_collections.py),
label expressions (transform_labels.py), patterns (transform_pattern.py), index and constraint
commands (transform_schema.py), SHOW / TERMINATE (transform_show.py). No mixins: the tables are
merged, a rule claimed twice is an error. lark calls a callback by rule name (or alias) with its
own child list; lark's splice rules (`_name`, `x*`, `x+`) have none and become Trees that lark
splices into their parent.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import SimpleNamespace

from lark.grammar import Rule

from query_guard.cypher import (
    transform,
    transform_clauses,
    transform_collections,
    transform_cypher25,
    transform_expr,
    transform_labels,
    transform_match,
    transform_pattern,
    transform_predicates,
    transform_schema,
    transform_show,
)
from query_guard.cypher.build_children import check_shapes, merge

TABLE = merge(
    transform.RULES,
    transform_clauses.RULES,
    transform_collections.RULES,
    transform_cypher25.RULES,
    transform_expr.RULES,
    transform_labels.RULES,
    transform_match.RULES,
    transform_pattern.RULES,
    transform_predicates.RULES,
    transform_schema.RULES,
    transform_show.RULES,
)


def transformer() -> SimpleNamespace:
    """lark's inline transformer: an object whose attribute per rule name is its callback."""
    return SimpleNamespace(**{name: b.build for name, b in TABLE.items()})


def check_grammar(rules: Iterable[Rule]) -> None:
    """Raise ValueError naming every rule whose callback and grammar disagree."""
    check_shapes(rules, TABLE)
