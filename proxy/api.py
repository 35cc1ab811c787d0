"""The public API for rule authors (versioned: `API_VERSION`; a breaking change bumps it).

Everything a rule plugin needs, from one import::

    from query_guard.api import Edit, Finding, Option, Severity, hookimpl

    OPTIONS = {"replacement": Option(str, "", "what RETURN * becomes ('' = report only)")}

    @hookimpl
    def guard_cypher(query, ctx):
        ...

Hooks (`query_guard.hookspecs`): `guard_text(text, language, ctx)`, `guard_cypher(query, ctx)`,
`guard_gremlin(traversal, ctx)`, `guard_repair(request, ctx)`. A rule is registered through
the entry-point group `query_guard`; `query-guard rules` lists what is installed.
Context accessors: `ctx.schema` (the catalog or None), `ctx.settings` (`GuardSettings`),
`ctx.options(rule)` (the rule's typed options), `ctx.option(rule, key, default)`.
"""

from __future__ import annotations

from query_guard.context import GuardContext
from query_guard.cypher.query import CypherQuery
from query_guard.hookspecs import hookimpl
from query_guard.model import Edit, Finding, Severity, Verdict
from query_guard.options import Option
from query_guard.schema import SchemaCatalog

API_VERSION = 1

__all__ = [
    "API_VERSION", "CypherQuery", "Edit", "Finding", "GuardContext", "Option", "SchemaCatalog",
    "Severity", "Verdict", "hookimpl",
]  # fmt: skip
