"""lark callbacks -> typed Cypher AST (proxy/cypher/ast.py): scripts, queries and clauses.

One family of the AST builder's rules (builders.py assembles the families into lark's inline
transformer): each callback declares the shape of its rule's children and reads them by name
(build_children.py). Every node's span comes from the tokens of its rule (the parser keeps all
tokens).
"""

from __future__ import annotations

from lark import Token

from query_guard.cypher.ast import (
    BinaryOp,
    CallProcedure,
    CallSubquery,
    Clause,
    Create,
    Delete,
    Expr,
    Foreach,
    LabelCheck,
    LoadCsv,
    Match,
    Merge,
    OtherClause,
    ProjectionItem,
    Query,
    Remove,
    Return,
    SchemaCommand,
    Script,
    SetClause,
    SingleQuery,
    SortItem,
    UnionQuery,
    Unwind,
    Variable,
    With,
)
from query_guard.cypher.build_children import Children, Rules
from query_guard.cypher.build_parts import Part, ex, exprs, has, tok_span

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


@rule("start", "*statements")
def start(c: Children) -> Script:
    return Script(c.span, [x for x in c.statements if not isinstance(x, Token)])


@rule("explain", "word=EXPLAIN|PROFILE query=query|create_index|create_constraint|drop_schema")
def explain(c: Children) -> Query:
    query, word = c.query, c.word
    first = query if isinstance(query, SingleQuery) else query.branches[0]
    first.clauses.insert(0, OtherClause(tok_span(word), word.value.upper()))
    first.span = (word.start_pos, first.span[1])
    query.span = c.span
    return query


@rule("query", "first=single_query *unions")
def query(c: Children) -> Query:
    if not c.unions:
        return c.first
    branches = [x for x in c if isinstance(x, SingleQuery)]
    flags = [x.value for x in c if type(x) is Part]
    return UnionQuery(c.span, branches, flags)


@rule("union_op", "UNION all=ALL|DISTINCT?")
def union_op(c: Children) -> Part:
    return Part("union", c.all is not None and c.all.type == "ALL", c.span)


@rule("single_query", "*clauses")
def single_query(c: Children) -> SingleQuery:
    return SingleQuery(c.span, list(c.clauses))


@rule("schema_command", "*words")
def schema_command(c: Children) -> SingleQuery:
    """An admin command, wrapped as a one-clause query so statements stay Query-typed."""
    words = [t.value.upper() for t in c.words if isinstance(t, Token) and t.type != "SCHEMA_REST"]
    rest = next((t for t in c.words if isinstance(t, Token) and t.type == "SCHEMA_REST"), None)
    if rest is not None:
        for word in rest.value.split()[:3]:
            if word.upper() not in _ADMIN_WORDS:
                break
            words.append(word.upper())
    span = c.span
    return SingleQuery(span, [SchemaCommand(span, " ".join(words))])


# ---------------------------------------------------------------- reading clauses


@rule("where", "WHERE expr")
def where(c: Children) -> Expr:
    return ex(c.expr)


@rule("match_clause", "optional=OPTIONAL? MATCH pattern where?")
def match_clause(c: Children) -> Match:
    return Match(c.span, c.optional is not None, c.pattern.value, c.where)


@rule("unwind_clause", "UNWIND expr AS variable")
def unwind_clause(c: Children) -> Unwind:
    return Unwind(c.span, ex(c.expr), c.variable)


@rule("finish_clause", "FINISH")
def finish_clause(c: Children) -> OtherClause:
    return OtherClause(c.span, "FINISH")


@rule("use_clause", "USE expr")
def use_clause(c: Children) -> OtherClause:
    return OtherClause(c.span, "USE", [ex(c.expr)])


# ---------------------------------------------------------------- projections


@rule("projection_item", "expr AS? variable?")
def projection_item(c: Children) -> ProjectionItem:
    return ProjectionItem(c.span, ex(c.expr), c.variable)


@rule("projection_items", "*items")
def projection_items(c: Children) -> Part:
    items = [x for x in c.items if isinstance(x, ProjectionItem)]
    return Part("items", (has(c.items, "STAR"), items), c.span)


@rule("sort_item", "expr direction=sort_dir?")
def sort_item(c: Children) -> SortItem:
    desc = c.direction is not None and c.direction.type.startswith("DESC")
    return SortItem(c.span, ex(c.expr), desc)


@rule("order_by", "ORDER BY *items")
def order_by(c: Children) -> Part:
    return Part("order", [x for x in c.items if isinstance(x, SortItem)], c.span)


@rule("skip", "SKIP|OFFSET expr")
def skip(c: Children) -> Expr:
    return ex(c.expr)


@rule("limit", "LIMIT expr")
def limit(c: Children) -> Expr:
    return ex(c.expr)


@rule("projection_body", "distinct=DISTINCT? items=projection_items order=order_by? skip? limit?")
def projection_body(c: Children) -> Part:
    star, items = c.items.value
    order = c.order.value if c.order is not None else []
    distinct = c.distinct is not None
    return Part("projection", (distinct, star, items, order, c.skip, c.limit), c.span)


@rule("with_clause", "WITH body=projection_body where?")
def with_clause(c: Children) -> With:
    return With(c.span, *c.body.value, where=c.where)


@rule("return_clause", "RETURN body=projection_body")
def return_clause(c: Children) -> Return:
    return Return(c.span, *c.body.value)


# ---------------------------------------------------------------- writing clauses


@rule("create_clause", "CREATE pattern")
def create_clause(c: Children) -> Create:
    return Create(c.span, c.pattern.value)


@rule("merge_action", "ON MATCH|CREATE SET *items")
def merge_action(c: Children) -> SetClause:
    return SetClause(c.span, [x for x in c.items if not isinstance(x, Token)])


@rule("merge_clause", "MERGE pattern_part *actions")
def merge_clause(c: Children) -> Merge:
    return Merge(c.span, c.pattern_part, [x for x in c.actions if isinstance(x, SetClause)])


@rule("set_assign", "target=postfix_expr op=EQ|PLUS_EQ value=expr")
def set_assign(c: Children) -> BinaryOp:
    return BinaryOp(c.span, c.op.value, ex(c.target), ex(c.value), tok_span(c.op))


@rule("set_labels", "variable node_labels")
def set_labels(c: Children) -> LabelCheck:
    return LabelCheck(c.span, c.variable, c.node_labels)


@rule("set_clause", "SET *items")
def set_clause(c: Children) -> SetClause:
    return SetClause(c.span, [x for x in c.items if not isinstance(x, Token)])


@rule("remove_property", "postfix_expr")
def remove_property(c: Children) -> Expr:
    return ex(c.postfix_expr)


@rule("remove_clause", "REMOVE *items")
def remove_clause(c: Children) -> Remove:
    return Remove(c.span, [x for x in c.items if not isinstance(x, Token)])


@rule("delete_clause", "detach=DETACH? DELETE *items")
def delete_clause(c: Children) -> Delete:
    return Delete(c.span, c.detach is not None, exprs(c.items))


@rule("foreach_clause", "FOREACH LPAR variable IN expr BAR *clauses RPAR")
def foreach_clause(c: Children) -> Foreach:
    clauses = [x for x in c.clauses if isinstance(x, Clause)]
    return Foreach(c.span, c.variable, ex(c.expr), clauses)


@rule(
    "load_csv_clause",
    "LOAD CSV WITH? HEADERS? FROM source=expr AS variable FIELDTERMINATOR? STRING?",
)
def load_csv_clause(c: Children) -> LoadCsv:
    return LoadCsv(c.span, c.headers is not None, ex(c.source), c.variable)


# ---------------------------------------------------------------- CALL


@rule("procedure_name", "*names")
def procedure_name(c: Children) -> Part:
    names = [x.value for x in c.names if type(x) is Part]
    return Part("procedure", ".".join(names), c.span)


@rule("yield_item", "name=symbolic_name AS? variable?")
def yield_item(c: Children) -> ProjectionItem:
    name: Part = c.name
    return ProjectionItem(c.span, Variable(name.span, name.value), c.variable)


@rule("yield_all", "YIELD STAR")
def yield_all(c: Children) -> Part:
    return Part("yield", (True, [], None), c.span)


@rule("yield_clause", "YIELD *items where?")
def yield_clause(c: Children) -> Part:
    items = [x for x in c.items if isinstance(x, ProjectionItem)]
    return Part("yield", (False, items, c.where), c.span)


@rule("call_clause", "CALL name=procedure_name lpar=LPAR? *args RPAR? yields=yield_clause?")
def call_clause(c: Children) -> CallProcedure:
    name: Part = c.name
    args = exprs(c.args) if c.lpar is not None else None
    star, items, where = (False, [], None) if c.yields is None else c.yields.value
    return CallProcedure(c.span, name.value, name.span, args, items, star, where)


@rule("call_scope", "LPAR *items RPAR")
def call_scope(c: Children) -> Part:
    variables = [x for x in c.items if isinstance(x, Variable)]
    return Part("scope", (has(c.items, "STAR"), variables), c.span)


@rule(
    "in_transactions",
    "IN batch=expr? CONCURRENT? TRANSACTIONS OF? rows=expr? ROW|ROWS? on_error? report_status?",
)
def in_transactions(c: Children) -> Part:
    return Part("tx", True, c.span)


@rule("on_error", "ON ERROR action=CONTINUE|BREAK|FAIL")
def on_error(c: Children) -> Part:
    return Part("on_error", c.action.value.upper(), c.span)


@rule("report_status", "REPORT STATUS AS variable")
def report_status(c: Children) -> Part:
    return Part("report", c.variable, c.span)


@rule(
    "call_subquery",
    "optional=OPTIONAL? CALL scope=call_scope? LBRACE query RBRACE tx=in_transactions?",
)
def call_subquery(c: Children) -> CallSubquery:
    scope: Part | None = c.scope
    imports = None if scope is None else scope.value[1]
    import_all = scope is not None and scope.value[0]
    return CallSubquery(c.span, c.query, imports, c.tx is not None, import_all)
