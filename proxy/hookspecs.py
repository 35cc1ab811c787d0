"""The hooks a query-guard plugin can implement (pluggy project name: ``query_guard``).

A rule is a module or object with ``@hookimpl`` functions; built-in rules in ``plugins/`` are
registered exactly like third-party ones (entry-point group ``query_guard``). Rule hooks are
synchronous and pure: everything they may know arrives in ``ctx`` (a ``GuardContext``).
Findings carry span edits on the text the rule was given; the pipeline applies them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from proxy.context import GuardContext
    from proxy.cypher.query import CypherQuery
    from proxy.model import Finding

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
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding] | None:
    """Check a parsed Cypher query; return findings, with span edits as fixes.

    :param query: text, typed AST (``query.script``) and scope resolution (``query.scopes``)
    :param ctx: schema catalog, guard settings and this rule's own options
    """


@hookspec
def guard_gremlin(traversal: Any, ctx: GuardContext) -> list[Finding] | None:
    """Check a parsed Gremlin traversal (``proxy.gremlin``); return findings with span edits."""


# ---------------------------------------------------------------- repair loop


@hookspec
def guard_repair(request: Any, ctx: GuardContext) -> Any:
    """Propose a repaired query after an error or an empty result (DESIGN §6).

    May return a ``RepairCandidate``, None, or an awaitable of either (an LLM call).
    """
