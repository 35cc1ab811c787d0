"""lark callbacks -> typed Cypher AST: the writing clauses (CREATE, MERGE, SET, REMOVE, DELETE,
FOREACH, LOAD CSV) and CALL (procedures and subqueries).

One family of the AST builder's rules (assembled in builders.py); children are read by the
names of each rule's declared shape (build_children.py).
"""

from __future__ import annotations

from typing import Any

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
    Merge,
    ProjectionItem,
    Remove,
    SetClause,
    Variable,
)
from query_guard.cypher.ast_call import OptionalCallProcedure, TunedCall
from query_guard.cypher.build_children import Rules
from query_guard.cypher.build_parts import Paren, Part, ex, exprs, has, span_of, tok_span

RULES = Rules()
rule = RULES.rule

# ---------------------------------------------------------------- writing clauses


CREATE_CLAUSE = rule("create_clause", "CREATE pattern")


@CREATE_CLAUSE
def create_clause(c: list[Any]) -> Create:
    return Create(span_of(c), c[CREATE_CLAUSE.pattern].value)


MERGE_ACTION = rule("merge_action", "ON MATCH|CREATE SET *items")


@MERGE_ACTION
def merge_action(c: list[Any]) -> SetClause:
    return SetClause(span_of(c), [x for x in c[MERGE_ACTION.items] if not isinstance(x, Token)])


MERGE_CLAUSE = rule("merge_clause", "MERGE pattern_part *actions")


@MERGE_CLAUSE
def merge_clause(c: list[Any]) -> Merge:
    return Merge(
        span_of(c),
        c[MERGE_CLAUSE.pattern_part],
        [x for x in c[MERGE_CLAUSE.actions] if isinstance(x, SetClause)],
    )


SET_ASSIGN = rule("set_assign", "target=postfix_expr op=EQ|PLUS_EQ value=expr")


@SET_ASSIGN
def set_assign(c: list[Any]) -> BinaryOp:
    return BinaryOp(
        span_of(c),
        c[SET_ASSIGN.op].value,
        ex(c[SET_ASSIGN.target]),
        ex(c[SET_ASSIGN.value]),
        tok_span(c[SET_ASSIGN.op]),
    )


SET_LABELS = rule("set_labels", "variable node_labels")


@SET_LABELS
def set_labels(c: list[Any]) -> LabelCheck:
    return LabelCheck(span_of(c), c[SET_LABELS.variable], c[SET_LABELS.node_labels])


SET_CLAUSE = rule("set_clause", "SET *items")


@SET_CLAUSE
def set_clause(c: list[Any]) -> SetClause:
    return SetClause(span_of(c), [x for x in c[SET_CLAUSE.items] if not isinstance(x, Token)])


REMOVE_PROPERTY = rule("remove_property", "postfix_expr")


@REMOVE_PROPERTY
def remove_property(c: list[Any]) -> Expr:
    return ex(c[REMOVE_PROPERTY.postfix_expr])


REMOVE_CLAUSE = rule("remove_clause", "REMOVE *items")


@REMOVE_CLAUSE
def remove_clause(c: list[Any]) -> Remove:
    return Remove(span_of(c), [x for x in c[REMOVE_CLAUSE.items] if not isinstance(x, Token)])


DELETE_CLAUSE = rule("delete_clause", "detach=DETACH|NODETACH? DELETE *items")


@DELETE_CLAUSE
def delete_clause(c: list[Any]) -> Delete:
    detach = c[DELETE_CLAUSE.detach] is not None and c[DELETE_CLAUSE.detach].type == "DETACH"
    return Delete(span_of(c), detach, exprs(c[DELETE_CLAUSE.items]))


FOREACH_CLAUSE = rule("foreach_clause", "FOREACH LPAR variable IN expr BAR *clauses RPAR")


@FOREACH_CLAUSE
def foreach_clause(c: list[Any]) -> Foreach:
    clauses = [x for x in c[FOREACH_CLAUSE.clauses] if isinstance(x, Clause)]
    return Foreach(span_of(c), c[FOREACH_CLAUSE.variable], ex(c[FOREACH_CLAUSE.expr]), clauses)


LOAD_CSV_CLAUSE = rule(
    "load_csv_clause",
    "LOAD CSV WITH? HEADERS? FROM source=expr AS variable FIELDTERMINATOR? STRING?",
)


@LOAD_CSV_CLAUSE
def load_csv_clause(c: list[Any]) -> LoadCsv:
    return LoadCsv(
        span_of(c),
        c[LOAD_CSV_CLAUSE.headers] is not None,
        ex(c[LOAD_CSV_CLAUSE.source]),
        c[LOAD_CSV_CLAUSE.variable],
    )


# ---------------------------------------------------------------- CALL


PROCEDURE_NAME = rule("procedure_name", "*names")


@PROCEDURE_NAME
def procedure_name(c: list[Any]) -> Part:
    names = [x.value for x in c[PROCEDURE_NAME.names] if type(x) is Part]
    return Part("procedure", ".".join(names), span_of(c))


YIELD_ITEM = rule("yield_item", "name=symbolic_name AS? variable?")


@YIELD_ITEM
def yield_item(c: list[Any]) -> ProjectionItem:
    name: Part = c[YIELD_ITEM.name]
    return ProjectionItem(span_of(c), Variable(name.span, name.value), c[YIELD_ITEM.variable])


YIELD_ALL = rule("yield_all", "YIELD STAR")


@YIELD_ALL
def yield_all(c: list[Any]) -> Part:
    return Part("yield", (True, [], None), span_of(c))


YIELD_CLAUSE = rule("yield_clause", "YIELD *items where?")


@YIELD_CLAUSE
def yield_clause(c: list[Any]) -> Part:
    items = [x for x in c[YIELD_CLAUSE.items] if isinstance(x, ProjectionItem)]
    return Part("yield", (False, items, c[YIELD_CLAUSE.where]), span_of(c))


CALL_CLAUSE = rule(
    "call_clause",
    "optional=OPTIONAL? CALL name=procedure_name lpar=LPAR? *args RPAR? yields=yield_clause?",
)


@CALL_CLAUSE
def call_clause(c: list[Any]) -> CallProcedure:
    name: Part = c[CALL_CLAUSE.name]
    args = exprs(c[CALL_CLAUSE.args]) if c[CALL_CLAUSE.lpar] is not None else None
    star, items, where = (
        (False, [], None) if c[CALL_CLAUSE.yields] is None else c[CALL_CLAUSE.yields].value
    )
    kind = CallProcedure if c[CALL_CLAUSE.optional] is None else OptionalCallProcedure
    return kind(span_of(c), name.value, name.span, args, items, star, where)


CALL_SCOPE = rule("call_scope", "LPAR *items RPAR")


@CALL_SCOPE
def call_scope(c: list[Any]) -> Part:
    variables = [x for x in c[CALL_SCOPE.items] if isinstance(x, Variable)]
    return Part("scope", (has(c[CALL_SCOPE.items], "STAR"), variables), span_of(c))


IN_TRANSACTIONS = rule(
    "in_transactions",
    "IN batch=expr? CONCURRENT? TRANSACTIONS OF? rows=expr? ROW|ROWS? error=on_error? "
    "report_status?",
)


@IN_TRANSACTIONS
def in_transactions(c: list[Any]) -> Part:
    """The batch's concurrency and size expressions (`IN $n CONCURRENT TRANSACTIONS OF $r ROWS`),
    the error mode (action, RETRY's THEN action) and the REPORT STATUS variable's name."""
    batch = [ex(x) for x in (c[IN_TRANSACTIONS.batch], c[IN_TRANSACTIONS.rows]) if x is not None]
    error = c[IN_TRANSACTIONS.error]
    action, then = "", ""
    if error is not None:
        action, duration, then = error.value
        if duration is not None:  # ON ERROR RETRY FOR <duration>
            batch.append(duration)
    report = c[IN_TRANSACTIONS.report_status]
    status = report.value.name if report is not None else None
    return Part("tx", (batch, action, then, status), span_of(c))


ON_ERROR = rule("on_error", "ON ERROR action=CONTINUE|BREAK|FAIL")


@ON_ERROR
def on_error(c: list[Any]) -> Part:
    return Part("on_error", (c[ON_ERROR.action].value.upper(), None, ""), span_of(c))


ON_ERROR_RETRY = rule("on_error_retry", "ON ERROR RETRY *parts")


@ON_ERROR_RETRY
def on_error_retry(c: list[Any]) -> Part:
    """`ON ERROR RETRY [[FOR] n SECONDS] [THEN CONTINUE | BREAK | FAIL]`: the duration kept."""
    parts = c[ON_ERROR_RETRY.parts]
    duration = next((ex(x) for x in parts if isinstance(x, (Expr, Paren))), None)
    then = next((x.value.upper() for x in parts if isinstance(x, Token) and x.type in _ACTIONS), "")
    return Part("on_error", ("RETRY", duration, then), span_of(c))


_ACTIONS = frozenset(["CONTINUE", "BREAK", "FAIL"])


REPORT_STATUS = rule("report_status", "REPORT STATUS AS variable")


@REPORT_STATUS
def report_status(c: list[Any]) -> Part:
    return Part("report", c[REPORT_STATUS.variable], span_of(c))


CALL_SUBQUERY = rule(
    "call_subquery",
    "optional=OPTIONAL? CALL scope=call_scope? LBRACE query=next_query RBRACE tx=in_transactions?",
)


@CALL_SUBQUERY
def call_subquery(c: list[Any]) -> CallSubquery:
    """A CallSubquery, or a TunedCall when OPTIONAL or with an error mode or status report."""
    scope: Part | None = c[CALL_SUBQUERY.scope]
    imports = None if scope is None else scope.value[1]
    import_all = scope is not None and scope.value[0]
    tx: Part | None = c[CALL_SUBQUERY.tx]
    batch, action, then, report = tx.value if tx is not None else ([], "", "", None)
    optional = c[CALL_SUBQUERY.optional] is not None
    span, body, in_tx = span_of(c), c[CALL_SUBQUERY.query], tx is not None
    if optional or action or report is not None:
        return TunedCall(
            span, body, imports, in_tx, import_all, batch, optional, action, then, report
        )
    return CallSubquery(span, body, imports, in_tx, import_all, batch)
