"""The execution-triggered repair loop's entry point (DESIGN §6): `Repairer` holds a server's
`[repair]` settings and the guard's plugin manager (the `guard_repair` hook, e.g. the LLM
plugin) and runs `query_guard.repair.loop.RepairLoop` with a language's strategy
(`query_guard.repair.cypher`, `.gremlin`, `.sql`); `build_repairer` wires it from the
configuration.

Results are *peeked*: only the first records of an attempt are read to decide, and the chosen
attempt's stream is handed back whole (`PeekedStream`), so a query that returns rows at once
streams as before.

`weights` (`WeightsFor`, the experience library's snapshot of its element weights) orders
the loop's candidates when several are admissible (DESIGN §10); without it the order is the
language's own.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

import pluggy
from cachetools import LRUCache

from query_guard.backend import BackendError, ResultStream
from query_guard.cypher.query import CypherQuery
from query_guard.guard.caches import parse_cache
from query_guard.guard.hookcalls import PerPluginCalls
from query_guard.repair.cypher import CypherStrategy, Execute, parse
from query_guard.repair.loop import Check, RepairLoop, Strategy
from query_guard.repair.model import (
    RepairCandidate,
    RepairOutcome,
    RepairRequest,
    RepairSettings,
    WeightsFor,
    await_me_maybe,
)
from query_guard.schema.context import GuardContext

log = logging.getLogger(__name__)

_MISSING = object()


class Repairer:
    """One server's repair loop: settings, the guard's plugin manager and context."""

    def __init__(
        self,
        settings: RepairSettings | None = None,
        pm: pluggy.PluginManager | None = None,
        ctx: GuardContext | Callable[[], GuardContext] | None = None,
        weights: WeightsFor | None = None,
    ) -> None:
        self.settings = settings or RepairSettings()
        self.weights = weights
        self.pm = pm
        self._calls = PerPluginCalls(pm) if pm is not None else None
        # a callable reads the guard's context at each use: a schema refresh
        # (`Guard.use_schema`) reaches the loop too
        fixed = ctx if isinstance(ctx, GuardContext) else GuardContext()
        self._context: Callable[[], GuardContext] = ctx if callable(ctx) else (lambda: fixed)
        # parses of the texts the loop judges (clients repeat parameterised queries), bounded
        # by approximate bytes: a parse holds ~42x its text (AST, tokens, scopes)
        self._parses: LRUCache[str, CypherQuery | None] = parse_cache(self.ctx.settings.cache_bytes)
        self._parse_max_query = self.ctx.settings.cache_max_query_bytes

    @property
    def ctx(self) -> GuardContext:
        return self._context()

    def parse(self, text: str) -> CypherQuery | None:
        """The parsed Cypher query (None when it does not parse), cached (short ones)."""
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
        check: Check,
        execute: Execute | None = None,
        strategy: Strategy | None = None,
        parameters: Mapping[str, Any] | None = None,
        question: str | None = None,
        first: ResultStream | BackendError | None = None,
        retry_errors: bool = True,
        forward: str | None = None,
        database: str | None = None,
    ) -> RepairOutcome:
        """Run `query` (or judge `first`, its already started result) and repair it if it
        fails or comes back empty: Cypher on `execute`, or any language's `strategy` (which
        executes its queries). Raises nothing the backend raises: errors are outcomes.

        `forward` is the text the database executes for `query` (the guard's canonical
        emission, `Verdict.to_run`); the loop runs and repairs that text, and candidates run
        as their own verdict's `to_run`, never as raw candidate text. `database` names whose
        experience weights order the candidates (with `weights`)."""
        params = dict(parameters or {})
        if strategy is None:
            assert execute is not None
            strategy = CypherStrategy(self.parse, lambda: self.ctx.schema, execute, params)
        weights, language = self.weights, strategy.language
        loop = RepairLoop(
            strategy, self.settings, check, self.propose, params, question,
            None if weights is None else lambda: weights(database or "", language),
        )  # fmt: skip
        return await loop.run(query, forward or query, first, retry_errors)

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


def build_repairer(
    guard: Any, config: Any, weights: WeightsFor | None = None
) -> Repairer | None:
    """The server's repairer from `[repair]` (None when disabled), its candidates ordered by
    `weights` when given (the experience library's `weigher`): repair plugins
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
    return Repairer(settings, pm, lambda: guard.ctx, weights)
