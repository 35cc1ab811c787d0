"""SQL unknown names — tables and columns the SQL schema does not know (`SCH.UNKNOWN_TABLE`,
`SCH.UNKNOWN_COLUMN`), and unqualified columns several joined tables have
(`SCH.AMBIGUOUS_COLUMN`).

A misspelt column is an error on most databases and, worse, a string literal on some (SQLite
reads an unknown double-quoted name as text). Each finding is a warning naming the closest
declared names. When exactly one declared name is close (similarity ≥ 0.8, case and `_`
ignored) the name is replaced by it; otherwise nothing is rewritten and the database's own
error tells the client.

Names are resolved with sqlglot's scopes (`sqlglot.optimizer.scope`) and its column `Resolver`
(`qualify_columns`): a column is looked up in the sources of its own SELECT (tables, aliases,
derived tables, CTEs), then in the enclosing queries (correlated subqueries). A CTE's or
derived table's declared column list (`WITH RECURSIVE t(n) AS (…)`) names its columns, also
inside the recursion. A select alias used in ORDER BY / GROUP BY / HAVING is known. A scope
with a source whose columns are unknown (a table function, `SELECT *` from an unknown table) is
not judged. Needs a SQL schema (`GuardContext.sql_schema`, discovered from the SQL backend);
without one the rule is silent.

Names match the way the *database* matches them (the schema's dialect, sqlglot's
normalization strategy): PostgreSQL folds unquoted names to lower case and compares quoted
ones exactly, so against a table created as `"OrderLines"` with a column `"OrderID"`,
`SELECT orderid FROM OrderLines` names neither (both fold to lower case) and is fixed to
`SELECT "OrderID" FROM "OrderLines"`, while `"orderid"` is unknown too; Oracle/Snowflake fold
to upper case; SQLite (and a schema of unknown origin) ignores case.

Example (customers has customer_id, customer_name)::

    SELECT custmer_name FROM customers
    -> SELECT customer_name FROM customers   SCH.UNKNOWN_COLUMN (fixed)
"""

from __future__ import annotations

import difflib

from sqlglot import exp
from sqlglot.dialects.dialect import NormalizationStrategy
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify_columns import Resolver
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.schema import MappingSchema

from query_guard.api import Edit, Finding, GuardContext, Severity, hookimpl
from query_guard.api.sql import SqlCatalog, SqlQuery, SqlStatement, dialect_of

FIX_SIMILARITY = 0.8  # a candidate this close is "close"; exactly one such gives a fix
HINT_SIMILARITY = 0.5


@hookimpl
def guard_sql(query: SqlQuery, ctx: GuardContext) -> list[Finding]:
    catalog = ctx.sql_schema
    if catalog is None or not catalog.tables:
        return []
    rule = _Case(catalog.dialect)
    tables = {rule.stored(t): t for t in catalog.tables}  # key -> stored spelling
    findings: list[Finding] = []
    for statement in query.statements:
        if not isinstance(statement.tree, exp.Query):
            continue
        try:
            scopes = traverse_scope(statement.tree)
        except (OptimizeError, SqlglotError):
            continue
        schema = _schema(query, statement, catalog, rule, tables)
        names = _Names(query, statement, catalog, schema, rule, tables)
        for scope in scopes:
            findings += names.check(scope)
    return findings


def _schema(
    query: SqlQuery,
    statement: SqlStatement,
    catalog: SqlCatalog,
    rule: _Case,
    tables: dict[str, str],
) -> MappingSchema:
    """The tables the statement names, under the names it writes (sqlglot's resolver looks
    them up as written), each with the keys of its columns."""
    mapping: dict[str, dict[str, str]] = {}
    for table in query.nodes(statement):  # breadth first, as find_all
        if not isinstance(table, exp.Table):
            continue
        if not isinstance(table.this, exp.Identifier) or table.args.get("db"):
            continue
        stored = tables.get(rule.written(table.this))
        if stored is not None and table.name not in mapping:
            mapping[table.name] = {rule.stored(c): "unknown" for c in catalog.tables[stored]}
    return MappingSchema(mapping, dialect=dialect_of(query.dialect), normalize=False)


class _Case:
    """How the database matches identifiers: the key of a stored name and of a written one."""

    def __init__(self, dialect: str) -> None:
        self.strategy = (
            dialect_of(dialect).NORMALIZATION_STRATEGY if dialect
            else NormalizationStrategy.CASE_INSENSITIVE
        )  # fmt: skip
        self.insensitive = self.strategy in (
            NormalizationStrategy.CASE_INSENSITIVE,
            NormalizationStrategy.CASE_INSENSITIVE_UPPERCASE,
        )

    def stored(self, name: str) -> str:
        return name.lower() if self.insensitive else name

    def written(self, ident: exp.Identifier) -> str:
        name = str(ident.this)
        if self.insensitive:
            return name.lower()
        if ident.quoted:
            return name
        if self.strategy is NormalizationStrategy.LOWERCASE:
            return name.lower()
        if self.strategy is NormalizationStrategy.UPPERCASE:
            return name.upper()
        return name

    def needs_quotes(self, name: str) -> bool:
        """Whether `name` must be quoted to reach the stored spelling."""
        if self.strategy is NormalizationStrategy.LOWERCASE:
            return name != name.lower()
        if self.strategy is NormalizationStrategy.UPPERCASE:
            return name != name.upper()
        return False


class _Names:
    def __init__(
        self,
        query: SqlQuery,
        statement: SqlStatement,
        catalog: SqlCatalog,
        schema: MappingSchema,
        rule: _Case,
        tables: dict[str, str],
    ) -> None:
        self.query, self.statement, self.catalog, self.schema = query, statement, catalog, schema
        self.rule, self.tables = rule, tables
        self.dialect = dialect_of(query.dialect)
        # an outer scope lists its correlated subqueries' columns again: judge each once
        self.seen: set[int] = set()

    def check(self, scope: Scope) -> list[Finding]:
        out: list[Finding] = []
        unknown_tables = False
        for source in scope.sources.values():
            if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
                if source.args.get("db") or self.rule.written(source.this) in self.tables:
                    continue
                unknown_tables = True
                out.append(self._unknown(source.this, sorted(self.catalog.tables), "table"))
        if unknown_tables:
            return out  # columns of an unknown table cannot be judged
        columns = self._source_columns(scope)
        if columns is None:
            return out
        outer = self._outer_columns(scope)
        aliases = self._select_aliases(scope)
        for column in scope.columns:
            if id(column) in self.seen or not isinstance(column.this, exp.Identifier):
                continue
            self.seen.add(id(column))
            if column.args.get("db"):
                continue
            name = self.rule.written(column.this)
            qualifier = column.table
            if qualifier:
                cols = _get(columns, qualifier)
                if cols is None:
                    cols = _get(outer, qualifier)
                if cols is None or name in cols:
                    continue
                out.append(self._unknown(column.this, self._spelled(scope, qualifier, cols)))
                continue
            owners = [src for src, cols in columns.items() if name in cols]
            if len(owners) > 1 and not _in_using(column):
                out.append(self._ambiguous(column, owners))
            if owners or name in aliases or any(name in c for c in outer.values()):
                continue
            if _bare_word(column):
                continue
            candidates = sorted({c for s in columns for c in self._spelled(scope, s, columns[s])})
            out.append(self._unknown(column.this, candidates))
        return out

    def _spelled(self, scope: Scope, source: str, lowered: set[str]) -> list[str]:
        """The source's columns in the database's spelling (derived tables: as selected)."""
        node = scope.sources.get(source)
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            stored = self.tables.get(self.rule.written(node.this))
            if stored is not None:
                return list(self.catalog.tables[stored])
        return sorted(lowered)

    def _unknown(
        self, ident: exp.Identifier, candidates: list[str], kind: str = "column"
    ) -> Finding:
        start, end = self.query.span_of(ident, self.statement)
        scored = _close(ident.name, candidates, HINT_SIMILARITY)  # one pass serves both
        close = [c for score, c in scored if score >= FIX_SIMILARITY]
        hints = close or [c for _, c in scored[:3]]
        code = "SCH.UNKNOWN_TABLE" if kind == "table" else "SCH.UNKNOWN_COLUMN"
        message = f"{kind} {ident.name!r} is not in the schema"
        if hints:
            message += "; did you mean " + " or ".join(repr(h) for h in hints) + "?"
        elif kind == "column" and candidates:
            message += f"; known columns here: {', '.join(candidates[:12])}"
        fix = None
        if len(close) == 1:
            fix = (Edit(start, end, self._identifier(close[0], ident.quoted)),)
        return Finding(code, Severity.WARNING, message, (start, end), fix=fix,
                       hint=hints[0] if hints else None)  # fmt: skip

    def _ambiguous(self, column: exp.Column, owners: list[str]) -> Finding:
        start, end = self.query.span_of(column.this, self.statement)
        listed = ", ".join(f"{o}.{column.name}" for o in sorted(owners))
        message = (
            f"column {column.name!r} is in several tables of this query: write one of {listed}"
        )
        return Finding("SCH.AMBIGUOUS_COLUMN", Severity.WARNING, message, (start, end))

    def _source_columns(self, scope: Scope) -> dict[str, set[str]] | None:
        """The column keys of each source of the scope; None when one is unknowable."""
        resolver = Resolver(scope, self.schema)
        out: dict[str, set[str]] = {}
        for name, source in scope.sources.items():
            keys = self._output_keys(source)
            if keys is None:
                try:
                    cols = resolver.get_source_columns(name)
                except (OptimizeError, SqlglotError, KeyError):
                    return None
                if not cols or "*" in cols:
                    return None
                keys = set(cols) if isinstance(source, exp.Table) else {
                    self.rule.stored(c) for c in cols}  # fmt: skip
            out[name] = keys
        return out

    def _output_keys(self, source: object) -> set[str] | None:
        """A derived table's or CTE's column keys, from its SELECT's own identifiers (their
        quoting matters); None to ask sqlglot's resolver."""
        node = source.expression if isinstance(source, Scope) else None
        if node is None:
            return None
        declared = _declared_columns(node)
        if declared:  # `WITH t(a, b) AS (…)`, `(…) AS t(a, b)`: the list names the columns
            return {self.rule.written(ident) for ident in declared}
        if not isinstance(node, exp.Select) or node.is_star:
            return None
        keys: set[str] = set()
        for select in node.selects:
            ident = select.args.get("alias") if isinstance(select, exp.Alias) else select.this
            if not isinstance(ident, exp.Identifier) or not isinstance(
                select, exp.Alias | exp.Column
            ):
                return None
            keys.add(self.rule.written(ident))
        return keys

    def _outer_columns(self, scope: Scope) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        parent = scope.parent
        while parent is not None and scope.can_be_correlated:
            for name, cols in (self._source_columns(parent) or {}).items():
                out.setdefault(name, cols)
            scope, parent = parent, parent.parent
        return out

    def _select_aliases(self, scope: Scope) -> set[str]:
        node = scope.expression
        if not isinstance(node, exp.Select):
            return set()
        idents = [s.args.get("alias") for s in node.selects if isinstance(s, exp.Alias)]
        return {self.rule.written(i) for i in idents if isinstance(i, exp.Identifier)}

    def _identifier(self, name: str, quoted: bool) -> str:
        """`name` as the client's dialect writes it, quoted when the database would otherwise
        fold it away from its stored spelling."""
        ident = exp.to_identifier(name, quoted=quoted or self.rule.needs_quotes(name))
        return ident.sql(dialect=self.dialect)


def _declared_columns(node: exp.Expression) -> list[exp.Identifier]:
    """The column list a CTE or derived table declares for its query (a recursive CTE's
    only way to name them; its anchor SELECT stands for it inside the recursion), or none."""
    while isinstance(node.parent, exp.SetOperation):
        node = node.parent
    owner = node.parent
    alias = owner.args.get("alias") if isinstance(owner, exp.CTE | exp.Subquery) else None
    columns = alias.args.get("columns") if isinstance(alias, exp.TableAlias) else None
    return [c for c in columns or [] if isinstance(c, exp.Identifier)]


def _in_using(column: exp.Column) -> bool:
    """Joined with USING / NATURAL: the shared column is one column, not ambiguous."""
    select = column.find_ancestor(exp.Select)
    if select is None:
        return False
    for join in select.args.get("joins") or []:
        using = join.args.get("using") or []
        if join.method == "NATURAL" or any(u.name.lower() == column.name.lower() for u in using):
            return True
    return False


def _get(columns: dict[str, set[str]], qualifier: str) -> set[str] | None:
    """A source's columns by the qualifier as written (aliases: exact, else ignoring case)."""
    if qualifier in columns:
        return columns[qualifier]
    lowered = qualifier.lower()
    return next((c for n, c in columns.items() if n.lower() == lowered), None)


def _bare_word(column: exp.Column) -> bool:
    """Words sqlglot reads as columns that are not (e.g. `CURRENT_DATE`-like keywords)."""
    return not column.this.quoted and column.name.upper() in {"CURRENT_USER", "SESSION_USER"}


def _close(name: str, candidates: list[str], cutoff: float) -> list[tuple[float, str]]:
    """(similarity, candidate) for the candidates at least `cutoff` similar to `name`, closest
    first. A candidate whose cheap upper bounds are below the cutoff is out without the full
    ratio: the length bound (difflib's `real_quick_ratio`) before the candidate is even
    indexed, then `quick_ratio`."""
    wanted = _norm(name)
    matcher = difflib.SequenceMatcher(None, wanted)
    scored = []
    for c in candidates:
        other = _norm(c)
        total = len(wanted) + len(other)  # real_quick_ratio, without set_seq2's indexing
        if total and 2.0 * min(len(wanted), len(other)) / total < cutoff:
            continue
        matcher.set_seq2(other)
        if matcher.quick_ratio() >= cutoff:
            score = matcher.ratio()
            if score >= cutoff:
                scored.append((score, c))
    return sorted(scored, key=lambda x: (-x[0], x[1]))


def _norm(name: str) -> str:
    return name.lower().replace("_", "")
