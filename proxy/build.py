"""A guard with everything plugged in: the three query languages, the configured rules and their
options, and the procedures the proxy answers itself.

`query_guard.guard` is the engine and knows no language; each language package builds its own
`Language` (`cypher.language`, `gremlin.language`, `sql.language`) and this module hands them
to the `Guard` (DESIGN §1: a module that needs something from a higher stage gets it passed in).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from query_guard.compat.procedures import SERVED_PROCEDURES
from query_guard.compat.served import dialect_of
from query_guard.config.load import parse_config
from query_guard.cypher.language import cypher_language
from query_guard.guard.language import Language
from query_guard.guard.options import typed_rule_options
from query_guard.guard.pipeline import Guard
from query_guard.guard.registry import build_plugin_manager
from query_guard.schema.context import GuardContext


def default_languages(sql_dialect: str = "postgres") -> dict[str, Language]:
    from query_guard.gremlin.language import gremlin_language  # sqlglot and the Gremlin parser load
    from query_guard.sql.language import sql_language  # only when a guard is built

    return {
        "cypher": cypher_language(),
        "gremlin": gremlin_language(),
        "sql": sql_language(sql_dialect),
    }


def build_guard(
    config: Any = None,
    schema: Any = None,
    disable: Iterable[str] = (),
    extra_plugins: Iterable[object] = (),
    entry_points: bool = True,
    skip_broken: bool = False,
) -> Guard:
    """A Guard from a validated `Config` (None: defaults), a schema catalog and plugin choices."""
    cfg = config if config is not None else parse_config({})
    pm = build_plugin_manager(
        disable=[*cfg.guard.disable, *disable],
        extra=extra_plugins,
        entry_points=entry_points,
        skip_broken=skip_broken and cfg.guard.on_rule_error == "warn",
    )
    serving = cfg.compat.procedures == "proxy" and not pm.is_blocked("compat_procedures")
    ctx = GuardContext(
        schema=schema,
        settings=cfg.guard,
        rule_options=typed_rule_options(pm, cfg),
        gremlin=cfg.gremlin,
        served_procedures=SERVED_PROCEDURES if serving else frozenset(),
        compat=cfg.compat,
        dialect=dialect_of(str(cfg.backend.get("cypher", ""))),
    )
    return Guard(pm, ctx, default_languages(ctx.settings.sql_dialect))
