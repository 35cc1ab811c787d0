"""The public API for rule authors (versioned: `API_VERSION`; a breaking change bumps it).

Everything a rule plugin needs, from one import::

    from query_guard.api import Edit, Finding, Option, Severity, hookimpl

    OPTIONS = {"replacement": Option(str, "", "what RETURN * becomes ('' = report only)")}

    @hookimpl
    def guard_cypher(query, ctx):
        ...

Hooks (`query_guard.guard.hookspecs`): `guard_text(text, language, ctx)`,
`guard_cypher(query, ctx)`, `guard_gremlin(traversal, ctx)`, `guard_repair(request, ctx)`.
A rule is registered through the entry-point group `query_guard`; `query-guard rules` lists
what is installed.
Context accessors: `ctx.schema` (the catalog or None), `ctx.settings` (`GuardSettings`),
`ctx.options(rule)` (the rule's typed options), `ctx.option(rule, key, default)`. The typed
trees: `cypher_ast` (`query.find(cypher_ast.Match)`, `node.find_all(cypher_ast.Variable)`),
`gremlin_ast`; `check_fixture(path, rule)` runs a fixture file against a rule (tests).
A worked example package: examples/rule-package/.

Per language, the helpers the built-in rules use (every built-in rule imports only from
`query_guard.api` and these; a test keeps it so): `query_guard.api.cypher` (typed tree,
patterns, lexical segments, the function allow-list), `query_guard.api.gremlin` (typed
traversal, span edits, label tracking, similarity walks), `query_guard.api.sql` (sqlglot
statement, catalog, function allow-list), `query_guard.api.compat` (proxy-answered
procedures).
"""

from __future__ import annotations

from query_guard.api.testing import check_fixture
from query_guard.cypher import ast as cypher_ast
from query_guard.cypher.query import CypherQuery
from query_guard.gremlin import ast as gremlin_ast
from query_guard.gremlin.language import GremlinQuery
from query_guard.guard.hookspecs import hookimpl
from query_guard.guard.options import Option
from query_guard.guard.unsafe_chars import UNSAFE, describe
from query_guard.model import Edit, Finding, Severity, Verdict
from query_guard.repair.model import RepairCandidate, RepairRequest
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.context import GuardContext
from query_guard.sql.query import SqlQuery

API_VERSION = 1

__all__ = [
    "API_VERSION", "UNSAFE", "CypherQuery", "Edit", "Finding", "GremlinQuery", "GuardContext",
    "Option", "RepairCandidate", "RepairRequest", "SchemaCatalog", "Severity", "SqlQuery",
    "Verdict", "check_fixture", "cypher_ast", "describe", "gremlin_ast", "hookimpl",
]  # fmt: skip
