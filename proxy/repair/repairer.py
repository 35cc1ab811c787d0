"""The execution-triggered repair loop (DESIGN §6): when a read query fails or returns nothing,
try deterministic candidates (reversed arrows, case-insensitive equality), ground its literals,
and ask `guard_repair` plugins (e.g. the LLM plugin) for a rewrite — within a budget, every
candidate re-guarded before it runs, every attempt recorded.

The loop is async because it executes on a backend; its decisions (`is_empty`, `stop_reason`,
the candidates in `query_guard.repair.candidates`) are pure functions. Results are *peeked*: only
the first records of an attempt are read to decide, and the chosen attempt's stream is handed back
whole (`PeekedStream`), so a query that returns rows at once streams as before.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

import pluggy
from cachetools import LRUCache

from query_guard.backend import BackendError, BackendUnavailable, ResultStream
from query_guard.cypher import ast
from query_guard.cypher.query import CypherQuery
from query_guard.cypher.statement import is_explain
from query_guard.guard.caches import parse_cache
from query_guard.guard.hookcalls import PerPluginCalls
from query_guard.repair.loop import (
    PEEK,
    Check,
    Execute,
    RepairLoop,
    is_read_query,
    parse,
    stop_reason,
)
from query_guard.repair.model import (
    BLOCKED,
    EMPTY,
    ERROR,
    ROWS,
    Attempt,
    PeekedStream,
    RepairCandidate,
    RepairOutcome,
    RepairRequest,
    RepairSettings,
    await_me_maybe,
)
from query_guard.schema.context import GuardContext

__all__ = [
    "BLOCKED", "EMPTY", "ERROR", "PEEK", "ROWS", "Attempt", "PeekedStream", "RepairCandidate",
    "RepairOutcome", "RepairRequest", "RepairSettings", "Repairer", "await_me_maybe",
    "build_repairer", "is_read_query", "never_repaired", "stop_reason",
]  # fmt: skip

log = logging.getLogger(__name__)

_MISSING = object()


def never_repaired(query: CypherQuery | None) -> str | None:
    """Why this query is never repaired (DESIGN §6), or None: not a read, an EXPLAIN, or no
    MATCH pattern to repair."""
    if query is None or not is_read_query(query.text, lambda _text: query):
        return "not a read query"
    if is_explain(query):
        return "an EXPLAIN is never executed"
    if not any(True for _ in query.find(ast.Match)):
        return "no MATCH pattern to repair"
    return None


class Repairer:
    """One server's repair loop: settings, the guard's plugin manager and context."""

    def __init__(
        self,
        settings: RepairSettings | None = None,
        pm: pluggy.PluginManager | None = None,
        ctx: GuardContext | Callable[[], GuardContext] | None = None,
    ) -> None:
        self.settings = settings or RepairSettings()
        self.pm = pm
        self._calls = PerPluginCalls(pm) if pm is not None else None
        # a callable reads the guard's context at each use: a schema refresh
        # (`Guard.use_schema`) reaches the loop too
        fixed = ctx if isinstance(ctx, GuardContext) else GuardContext()
        self._context: Callable[[], GuardContext] = ctx if callable(ctx) else (lambda: fixed)
        # parses of the texts the loop judges (clients repeat parameterised queries), bounded
        # by approximate bytes: a parse holds ~42x its text (AST, tokens, scopes)
        self._parses: LRUCache[str, CypherQuery | None] = parse_cache(
            self.ctx.settings.cache_bytes
        )
        self._parse_max_query = self.ctx.settings.cache_max_query_bytes

    @property
    def ctx(self) -> GuardContext:
        return self._context()

    def parse(self, text: str) -> CypherQuery | None:
        """The parsed query (None when it does not parse), cached per repairer (short ones)."""
        cached = self._parses.get(text, _MISSING)
        if cached is not _MISSING:
            return cached  # type: ignore[return-value]
        parsed = parse(text)
        if not self._parse_max_query or len(text) <= self._parse_max_query:
            with contextlib.suppress(ValueError):  # larger than the whole cache
                self._parses[text] = parsed
        return parsed

    async def run(
        self,
        query: str,
        *,
        execute: Execute,
        check: Check,
        parameters: Mapping[str, Any] | None = None,
        question: str | None = None,
        first: ResultStream | BackendError | None = None,
        retry_errors: bool = True,
        forward: str | None = None,
    ) -> RepairOutcome:
        """Run `query` (or judge `first`, its already started result) and repair it if it
        fails or comes back empty. Raises nothing the backend raises: errors are outcomes.

        `forward` is the text the database executes for `query` (the guard's canonical
        emission, `Verdict.to_run`); the loop runs and repairs that text, and candidates run
        as their own verdict's `to_run`, never as raw candidate text."""
        params = dict(parameters or {})
        loop = RepairLoop(self, execute, check, params, question)
        current = await loop.judge(forward or query, "client", None, first)
        if current.rows or not self.settings.enabled:
            return loop.outcome(current, "rows" if current.rows else "disabled")
        reason = never_repaired(self.parse(query))
        if reason is not None:
            return loop.outcome(current, reason)
        if current.error is not None and not retry_errors:
            return loop.outcome(current, "errors are not retried here")
        if isinstance(current.error, BackendUnavailable):
            return loop.outcome(current, "the database is unavailable")
        return await loop.iterate(current)

    async def propose(self, request: RepairRequest) -> RepairCandidate | None:
        """Ask each `guard_repair` implementation in hook order; the first candidate wins.
        A plugin that raises (an LLM timeout) is logged and skipped."""
        if self._calls is None:
            return None
        for name, caller in self._calls("guard_repair"):
            try:
                results = caller(request=request, ctx=self.ctx)
                result = await await_me_maybe(results[0]) if results else None
            except Exception as exc:
                log.warning("repair plugin %s failed: %r", name, exc)
                continue
            if isinstance(result, str):
                result = RepairCandidate(result)
            if isinstance(result, RepairCandidate):
                if not result.source:
                    result = RepairCandidate(result.query, result.code, result.cause, name)
                return result
        return None


# ---------------------------------------------------------------- wiring


def build_repairer(guard: Any, config: Any) -> Repairer | None:
    """The server's repairer from `[repair]` (None when disabled): repair plugins
    (`query_guard.guard.registry.BUILTIN_REPAIR`, each module's `from_config(repair_table)`) are
    registered on the guard's own plugin manager, next to third-party `guard_repair`
    implementations."""
    from query_guard.guard.registry import BUILTIN_REPAIR

    settings = RepairSettings.from_config(config.repair)
    if not settings.enabled:
        return None
    pm: pluggy.PluginManager = guard.pm
    for module_path in BUILTIN_REPAIR:
        name = module_path.rsplit(".", 1)[1]
        if pm.is_blocked(name) or pm.has_plugin(name):
            continue
        plugin = importlib.import_module(module_path).from_config(config.repair)
        if plugin is not None:
            pm.register(plugin, name=name)
    return Repairer(settings, pm, lambda: guard.ctx)
