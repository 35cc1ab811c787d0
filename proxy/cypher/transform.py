"""lark callbacks -> typed Cypher AST (proxy/cypher/ast.py): clauses and queries.

`CypherBuilder` is passed to lark as its inline transformer, so the AST is built during the
LALR parse without an intermediate tree. Expression callbacks live in transform_expr.py,
pattern callbacks in transform_pattern.py, SHOW commands in transform_show.py. Every node's
span comes from the tokens of its rule (the parser keeps all tokens).
"""

from __future__ import annotations

from typing import Any

from lark import Token, Transformer, Tree

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
from query_guard.cypher.build_parts import (
    BuildError,
    Part,
    ex,
    exprs,
    has,
    span_of,
    tok_span,
)
from query_guard.cypher.transform_expr import ExprBuilder
from query_guard.cypher.transform_pattern import PatternBuilder
from query_guard.cypher.transform_schema import SchemaBuilder
from query_guard.cypher.transform_show import ShowBuilder

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


class CypherBuilder(SchemaBuilder, ShowBuilder, PatternBuilder, ExprBuilder, Transformer):
    """Inline transformer for grammars/cypher.lark; stateless, so one instance serves all."""

    def __default__(self, data: str, children: list[Any], meta: Any) -> Any:
        if data.startswith("_"):  # lark's helper rules for `x+` / `x*`, spliced into the parent
            return Tree(data, children, meta)
        raise BuildError(f"internal: no builder for rule {data!r}", span_of(children))

    # ---------------------------------------------------------------- script and queries

    def start(self, c: list[Any]) -> Script:
        statements = [x for x in c if not isinstance(x, Token)]
        return Script(span_of(c), statements)

    def explain(self, c: list[Any]) -> Query:
        query = c[1]
        first = query if isinstance(query, SingleQuery) else query.branches[0]
        first.clauses.insert(0, OtherClause(tok_span(c[0]), c[0].value.upper()))
        first.span = (c[0].start_pos, first.span[1])
        query.span = span_of(c)
        return query

    def query(self, c: list[Any]) -> Query:
        if len(c) == 1:
            return c[0]
        branches = [x for x in c if isinstance(x, SingleQuery)]
        flags = [x.value for x in c if type(x) is Part]
        return UnionQuery(span_of(c), branches, flags)

    def union_op(self, c: list[Any]) -> Part:
        return Part("union", c[1] is not None and c[1].type == "ALL", span_of(c))

    def single_query(self, c: list[Any]) -> SingleQuery:
        return SingleQuery(span_of(c), list(c))

    def schema_command(self, c: list[Any]) -> SingleQuery:
        """An admin command, wrapped as a one-clause query so statements stay Query-typed."""
        words = [t.value.upper() for t in c if isinstance(t, Token) and t.type != "SCHEMA_REST"]
        rest = c[-1] if isinstance(c[-1], Token) and c[-1].type == "SCHEMA_REST" else None
        if rest is not None:
            for word in rest.value.split()[:3]:
                if word.upper() not in _ADMIN_WORDS:
                    break
                words.append(word.upper())
        span = span_of(c)
        return SingleQuery(span, [SchemaCommand(span, " ".join(words))])

    # ---------------------------------------------------------------- reading clauses

    def where(self, c: list[Any]) -> Expr:
        return ex(c[1])

    def match_clause(self, c: list[Any]) -> Match:
        return Match(span_of(c), c[0] is not None, c[2].value, c[3])

    def unwind_clause(self, c: list[Any]) -> Unwind:
        return Unwind(span_of(c), ex(c[1]), c[3])

    def finish_clause(self, c: list[Any]) -> OtherClause:
        return OtherClause(span_of(c), "FINISH")

    def use_clause(self, c: list[Any]) -> OtherClause:
        return OtherClause(span_of(c), "USE", [ex(c[1])])

    # ---------------------------------------------------------------- projections

    def projection_item(self, c: list[Any]) -> ProjectionItem:
        return ProjectionItem(span_of(c), ex(c[0]), c[2])

    def projection_items(self, c: list[Any]) -> Part:
        star = isinstance(c[0], Token) and c[0].type == "STAR"
        items = [x for x in c if isinstance(x, ProjectionItem)]
        return Part("items", (star, items), span_of(c))

    def sort_item(self, c: list[Any]) -> SortItem:
        desc = c[1] is not None and c[1].type.startswith("DESC")
        return SortItem(span_of(c), ex(c[0]), desc)

    def order_by(self, c: list[Any]) -> Part:
        return Part("order", [x for x in c if isinstance(x, SortItem)], span_of(c))

    def skip(self, c: list[Any]) -> Expr:
        return ex(c[1])

    limit = skip

    def projection_body(self, c: list[Any]) -> Part:
        star, items = c[1].value
        order = c[2].value if c[2] is not None else []
        return Part("projection", (c[0] is not None, star, items, order, c[3], c[4]), span_of(c))

    def with_clause(self, c: list[Any]) -> With:
        return With(span_of(c), *c[1].value, where=c[2])

    def return_clause(self, c: list[Any]) -> Return:
        return Return(span_of(c), *c[1].value)

    # ---------------------------------------------------------------- writing clauses

    def create_clause(self, c: list[Any]) -> Create:
        return Create(span_of(c), c[1].value)

    def merge_action(self, c: list[Any]) -> SetClause:
        return SetClause(span_of(c), [x for x in c if not isinstance(x, Token)])

    def merge_clause(self, c: list[Any]) -> Merge:
        return Merge(span_of(c), c[1], [x for x in c[2:] if isinstance(x, SetClause)])

    def set_assign(self, c: list[Any]) -> BinaryOp:
        return BinaryOp(span_of(c), c[1].value, ex(c[0]), ex(c[2]), tok_span(c[1]))

    def set_labels(self, c: list[Any]) -> LabelCheck:
        return LabelCheck(span_of(c), c[0], c[1])

    def set_clause(self, c: list[Any]) -> SetClause:
        return SetClause(span_of(c), [x for x in c if not isinstance(x, Token)])

    def remove_property(self, c: list[Any]) -> Expr:
        return ex(c[0])

    def remove_clause(self, c: list[Any]) -> Remove:
        return Remove(span_of(c), [x for x in c if not isinstance(x, Token)])

    def delete_clause(self, c: list[Any]) -> Delete:
        return Delete(span_of(c), c[0] is not None, exprs(c))

    def foreach_clause(self, c: list[Any]) -> Foreach:
        clauses = [x for x in c[6:] if isinstance(x, Clause)]
        return Foreach(span_of(c), c[2], ex(c[4]), clauses)

    def load_csv_clause(self, c: list[Any]) -> LoadCsv:
        types = [x.type if isinstance(x, Token) else None for x in c]
        source = ex(c[types.index("FROM") + 1])
        variable = c[types.index("AS") + 1]
        return LoadCsv(span_of(c), has(c, "HEADERS"), source, variable)

    # ---------------------------------------------------------------- CALL

    def procedure_name(self, c: list[Any]) -> Part:
        names = [x.value for x in c if type(x) is Part]
        return Part("procedure", ".".join(names), span_of(c))

    def yield_item(self, c: list[Any]) -> ProjectionItem:
        name: Part = c[0]
        return ProjectionItem(span_of(c), Variable(name.span, name.value), c[2])

    def yield_clause(self, c: list[Any]) -> Part:
        items = [x for x in c if isinstance(x, ProjectionItem)]
        where = c[-1] if len(c) > 2 and not isinstance(c[-1], (Token, ProjectionItem)) else None
        return Part("yield", (has(c, "STAR"), items, where), span_of(c))

    def call_clause(self, c: list[Any]) -> CallProcedure:
        name: Part = c[1]
        args = exprs(c[2:]) if has(c, "LPAR") else None
        star, items, where = (False, [], None)
        if type(c[-1]) is Part:
            star, items, where = c[-1].value
        return CallProcedure(span_of(c), name.value, name.span, args, items, star, where)

    def call_scope(self, c: list[Any]) -> Part:
        return Part(
            "scope", (has(c, "STAR"), [x for x in c if isinstance(x, Variable)]), span_of(c)
        )

    def in_transactions(self, c: list[Any]) -> Part:
        return Part("tx", True, span_of(c))

    def on_error(self, c: list[Any]) -> Part:
        return Part("on_error", c[2].value.upper(), span_of(c))

    def report_status(self, c: list[Any]) -> Part:
        return Part("report", c[3], span_of(c))

    def call_subquery(self, c: list[Any]) -> CallSubquery:
        scope: Part | None = c[2]
        imports = None if scope is None else scope.value[1]
        import_all = scope is not None and scope.value[0]
        return CallSubquery(span_of(c), c[4], imports, c[6] is not None, import_all)
