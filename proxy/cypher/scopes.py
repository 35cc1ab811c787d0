"""Variable scopes of a parsed Cypher query: which labels a variable is known to carry where.

`resolve(script_or_query)` walks the AST once and returns a `Scopes` answering
`labels(node_pattern_or_variable)`: the positive, plain labels the variable certainly has in
the scope it occurs in. Facts come from every node pattern of the variable in the same scope
(earlier or later: `MATCH (n)-[:R]->(m) MATCH (n:Person)` makes both `n` Person), from
`WHERE n:Label` conjuncts, and travel through `WITH n` / `WITH n AS m`. A WITH starts a new
scope; UNION branches are independent; `CALL (a) { … }` imports the named variables, a part after
NEXT what the part before returns; subqueries and comprehensions see the outer scope. Pure."""

from __future__ import annotations

from query_guard.cypher.ast import (
    BinaryOp,
    CallProcedure,
    CallSubquery,
    Create,
    Delete,
    Expr,
    Foreach,
    FunctionCall,
    LabelCheck,
    ListComprehension,
    LoadCsv,
    Match,
    Merge,
    Node,
    NodePattern,
    OtherClause,
    OtherExpr,
    PathPattern,
    PatternComprehension,
    PatternPredicate,
    Projection,
    PropertyLookup,
    QuantifiedPath,
    Query,
    RelPattern,
    Remove,
    Return,
    Script,
    SetClause,
    ShowCommand,
    SingleQuery,
    SubqueryExpr,
    UnionQuery,
    Unwind,
    Variable,
    With,
)
from query_guard.cypher.ast_conditional import Conditional, NextChain
from query_guard.cypher.scope_table import Scope, Scopes, certain_labels, conjuncts, subclasses

__all__ = ["Scopes", "resolve"]

_LOCAL_BINDERS = frozenset({"all", "any", "none", "single", "filter", "extract"})
# what `_Resolver.expr` treats specially: every other class of node it only descends into
_SPECIAL = (
    Variable, PatternPredicate, ListComprehension, OtherExpr, PatternComprehension, SubqueryExpr
)  # fmt: skip


# node classes defined by now that are none of `_SPECIAL` (a later one: the general path, same)
_PLAIN = frozenset(c for c in subclasses(Node) if not issubclass(c, _SPECIAL))


def resolve(tree: Script | Query) -> Scopes:
    resolver = _Resolver()
    statements = tree.statements if isinstance(tree, Script) else [tree]
    for statement in statements:
        resolver.query(statement, None, sees_outer=False)
    return Scopes(resolver.occurrences)


class _Resolver:
    def __init__(self) -> None:
        self.occurrences: dict[Node, tuple[Scope, str | None]] = {}
        self._next_id = 0

    def new_scope(self, parent: Scope | None) -> Scope:
        self._next_id += 1
        return Scope(self._next_id, parent)

    # ---------------------------------------------------------------- queries

    def query(
        self,
        query: Query,
        outer: Scope | None,
        sees_outer: bool,
        imports: dict[str, frozenset[str]] | None = None,
    ) -> dict[str, frozenset[str]]:
        """Resolve a query; returns the labels of the variables its RETURN hands back."""
        if not isinstance(query, UnionQuery):
            return self.single(query, outer, sees_outer, imports)
        results = [self.single(b, outer, sees_outer, imports) for b in query.branches]
        out = results[0]
        for other in results[1:]:  # a UNION only guarantees what every branch guarantees
            out = {k: v & other[k] for k, v in out.items() if k in other}
        return out

    def single(
        self,
        query: SingleQuery,
        outer: Scope | None,
        sees_outer: bool,
        imports: dict[str, frozenset[str]] | None,
    ) -> dict[str, frozenset[str]]:
        # a classic `CALL { WITH a … }` reads `a` from outside in its leading WITH only
        leading_with = bool(query.clauses) and isinstance(query.clauses[0], With)
        scope = self.new_scope(outer if sees_outer or leading_with else None)
        for name, labels in (imports or {}).items():
            scope.bound.add(name)
            scope.add(name, labels)
        returned: dict[str, frozenset[str]] = {}
        for clause in query.clauses:
            if isinstance(clause, With):
                scope = self.projection(clause, scope, outer if sees_outer else None)
            elif isinstance(clause, Return):
                returned = self.returned(clause, scope)
            elif isinstance(clause, Conditional):
                returned = self.conditional(clause, scope)
            elif isinstance(clause, NextChain):
                for i, part in enumerate(clause.parts):
                    returned = self.query(part, scope if i == 0 else None, i == 0, returned)
            else:
                self.clause(clause, scope)
        return returned

    def conditional(self, clause: Conditional, scope: Scope) -> dict[str, frozenset[str]]:
        """Cypher 25 `WHEN … THEN … ELSE …`: conditions and branches read the enclosing scope;
        like a UNION, only what every branch returns is certain."""
        for condition in clause.conditions:
            self.condition(condition, scope)
        results = [self.query(branch, scope, sees_outer=True) for branch in clause.branches]
        out = results[0]
        for other in results[1:]:
            out = {k: v & other[k] for k, v in out.items() if k in other}
        return out

    def projection(self, clause: With, old: Scope, parent: Scope | None) -> Scope:
        new = self.new_scope(parent)
        if clause.star:
            names = set(old.bound) | set(old.facts)
            for name in names:
                new.bound.add(name)
                new.add(name, old.labels(name))
        for item in clause.items:
            self.expr(item.expr, old)
            if isinstance(item.expr, Variable):
                target = item.alias.name if item.alias else item.expr.name
                new.bound.add(target)
                new.add(target, old.labels(item.expr.name))
            elif item.alias is not None:
                new.bound.add(item.alias.name)
            if item.alias is not None:
                self.occurrences[item.alias] = (new, item.alias.name)
        self.ordering(clause, old, new)
        if clause.where is not None:
            self.condition(clause.where, new)
        return new

    def ordering(self, clause: Projection, old: Scope, new: Scope | None) -> None:
        # ORDER BY sees the projected names first, then the names before the projection
        if clause.order_by:
            view = self.new_scope(old)
            if new is not None:
                view.bound = new.bound
                view.facts = new.facts
            for item in clause.order_by:
                self.expr(item.expr, view)
        else:  # no view needed; its id is still taken, so scope ids stay what they were
            self._next_id += 1
        for expr in (clause.skip, clause.limit):
            if expr is not None:
                self.expr(expr, old)

    def returned(self, clause: Return, scope: Scope) -> dict[str, frozenset[str]]:
        out: dict[str, frozenset[str]] = {}
        for item in clause.items:
            self.expr(item.expr, scope)
            if isinstance(item.expr, Variable):
                name = item.alias.name if item.alias else item.expr.name
                out[name] = scope.labels(item.expr.name)
            elif item.alias is not None:
                out[item.alias.name] = frozenset()
            if item.alias is not None:
                self.occurrences[item.alias] = (scope, item.alias.name)
        self.ordering(clause, scope, None)
        return out

    # ---------------------------------------------------------------- clauses

    def clause(self, clause: Node, scope: Scope) -> None:
        if isinstance(clause, Match):
            for pattern in clause.patterns:
                self.pattern(pattern, scope, facts=True)
            if clause.where is not None:
                self.condition(clause.where, scope)
        elif isinstance(clause, Create):
            for pattern in clause.patterns:
                self.pattern(pattern, scope, facts=True)
        elif isinstance(clause, Merge):
            self.pattern(clause.pattern, scope, facts=True)
            for action in clause.actions:
                self.clause(action, scope)
        elif isinstance(clause, Unwind):
            self.expr(clause.expr, scope)
            self.binder(clause.variable, scope)
        elif isinstance(clause, LoadCsv):
            self.expr(clause.source, scope)
            self.binder(clause.variable, scope)
        elif isinstance(clause, Foreach):
            self.expr(clause.source, scope)
            inner = self.new_scope(scope)
            self.binder(clause.variable, inner, shadow=True)
            for sub in clause.clauses:
                self.clause(sub, inner)
        elif isinstance(clause, CallProcedure):
            for arg in clause.args or ():
                self.expr(arg, scope)
            for item in clause.yield_items:
                self.binder(item.alias or item.expr, scope)  # type: ignore[arg-type]
            if clause.where is not None:
                self.condition(clause.where, scope)
        elif isinstance(clause, CallSubquery):
            self.call_subquery(clause, scope)
        elif isinstance(clause, (SetClause, Remove)):
            for item in clause.items:
                self.expr(item, scope)
        elif isinstance(clause, Delete):
            for expr in clause.exprs:
                self.expr(expr, scope)
        elif isinstance(clause, ShowCommand):
            self.show(clause, scope)
        elif isinstance(clause, OtherClause):
            for part in clause.parts:
                self.expr(part, scope)

    def show(self, clause: ShowCommand, scope: Scope) -> None:
        """A SHOW's YIELD binds its columns; WHERE, ORDER BY and RETURN read them."""
        for name in clause.names:
            self.expr(name, scope)
        for item in clause.yield_items:
            self.binder(item.alias or item.expr, scope)  # type: ignore[arg-type]
        for expr in (*(s.expr for s in clause.order_by), clause.skip, clause.limit):
            if expr is not None:
                self.expr(expr, scope)
        if clause.where is not None:
            self.condition(clause.where, scope)
        if clause.returns is not None:
            self.returned(clause.returns, scope)

    def call_subquery(self, clause: CallSubquery, scope: Scope) -> None:
        if clause.import_all:
            returned = self.query(clause.body, scope, sees_outer=True)
        elif clause.imports is not None:
            imports = {}
            for var in clause.imports:
                self.occurrences[var] = (scope, var.name)
                imports[var.name] = scope.labels(var.name)
            returned = self.query(clause.body, None, sees_outer=False, imports=imports)
        else:
            returned = self.query(clause.body, scope, sees_outer=False)
        for name, labels in returned.items():
            scope.bound.add(name)
            scope.add(name, labels)

    def binder(self, var: Variable, scope: Scope, shadow: bool = False) -> None:
        if shadow:
            scope.bound.add(var.name)
        else:
            scope.bind(var.name)
        self.occurrences[var] = (scope, var.name)

    # ---------------------------------------------------------------- patterns

    def pattern(self, pattern: PathPattern, scope: Scope, facts: bool) -> None:
        if pattern.variable is not None:
            self.binder(pattern.variable, scope)
        for element in pattern.elements:
            self.element(element, scope, facts)

    def element(self, element: Node, scope: Scope, facts: bool) -> None:
        if isinstance(element, NodePattern):
            var = element.variable
            if var is not None:  # `binder(var, scope)`, inline (hot path)
                name = var.name
                scope.bind(name)
                self.occurrences[var] = self.occurrences[element] = (scope, name)
                if facts:
                    scope.add(name, certain_labels(element.labels))
            else:
                self.occurrences[element] = (scope, None)
            if element.properties is not None or element.where is not None:
                self._inner_exprs(element, scope)
        elif isinstance(element, RelPattern):
            if element.variable is not None:
                self.binder(element.variable, scope)
            if element.properties is not None or element.where is not None:
                self._inner_exprs(element, scope)
        elif isinstance(element, QuantifiedPath):
            for inner in element.inner.elements:
                self.element(inner, scope, facts)
            if element.where is not None:
                self.expr(element.where, scope)

    def _inner_exprs(self, element: NodePattern | RelPattern, scope: Scope) -> None:
        if element.properties is not None:
            self.expr(element.properties, scope)
        if element.where is not None:
            self.condition(element.where, scope)

    def condition(self, expr: Expr, scope: Scope) -> None:
        """A WHERE: its AND-conjoined label checks and patterns are facts for the scope."""
        for conjunct in conjuncts(expr):
            if isinstance(conjunct, LabelCheck) and isinstance(conjunct.subject, Variable):
                scope.add(conjunct.subject.name, certain_labels(conjunct.labels))
                self.occurrences[conjunct.subject] = (scope, conjunct.subject.name)
            elif isinstance(conjunct, PatternPredicate):
                self.pattern(conjunct.pattern, scope, facts=True)
            else:
                self.expr(conjunct, scope)

    # ---------------------------------------------------------------- expressions

    def expr(self, root: Node, scope: Scope) -> None:
        if type(root) is PropertyLookup:  # `n.key` (most projected items): its subject
            root = root.subject  # type: ignore[attr-defined]
        if type(root) is Variable:  # a lone variable: no stack
            self.occurrences.setdefault(root, (scope, root.name))  # type: ignore[attr-defined]
            return
        stack: list[Node] = [root]
        while stack:
            node = stack.pop()
            cls = type(node)
            if cls is PropertyLookup:  # `n.key` (hot path): the subject is its only child
                stack.append(node.subject)  # type: ignore[attr-defined]
            elif cls is BinaryOp:  # its children, as `children()` lists them (hot path)
                stack += (node.left, node.right)  # type: ignore[attr-defined]
            elif cls is FunctionCall:
                stack += node.args  # type: ignore[attr-defined]
            elif cls in _PLAIN:  # most nodes: only their children matter (hot path)
                stack.extend(node.children())
            elif isinstance(node, Variable):
                self.occurrences.setdefault(node, (scope, node.name))
            elif isinstance(node, PatternPredicate):
                self.pattern(node.pattern, scope, facts=False)
            elif isinstance(node, ListComprehension):
                self.local(scope, node.variable, node.source, node.where, node.projection)
            elif isinstance(node, OtherExpr) and node.kind in _LOCAL_BINDERS:
                var, source, *rest = node.parts
                self.local(scope, var, source, *rest)  # type: ignore[arg-type]
            elif isinstance(node, OtherExpr) and node.kind == "reduce" and len(node.parts) == 5:
                self.reduce(node, scope)
            elif isinstance(node, PatternComprehension):
                inner = self.new_scope(scope)
                if node.path_variable is not None:
                    self.binder(node.path_variable, inner, shadow=True)
                self.pattern(node.pattern, inner, facts=True)
                if node.where is not None:
                    self.condition(node.where, inner)
                self.expr(node.projection, inner)
            elif isinstance(node, SubqueryExpr):
                self.subquery(node, scope)
            else:
                stack.extend(node.children())

    def local(self, scope: Scope, var: Variable, source: Node, *rest: Node | None) -> None:
        """`[x IN list WHERE … | …]` and `all(x IN list WHERE …)`: x is local."""
        self.expr(source, scope)
        inner = self.new_scope(scope)
        self.binder(var, inner, shadow=True)
        for i, part in enumerate(rest):
            if part is None:
                continue
            if i == 0 and isinstance(part, Expr):
                self.condition(part, inner)
            else:
                self.expr(part, inner)

    def reduce(self, node: OtherExpr, scope: Scope) -> None:
        acc, init, var, source, body = node.parts
        self.expr(init, scope)
        self.expr(source, scope)
        inner = self.new_scope(scope)
        self.binder(acc, inner, shadow=True)  # type: ignore[arg-type]
        self.binder(var, inner, shadow=True)  # type: ignore[arg-type]
        self.expr(body, inner)

    def subquery(self, node: SubqueryExpr, scope: Scope) -> None:
        if node.body is not None:
            self.query(node.body, scope, sees_outer=True)
            return
        inner = self.new_scope(scope)
        for pattern in node.patterns:
            self.pattern(pattern, inner, facts=True)
        if node.where is not None:
            self.condition(node.where, inner)
