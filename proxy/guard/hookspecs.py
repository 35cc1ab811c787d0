"""The hooks a query-guard plugin can implement (pluggy project name: ``query_guard``).

A rule is a module or object with ``@hookimpl`` functions; built-in rules in ``plugins/`` are
registered exactly like third-party ones (entry-point group ``query_guard``). Rule hooks are
synchronous and pure: everything they may know arrives in ``ctx`` (a ``GuardContext``).
Findings carry span edits on the text the rule was given; the pipeline applies them.
The parsed queries and the repair request are typed by the packages above the guard that make
them (``query_guard.cypher``, ``query_guard.repair``): the hooks name them in words, never by
import, so that the guard depends on no language and no repair loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from query_guard.model import Finding
    from query_guard.schema.context import GuardContext

hookspec = pluggy.HookspecMarker("query_guard")
hookimpl = pluggy.HookimplMarker("query_guard")


# ---------------------------------------------------------------- text stage (before parsing)


@hookspec
def guard_text(text: str, language: str, ctx: GuardContext) -> list[Finding] | None:
    """Inspect raw query text before it is parsed (e.g. strip markdown fences).

    :param text: the query as received (after earlier text-stage edits of this round)
    :param language: ``"cypher"`` or ``"gremlin"``
    :return: findings; their edits are applied before parsing
    """


# ---------------------------------------------------------------- rules on parsed queries


@hookspec
def guard_cypher(query: Any, ctx: GuardContext) -> list[Finding] | None:
    """Check a parsed Cypher query; return findings, with span edits as fixes.

    :param query: a ``query_guard.cypher.query.CypherQuery``: text, typed AST
        (``query.script``) and scope resolution (``query.scopes``)
    :param ctx: schema catalog, guard settings and this rule's own options
    """


@hookspec
def guard_gremlin(traversal: Any, ctx: GuardContext) -> list[Finding] | None:
    """Check a parsed Gremlin traversal (``query_guard.gremlin``); return findings with span
    edits."""


@hookspec
def guard_sql(query: Any, ctx: GuardContext) -> list[Finding] | None:
    """Check parsed SQL (``query_guard.sql.query.SqlQuery``: statements as sqlglot trees with their
    spans, and the dialect); return findings with span edits."""


# ---------------------------------------------------------------- repair loop


@hookspec
def guard_repair(request: Any, ctx: GuardContext) -> Any:
    """Propose a rewrite of a read query that failed or returned nothing (DESIGN §6).

    Called by the repair loop after its deterministic tiers found nothing, once per iteration,
    in hook order, for every query language (Cypher, Gremlin, SQL: ``request.language``); the
    first implementation returning a candidate wins, so one that knows only some languages
    returns None for the others. Whatever it returns is guarded again, in the request's
    language, before it runs (a repair can never introduce a write).

    :param request: ``query_guard.repair.model.RepairRequest`` — the failed query, the database
        error (None for an empty result), the client's question when sent, literal grounding
        notes, the attempts so far, the query parameters and the language
    :param ctx: schema catalog and guard settings
    :return: a ``query_guard.repair.model.RepairCandidate`` (query, §7 code, cause), a query
        string, None (no idea), or an awaitable of one of these (an LLM call)
    """
