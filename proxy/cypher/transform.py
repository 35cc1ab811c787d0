"""lark callbacks -> typed Cypher AST (proxy/cypher/ast.py): scripts, queries and clauses.

One family of the AST builder's rules (builders.py assembles the families into lark's inline
transformer): each callback declares the shape of its rule's children and reads them by name
(build_children.py). Every node's span comes from the tokens of its rule (the parser keeps all
tokens).
"""

from __future__ import annotations

from typing import Any

from lark import Token

from query_guard.cypher.ast import (
    Expr,
    OtherClause,
    ProjectionItem,
    Query,
    Return,
    SchemaCommand,
    Script,
    SingleQuery,
    SortItem,
    UnionQuery,
    Unwind,
    With,
)
from query_guard.cypher.build_children import Rules
from query_guard.cypher.build_parts import Paren, Part, ex, span_of, tok_span

# words that continue the kind of an admin command: `SHOW ALL INDEXES`, `CREATE TEXT INDEX`
_ADMIN_WORDS = frozenset(
    [
        "ALL",
        "ALIAS",
        "ALIASES",
        "BTREE",
        "COMPOSITE",
        "CONSTRAINT",
        "CONSTRAINTS",
        "CURRENT",
        "DATABASE",
        "DATABASES",
        "DEFAULT",
        "EXISTENCE",
        "FULLTEXT",
        "FUNCTIONS",
        "HOME",
        "INDEX",
        "INDEXES",
        "KEY",
        "LOOKUP",
        "NODE",
        "POINT",
        "PRIVILEGES",
        "PROCEDURES",
        "PROPERTY",
        "RANGE",
        "RELATIONSHIP",
        "ROLE",
        "ROLES",
        "SERVER",
        "SERVERS",
        "SETTINGS",
        "TEXT",
        "TRANSACTIONS",
        "UNIQUE",
        "USER",
        "USERS",
        "VECTOR",
    ]
)


RULES = Rules()
rule = RULES.rule

# ---------------------------------------------------------------- script and queries


START = rule("start", "*statements")


@START
def start(c: list[Any]) -> Script:
    if len(c) == 1:  # one statement, no `;`
        (only,) = c
        return Script(only.span, [only])
    return Script(span_of(c), [x for x in c[START.statements] if not isinstance(x, Token)])


EXPLAIN = rule(
    "explain",
    "word=EXPLAIN|PROFILE query=next_query|create_index|create_constraint|drop_schema|show_command",
)


@EXPLAIN
def explain(c: list[Any]) -> Query:
    query, word = c[EXPLAIN.query], c[EXPLAIN.word]
    first = query if isinstance(query, SingleQuery) else query.branches[0]
    first.clauses.insert(0, OtherClause(tok_span(word), word.value.upper()))
    first.span = (word.start_pos, first.span[1])
    query.span = span_of(c)
    return query


QUERY = rule("query", "first=single_query *unions")


@QUERY
def query(c: list[Any]) -> Query:
    if len(c) == 1:  # no UNION
        return c[QUERY.first]  # type: ignore[no-any-return]
    branches = [x for x in c if isinstance(x, SingleQuery)]
    flags = [x.value for x in c if type(x) is Part]
    return UnionQuery(span_of(c), branches, flags)


UNION_OP = rule("union_op", "UNION all=ALL|DISTINCT?")


@UNION_OP
def union_op(c: list[Any]) -> Part:
    return Part("union", c[UNION_OP.all] is not None and c[UNION_OP.all].type == "ALL", span_of(c))


SINGLE_QUERY = rule("single_query", "*clauses")


@SINGLE_QUERY
def single_query(c: list[Any]) -> SingleQuery:
    clauses = c[SINGLE_QUERY.clauses]  # clause nodes, in a list of their own (a slice)
    return SingleQuery((clauses[0].span[0], clauses[-1].span[1]), clauses)


SCHEMA_COMMAND = rule("schema_command", "*words")


@SCHEMA_COMMAND
def schema_command(c: list[Any]) -> SingleQuery:
    """An admin command, wrapped as a one-clause query so statements stay Query-typed."""
    words = [
        t.value.upper()
        for t in c[SCHEMA_COMMAND.words]
        if isinstance(t, Token) and t.type != "SCHEMA_REST"
    ]
    rest = next(
        (t for t in c[SCHEMA_COMMAND.words] if isinstance(t, Token) and t.type == "SCHEMA_REST"),
        None,
    )
    if rest is not None:
        for word in rest.value.split()[:3]:
            if word.upper() not in _ADMIN_WORDS:
                break
            words.append(word.upper())
    span = span_of(c)
    return SingleQuery(span, [SchemaCommand(span, " ".join(words))])


# ---------------------------------------------------------------- reading clauses


WHERE = rule("where", "WHERE expr")


@WHERE
def where(c: list[Any]) -> Expr:
    return ex(c[WHERE.expr])


UNWIND_CLAUSE = rule("unwind_clause", "UNWIND expr AS variable")


@UNWIND_CLAUSE
def unwind_clause(c: list[Any]) -> Unwind:
    return Unwind(span_of(c), ex(c[UNWIND_CLAUSE.expr]), c[UNWIND_CLAUSE.variable])


FINISH_CLAUSE = rule("finish_clause", "FINISH")


@FINISH_CLAUSE
def finish_clause(c: list[Any]) -> OtherClause:
    return OtherClause(span_of(c), "FINISH")


USE_CLAUSE = rule("use_clause", "USE expr")


@USE_CLAUSE
def use_clause(c: list[Any]) -> OtherClause:
    return OtherClause(span_of(c), "USE", [ex(c[USE_CLAUSE.expr])])


# ---------------------------------------------------------------- projections


PROJECTION_ITEM = rule("projection_item", "expr")


@PROJECTION_ITEM
def projection_item(c: list[Any]) -> ProjectionItem:
    expr = c[PROJECTION_ITEM.expr]  # a node or a Paren
    return ProjectionItem(expr.span, expr.expr if type(expr) is Paren else expr, None)


ALIASED_ITEM = rule("aliased_item", "expr AS variable")


@ALIASED_ITEM
def aliased_item(c: list[Any]) -> ProjectionItem:
    expr, alias = c[ALIASED_ITEM.expr], c[ALIASED_ITEM.variable]
    return ProjectionItem((expr.span[0], alias.span[1]), ex(expr), alias)


PROJECTION_ITEMS = rule("projection_items", "*items")


@PROJECTION_ITEMS
def projection_items(c: list[Any]) -> Part:
    if len(c) == 1:
        (only,) = c
        if type(only) is ProjectionItem:  # one item (most projections)
            return Part("items", (False, [only]), only.span)
    every = c[PROJECTION_ITEMS.items]  # `*` (only ever first), items and commas
    items = [x for x in every if type(x) is ProjectionItem]
    first = every[0]
    star = type(first) is not ProjectionItem  # the STAR token
    start = first.start_pos if star else first.span[0]
    end = items[-1].span[1] if items else first.end_pos
    return Part("items", (star, items), (start, end))


SORT_ITEM = rule("sort_item", "expr direction=sort_dir?")


@SORT_ITEM
def sort_item(c: list[Any]) -> SortItem:
    desc = c[SORT_ITEM.direction] is not None and c[SORT_ITEM.direction].type.startswith("DESC")
    return SortItem(span_of(c), ex(c[SORT_ITEM.expr]), desc)


ORDER_BY = rule("order_by", "ORDER BY *items")


@ORDER_BY
def order_by(c: list[Any]) -> Part:
    return Part("order", [x for x in c[ORDER_BY.items] if isinstance(x, SortItem)], span_of(c))


SKIP = rule("skip", "SKIP|OFFSET expr")


@SKIP
def skip(c: list[Any]) -> Expr:
    return ex(c[SKIP.expr])


LIMIT = rule("limit", "LIMIT expr")


@LIMIT
def limit(c: list[Any]) -> Expr:
    return ex(c[LIMIT.expr])


PROJECTION_BODY = rule(
    "projection_body", "distinct=DISTINCT? items=projection_items order=order_by? skip? limit?"
)


def _projection(r: Any, c: list[Any]) -> tuple[bool, bool, list[Any], list[Any]]:
    """(distinct, star, items, order) of a rule `r` with `distinct`, `items` and `order` parts:
    a projection body, or a WITH that ends with its own SKIP or LIMIT."""
    star, items = c[r.items].value
    order = c[r.order].value if c[r.order] is not None else []
    return c[r.distinct] is not None, star, items, order


@PROJECTION_BODY
def projection_body(c: list[Any]) -> Part:
    skip, limit = c[PROJECTION_BODY.skip], c[PROJECTION_BODY.limit]
    distinct, items = c[PROJECTION_BODY.distinct], c[PROJECTION_BODY.items]
    star, listed = items.value
    order = c[PROJECTION_BODY.order]
    # the span: from DISTINCT or the items to the last part present (all nodes or Parts)
    last = limit if limit is not None else skip if skip is not None else order or items
    span = (items.span[0] if distinct is None else distinct.start_pos, last.span[1])
    value = (distinct is not None, star, listed, [] if order is None else order.value)
    return Part("projection", (*value, skip, limit), span)


WITH_CLAUSE = rule("with_clause", "kw=WITH body=projection_body where?")


@WITH_CLAUSE
def with_clause(c: list[Any]) -> With:
    body, where = c[WITH_CLAUSE.body], c[WITH_CLAUSE.where]
    span = (c[WITH_CLAUSE.kw].start_pos, (body if where is None else where).span[1])
    return With(span, *body.value, where=where)


RETURN_CLAUSE = rule("return_clause", "kw=RETURN body=projection_body")


@RETURN_CLAUSE
def return_clause(c: list[Any]) -> Return:
    body = c[RETURN_CLAUSE.body]
    return Return((c[RETURN_CLAUSE.kw].start_pos, body.span[1]), *body.value)


LIMITED_WITH = rule(
    "limited_with",
    "WITH distinct=DISTINCT? items=projection_items order=order_by? skip? limit",
)


@LIMITED_WITH
def limited_with(c: list[Any]) -> With:
    """A WITH whose projection ends with its LIMIT, a standalone paging clause after it."""
    paging = (c[LIMITED_WITH.skip], c[LIMITED_WITH.limit])
    return With(span_of(c), *_projection(LIMITED_WITH, c), *paging)


SKIPPED_WITH = rule(
    "skipped_with", "WITH distinct=DISTINCT? items=projection_items order=order_by? skip"
)


@SKIPPED_WITH
def skipped_with(c: list[Any]) -> With:
    """A WITH whose projection ends with its SKIP, a standalone ORDER BY or SKIP after it."""
    return With(span_of(c), *_projection(SKIPPED_WITH, c), c[SKIPPED_WITH.skip], None)
