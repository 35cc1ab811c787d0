"""lark callbacks -> typed Cypher AST for the Cypher 25 additions (Neo4j 2025+).

`FILTER [WHERE] p` is `WITH * WHERE p`, `LET x = e, …` is `WITH *, e AS x, …`, and a standalone
`ORDER BY` / `SKIP` / `OFFSET` / `LIMIT` clause is `WITH *` with that part: each builds the With
node Cypher defines it as, so scopes and rules judge it like the WITH they know. A conditional
query `WHEN … THEN … ELSE …` is one Conditional clause, a sequential query `… NEXT …` one
NextChain clause; `CYPHER 25 …` (or `CYPHER 5`) keeps
its version as an OtherClause "CYPHER <n>" in front of the statement's first clause.
Whether the database speaks Cypher 25 is [guard] cypher_version (plugins/cypher_version.py).
"""

from __future__ import annotations

from typing import Any

from query_guard.cypher.ast import (
    Expr,
    OtherClause,
    ProjectionItem,
    Query,
    SingleQuery,
    UnionQuery,
    With,
)
from query_guard.cypher.ast_conditional import Conditional, NextChain
from query_guard.cypher.build_children import Rules
from query_guard.cypher.build_parts import Part, ex, span_of

RULES = Rules()
rule = RULES.rule


def star_with(c: list[Any], **parts: Any) -> With:
    """`WITH *` carrying only the given parts (where, items, order_by, skip, limit)."""
    return With(
        span_of(c), False, True, parts.get("items", []), parts.get("order_by", []),
        parts.get("skip"), parts.get("limit"), where=parts.get("where"),
    )  # fmt: skip


FILTER_CLAUSE = rule("filter_clause", "FILTER WHERE? expr")


@FILTER_CLAUSE
def filter_clause(c: list[Any]) -> With:
    return star_with(c, where=ex(c[FILTER_CLAUSE.expr]))


LET_ITEM = rule("let_item", "variable EQ expr")


@LET_ITEM
def let_item(c: list[Any]) -> ProjectionItem:
    return ProjectionItem(span_of(c), ex(c[LET_ITEM.expr]), c[LET_ITEM.variable])


LET_CLAUSE = rule("let_clause", "LET *items")


@LET_CLAUSE
def let_clause(c: list[Any]) -> With:
    items = [x for x in c[LET_CLAUSE.items] if isinstance(x, ProjectionItem)]
    return star_with(c, items=items)


ORDER_CLAUSE = rule("order_clause", "order_by")


@ORDER_CLAUSE
def order_clause(c: list[Any]) -> With:
    return star_with(c, order_by=c[ORDER_CLAUSE.order_by].value)


SKIP_CLAUSE = rule("skip_clause", "skip")


@SKIP_CLAUSE
def skip_clause(c: list[Any]) -> With:
    return star_with(c, skip=c[SKIP_CLAUSE.skip])


LIMIT_CLAUSE = rule("limit_clause", "limit")


@LIMIT_CLAUSE
def limit_clause(c: list[Any]) -> With:
    return star_with(c, limit=c[LIMIT_CLAUSE.limit])


WHEN_BRANCH = rule("when_branch", "WHEN expr THEN *body")


@WHEN_BRANCH
def when_branch(c: list[Any]) -> Part:
    body = next(x for x in c[WHEN_BRANCH.body] if isinstance(x, (SingleQuery, UnionQuery)))
    return Part("when", (ex(c[WHEN_BRANCH.expr]), body), span_of(c))


ELSE_BRANCH = rule("else_branch", "ELSE *body")


@ELSE_BRANCH
def else_branch(c: list[Any]) -> Part:
    body = next(x for x in c[ELSE_BRANCH.body] if isinstance(x, (SingleQuery, UnionQuery)))
    return Part("else", body, span_of(c))


CONDITIONAL_QUERY = rule("conditional_query", "*branches")


@CONDITIONAL_QUERY
def conditional_query(c: list[Any]) -> SingleQuery:
    conditions: list[Expr] = []
    branches: list[Query] = []
    for part in c[CONDITIONAL_QUERY.branches]:
        if isinstance(part, Part) and part.kind == "when":
            conditions.append(part.value[0])
            branches.append(part.value[1])
        elif isinstance(part, Part):
            branches.append(part.value)
    span = span_of(c)
    return SingleQuery(span, [Conditional(span, conditions, branches)])


SEQUENTIAL_QUERY = rule("sequential_query", "*parts")


@SEQUENTIAL_QUERY
def sequential_query(c: list[Any]) -> SingleQuery:
    """`q1 NEXT q2 …`: one NextChain clause holding the parts in order."""
    parts = [x for x in c[SEQUENTIAL_QUERY.parts] if isinstance(x, (SingleQuery, UnionQuery))]
    span = span_of(c)
    return SingleQuery(span, [NextChain(span, parts)])


CYPHER_PREFIXED = rule(
    "cypher_prefixed",
    "word=CYPHER version=INTEGER "
    "query=plain_statement|query|schema_command|create_index|create_constraint|drop_schema"
    "|show_command|explain",
)


@CYPHER_PREFIXED
def cypher_prefixed(c: list[Any]) -> Query:
    query, word = c[CYPHER_PREFIXED.query], c[CYPHER_PREFIXED.word]
    version = c[CYPHER_PREFIXED.version]
    first = query if isinstance(query, SingleQuery) else query.branches[0]
    span = (word.start_pos, version.end_pos)
    first.clauses.insert(0, OtherClause(span, f"CYPHER {version.value}"))
    first.span = (word.start_pos, first.span[1])
    query.span = span_of(c)
    return query
