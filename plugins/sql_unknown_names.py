"""SQL unknown names — tables and columns the SQL schema does not know (`SCH.UNKNOWN_TABLE`,
`SCH.UNKNOWN_COLUMN`), and unqualified columns several joined tables have
(`SCH.AMBIGUOUS_COLUMN`).

A misspelt column is an error on most databases and, worse, a string literal on some (SQLite
reads an unknown double-quoted name as text). Each finding is a warning naming the closest
declared names. When exactly one declared name is close (similarity ≥ 0.8, case and `_`
ignored) the name is replaced by it; otherwise nothing is rewritten and the database's own
error tells the client.

Names are resolved with sqlglot's scopes (`sqlglot.optimizer.scope`) and its column
`Resolver` (`qualify_columns`): a column is looked up in the sources of its own SELECT (tables,
aliases, derived tables, CTEs), then in the enclosing queries (correlated subqueries). A select
alias used in ORDER BY / GROUP BY / HAVING is known. A scope with a source whose columns are
unknown (a table function, `SELECT *` from an unknown table) is not judged. Needs a SQL schema
(`GuardContext.sql_schema`, discovered from the SQL backend); without one the rule is silent.

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
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify_columns import Resolver
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.schema import MappingSchema

from proxy.context import GuardContext
from proxy.hookspecs import hookimpl
from proxy.model import Edit, Finding, Severity
from proxy.sql.catalog import SqlCatalog
from proxy.sql.query import SqlQuery, SqlStatement

FIX_SIMILARITY = 0.8  # a candidate this close is "close"; exactly one such gives a fix
HINT_SIMILARITY = 0.5


@hookimpl
def guard_sql(query: SqlQuery, ctx: GuardContext) -> list[Finding]:
    catalog = ctx.sql_schema
    if catalog is None or not catalog.tables:
        return []
    rule = _Case(catalog.dialect)
    schema = MappingSchema(
        {rule.stored(t): {rule.stored(c): "unknown" for c in cols}
         for t, cols in catalog.tables.items()},
        dialect=query.dialect,
        normalize=False,
    )  # fmt: skip
    findings: list[Finding] = []
    for statement in query.statements:
        if not isinstance(statement.tree, exp.Query):
            continue
        # a copy whose identifiers are the database's keys for them (folded or exact)
        tree = statement.tree.copy()
        written = {id(k): o for k, o in zip(tree.walk(), statement.tree.walk(), strict=True)}
        for ident in tree.find_all(exp.Identifier):
            ident.set("this", rule.written(ident))
        try:
            scopes = traverse_scope(tree)
        except (OptimizeError, SqlglotError):
            continue
        names = _Names(query, statement, catalog, schema, rule, written)
        for scope in scopes:
            findings += names.check(scope)
    return findings


class _Case:
    """How the database matches identifiers: the key of a stored name and of a written one."""

    def __init__(self, dialect: str) -> None:
        self.strategy = (
            Dialect.get_or_raise(dialect).NORMALIZATION_STRATEGY if dialect
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
        written: dict[int, exp.Expression],
    ) -> None:
        self.query, self.statement, self.catalog, self.schema = query, statement, catalog, schema
        self.rule, self.written = rule, written  # written: the client's node of each key node
        self.dialect = Dialect.get_or_raise(query.dialect)
        self.tables = {rule.stored(t): t for t in catalog.tables}  # key -> stored spelling
        # an outer scope lists its correlated subqueries' columns again: judge each once
        self.seen: set[int] = set()

    def check(self, scope: Scope) -> list[Finding]:
        out: list[Finding] = []
        unknown_tables = False
        for source in scope.sources.values():
            if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
                if source.args.get("db") or source.name in self.tables:
                    continue
                unknown_tables = True
                out.append(self._unknown(source.this, sorted(self.catalog.tables), "table"))
        if unknown_tables:
            return out  # columns of an unknown table cannot be judged
        columns = _source_columns(scope, self.schema)
        if columns is None:
            return out
        outer = _outer_columns(scope, self.schema)
        aliases = _select_aliases(scope)
        for column in scope.columns:
            if id(column) in self.seen or not isinstance(column.this, exp.Identifier):
                continue
            self.seen.add(id(column))
            if column.args.get("db"):
                continue
            name = column.name
            qualifier = column.table
            if qualifier:
                cols = columns.get(qualifier)
                if cols is None:
                    cols = outer.get(qualifier)
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
        if isinstance(node, exp.Table) and node.name in self.tables:
            return list(self.catalog.tables[self.tables[node.name]])
        return sorted(lowered)

    def _unknown(
        self, key: exp.Identifier, candidates: list[str], kind: str = "column"
    ) -> Finding:
        ident = self.written.get(id(key), key)
        assert isinstance(ident, exp.Identifier)
        start, end = self.query.span_of(ident, self.statement)
        close = _close(ident.name, candidates, FIX_SIMILARITY)
        hints = close or _close(ident.name, candidates, HINT_SIMILARITY)[:3]
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

    def _ambiguous(self, key: exp.Column, owners: list[str]) -> Finding:
        column = self.written.get(id(key), key)
        assert isinstance(column, exp.Column)
        start, end = self.query.span_of(column.this, self.statement)
        listed = ", ".join(f"{o}.{column.name}" for o in sorted(owners))
        message = (
            f"column {column.name!r} is in several tables of this query: write one of {listed}"
        )
        return Finding("SCH.AMBIGUOUS_COLUMN", Severity.WARNING, message, (start, end))

    def _identifier(self, name: str, quoted: bool) -> str:
        """`name` as the client's dialect writes it, quoted when the database would otherwise
        fold it away from its stored spelling."""
        ident = exp.to_identifier(name, quoted=quoted or self.rule.needs_quotes(name))
        return ident.sql(dialect=self.dialect)


def _source_columns(scope: Scope, schema: MappingSchema) -> dict[str, set[str]] | None:
    """Lower-case column names of each source of the scope; None when one is unknowable."""
    resolver = Resolver(scope, schema)
    out: dict[str, set[str]] = {}
    for name in scope.sources:
        try:
            cols = resolver.get_source_columns(name)
        except (OptimizeError, SqlglotError, KeyError):
            return None
        if not cols or "*" in cols:
            return None
        out[name] = set(cols)
    return out


def _outer_columns(scope: Scope, schema: MappingSchema) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    parent = scope.parent
    while parent is not None and scope.can_be_correlated:
        for name, cols in (_source_columns(parent, schema) or {}).items():
            out.setdefault(name, cols)
        scope, parent = parent, parent.parent
    return out


def _select_aliases(scope: Scope) -> set[str]:
    node = scope.expression
    if not isinstance(node, exp.Select):
        return set()
    return {s.alias for s in node.selects if isinstance(s, exp.Alias)}


def _in_using(column: exp.Column) -> bool:
    """Joined with USING / NATURAL: the shared column is one column, not ambiguous."""
    select = column.find_ancestor(exp.Select)
    if select is None:
        return False
    for join in select.args.get("joins") or []:
        using = join.args.get("using") or []
        if join.method == "NATURAL" or any(u.name == column.name for u in using):
            return True
    return False


def _bare_word(column: exp.Column) -> bool:
    """Words sqlglot reads as columns that are not (e.g. `CURRENT_DATE`-like keywords)."""
    return not column.this.quoted and column.name.upper() in {"CURRENT_USER", "SESSION_USER"}


def _close(name: str, candidates: list[str], cutoff: float) -> list[str]:
    norm = _norm(name)
    scored = [(difflib.SequenceMatcher(None, norm, _norm(c)).ratio(), c) for c in candidates]
    return [c for score, c in sorted(scored, key=lambda x: (-x[0], x[1])) if score >= cutoff]


def _norm(name: str) -> str:
    return name.lower().replace("_", "")
