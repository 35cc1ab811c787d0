"""Typed Cypher AST: dataclass nodes with a character span on every node.

Spans are (start, end) offsets into the parsed text, end exclusive, so `text[start:end]` is the
node's source. Nodes compare by identity (`eq=False`) so they can key dictionaries (the scope
resolver maps NodePattern / Variable objects to label sets). Generic tree operations (`children`,
`walk`, `find_all`) live once on the base class, like sqlglot's Expression.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from query_guard.guard.tree import TreeNode

Span = tuple[int, int]


@dataclass(eq=False, slots=True)
class Node(TreeNode):
    span: Span


# ---------------------------------------------------------------- expressions


@dataclass(eq=False, slots=True)
class Expr(Node):
    pass


@dataclass(eq=False, slots=True)
class Variable(Expr):
    name: str  # unescaped (backticks removed)


@dataclass(eq=False, slots=True)
class Literal(Expr):
    kind: str  # "string" | "integer" | "float" | "boolean" | "null"
    value: object  # decoded Python value (escapes resolved for strings)


@dataclass(eq=False, slots=True)
class Parameter(Expr):
    name: str  # `$name` or `$0` -> "name" / "0"


@dataclass(eq=False, slots=True)
class PropertyLookup(Expr):
    subject: Expr
    key: str
    key_span: Span


@dataclass(eq=False, slots=True)
class FunctionCall(Expr):
    name: str  # as written, namespace included: "count", "apoc.text.join"
    args: list[Expr]
    distinct: bool = False
    star: bool = False  # count(*)


@dataclass(eq=False, slots=True)
class BinaryOp(Expr):
    # = <> < > <= >= AND OR XOR + - * / % ^ || IN, STARTS WITH, ENDS WITH, CONTAINS, =~
    op: str
    left: Expr
    right: Expr
    op_span: Span


@dataclass(eq=False, slots=True)
class UnaryOp(Expr):
    op: str  # "NOT", "-", "+", "IS NULL", "IS NOT :: INTEGER", "IS NFC NORMALIZED" (postfix ones)
    operand: Expr


@dataclass(eq=False, slots=True)
class ListLiteral(Expr):
    items: list[Expr]


@dataclass(eq=False, slots=True)
class MapLiteral(Expr):
    entries: list[tuple[str, Span, Expr]]  # (key, key_span, value)


@dataclass(eq=False, slots=True)
class LabelCheck(Expr):
    """`n:Person` / `n:A|B` used as a predicate (typically in WHERE)."""

    subject: Expr
    labels: LabelExpr


@dataclass(eq=False, slots=True)
class CaseExpr(Expr):
    subject: Expr | None
    alternatives: list[tuple[Expr, Expr]]  # (when, then)
    default: Expr | None


@dataclass(eq=False, slots=True)
class ListComprehension(Expr):
    variable: Variable
    source: Expr
    where: Expr | None
    projection: Expr | None


@dataclass(eq=False, slots=True)
class PatternComprehension(Expr):
    path_variable: Variable | None
    pattern: PathPattern
    where: Expr | None
    projection: Expr


@dataclass(eq=False, slots=True)
class PatternPredicate(Expr):
    """A bare pattern used as an expression: `WHERE (a)-[:KNOWS]->(b)`."""

    pattern: PathPattern


@dataclass(eq=False, slots=True)
class SubqueryExpr(Expr):
    """`EXISTS { … }`, `COUNT { … }`, `COLLECT { … }`; body is a full query or a pattern."""

    kind: str  # "EXISTS" | "COUNT" | "COLLECT"
    body: Query | None  # when the braces hold a full query
    patterns: list[PathPattern]  # when the braces hold `pattern [, …] [WHERE …]`
    where: Expr | None


@dataclass(eq=False, slots=True)
class MapProjection(Expr):
    subject: Variable
    # items: ("property", key) | ("all", "*") | ("variable", name) | ("literal", key, expr)
    items: list[tuple]


@dataclass(eq=False, slots=True)
class Subscript(Expr):
    subject: Expr
    index: Expr | None
    end: Expr | None = None  # set for slices `x[a..b]`
    is_slice: bool = False


@dataclass(eq=False, slots=True)
class OtherExpr(Expr):
    """Anything else (quantifier predicates `all(x IN …)`, reduce, shortestPath as expr, …)."""

    kind: str
    parts: list[Node] = field(default_factory=list)


# ---------------------------------------------------------------- label expressions


@dataclass(eq=False, slots=True)
class LabelExpr(Node):
    pass


@dataclass(eq=False, slots=True)
class LabelName(LabelExpr):
    name: str  # unescaped
    name_span: Span  # span of the name token itself (backticks included if written)


@dataclass(eq=False, slots=True)
class LabelOr(LabelExpr):
    """`A|B` (also the legacy `:A|:B` on relationship types)."""

    items: list[LabelExpr]


@dataclass(eq=False, slots=True)
class LabelAnd(LabelExpr):
    """`A&B` and the classic `:A:B` on nodes."""

    items: list[LabelExpr]


@dataclass(eq=False, slots=True)
class LabelNot(LabelExpr):
    item: LabelExpr


@dataclass(eq=False, slots=True)
class LabelWildcard(LabelExpr):
    """`%` — any label."""


# ---------------------------------------------------------------- patterns


@dataclass(eq=False, slots=True)
class NodePattern(Node):
    variable: Variable | None
    labels: LabelExpr | None
    properties: MapLiteral | Parameter | None
    where: Expr | None = None  # Neo4j 5 inline `(n WHERE n.x > 1)`


@dataclass(eq=False, slots=True)
class VarLength(Node):
    """`*`, `*2`, `*1..3`, `*..3` on a relationship, or a quantifier `{1,3}` `+` `*`."""

    min: int | None
    max: int | None


@dataclass(eq=False, slots=True)
class RelPattern(Node):
    variable: Variable | None
    types: LabelExpr | None
    direction: str  # "out" (->), "in" (<-), "both" (-- and <-->)
    left_span: Span  # the left arrow piece: "<-" or "-"
    right_span: Span  # the right arrow piece: "->" or "-"
    length: VarLength | None = None  # `*…` inside the brackets
    properties: MapLiteral | Parameter | None = None
    where: Expr | None = None
    quantifier: VarLength | None = None  # quantified relationship `-[:R]->{1,3}`


@dataclass(eq=False, slots=True)
class QuantifiedPath(Node):
    """`((a)-[:R]->(b)){1,3}` — a parenthesised path with a quantifier (or none: `( … )`)."""

    inner: PathPattern
    quantifier: VarLength | None
    where: Expr | None = None


PatternElement = NodePattern | RelPattern | QuantifiedPath


@dataclass(eq=False, slots=True)
class PathPattern(Node):
    """One comma-separated part of a pattern: `p = (a)-[r]->(b)<-[s]-(c)`.

    `elements` alternate node / relationship as written; a QuantifiedPath takes the place of a
    node-rel-…-node stretch. `shortest` is "shortestPath" / "allShortestPaths" / "SHORTEST 1" /
    "ANY" … when the part is wrapped in a shortest-path function or prefixed by a selector.
    """

    variable: Variable | None
    elements: list[PatternElement]
    shortest: str | None = None

    def triples(self) -> Iterator[tuple[NodePattern, RelPattern, NodePattern]]:
        """(left node, relationship, right node) for every relationship with node neighbours."""
        els = self.elements
        for i, el in enumerate(els):
            if isinstance(el, RelPattern) and 0 < i < len(els) - 1:
                left, right = els[i - 1], els[i + 1]
                if isinstance(left, NodePattern) and isinstance(right, NodePattern):
                    yield left, el, right


# ---------------------------------------------------------------- clauses


@dataclass(eq=False, slots=True)
class Clause(Node):
    pass


@dataclass(eq=False, slots=True)
class ProjectionItem(Node):
    expr: Expr
    alias: Variable | None


@dataclass(eq=False, slots=True)
class SortItem(Node):
    expr: Expr
    descending: bool


@dataclass(eq=False, slots=True)
class Projection(Clause):
    """Common shape of WITH and RETURN."""

    distinct: bool
    star: bool  # `RETURN *` / `WITH *` (items may follow the star)
    items: list[ProjectionItem]
    order_by: list[SortItem]
    skip: Expr | None
    limit: Expr | None


@dataclass(eq=False, slots=True)
class With(Projection):
    where: Expr | None = None


@dataclass(eq=False, slots=True)
class Return(Projection):
    pass


@dataclass(eq=False, slots=True)
class Match(Clause):
    optional: bool
    patterns: list[PathPattern]
    where: Expr | None


@dataclass(eq=False, slots=True)
class Unwind(Clause):
    expr: Expr
    variable: Variable


@dataclass(eq=False, slots=True)
class Create(Clause):
    patterns: list[PathPattern]


@dataclass(eq=False, slots=True)
class Merge(Clause):
    pattern: PathPattern
    actions: list[SetClause]  # ON CREATE SET / ON MATCH SET


@dataclass(eq=False, slots=True)
class SetClause(Clause):
    items: list[Node]  # the SET items as expressions (property lookups, variables, maps)


@dataclass(eq=False, slots=True)
class Remove(Clause):
    items: list[Node]


@dataclass(eq=False, slots=True)
class Delete(Clause):
    detach: bool
    exprs: list[Expr]


@dataclass(eq=False, slots=True)
class Foreach(Clause):
    variable: Variable
    source: Expr
    clauses: list[Clause]


@dataclass(eq=False, slots=True)
class LoadCsv(Clause):
    with_headers: bool
    source: Expr
    variable: Variable


@dataclass(eq=False, slots=True)
class CallProcedure(Clause):
    name: str  # dotted, as written: "db.labels"
    name_span: Span
    args: list[Expr] | None  # None when called without parentheses
    yield_items: list[ProjectionItem]  # `YIELD a, b AS c`; empty when no YIELD
    yield_star: bool
    where: Expr | None


@dataclass(eq=False, slots=True)
class CallSubquery(Clause):
    """`CALL { … }` / `CALL (x, y) { … }` / `OPTIONAL CALL`, optionally IN TRANSACTIONS."""

    body: Query
    imports: list[Variable] | None  # the Neo4j 5.2x scope clause `CALL (a, b)`; None if absent
    in_transactions: bool = False
    import_all: bool = False  # `CALL (*) { … }`: every outer variable is visible
    batch: list[Expr] = field(default_factory=list)  # IN [n CONCURRENT] TRANSACTIONS [OF r]


@dataclass(eq=False, slots=True)
class SchemaCommand(Clause):
    """CREATE/DROP INDEX|CONSTRAINT, SHOW …, and other admin commands: kind = leading words."""

    kind: str


@dataclass(eq=False, slots=True)
class ShowCommand(SchemaCommand):
    """`SHOW …` or `TERMINATE TRANSACTIONS …` (Neo4j 5), every clause parsed.

    `kind` is the command's keywords ("SHOW ALL INDEXES", "SHOW USER PRIVILEGES",
    "TERMINATE TRANSACTIONS"); `target` what it lists, normalised to one word group
    ("INDEXES", "CONSTRAINTS", "FUNCTIONS", "PROCEDURES", "TRANSACTIONS", "SETTINGS",
    "TERMINATE TRANSACTIONS", or the admin words: "USERS", "ROLES", "PRIVILEGES", …).
    Composed commands (`SHOW TRANSACTIONS YIELD … TERMINATE TRANSACTIONS …`) are consecutive
    ShowCommand clauses of one statement.
    """

    target: str = ""
    names: list[Expr] = field(default_factory=list)  # transaction ids, setting names
    executable_by: str | None = None  # `EXECUTABLE BY <user>` ("CURRENT USER" when so written)
    yield_items: list[ProjectionItem] = field(default_factory=list)
    yield_star: bool = False
    order_by: list[SortItem] = field(default_factory=list)
    skip: Expr | None = None
    limit: Expr | None = None
    where: Expr | None = None
    returns: Return | None = None


@dataclass(eq=False, slots=True)
class OtherClause(Clause):
    """USE, FINISH, and other clauses the rules need not look into."""

    kind: str
    parts: list[Node] = field(default_factory=list)


# ---------------------------------------------------------------- queries


@dataclass(eq=False, slots=True)
class SingleQuery(Node):
    clauses: list[Clause]


@dataclass(eq=False, slots=True)
class UnionQuery(Node):
    branches: list[SingleQuery]
    all: list[bool]  # one flag per UNION keyword (len(branches) - 1)


Query = SingleQuery | UnionQuery


@dataclass(eq=False, slots=True)
class Script(Node):
    """The parsed text: one or more `;`-separated statements (a trailing `;` is allowed)."""

    statements: list[Query]
