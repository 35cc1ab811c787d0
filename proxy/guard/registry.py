"""Builds a fresh PluginManager per guard instance: built-in rules, entry-point plugins, extras.

Built-in rules are ordinary plugins registered under their module name (`limits`,
`read_only`, …), so `--disable limits` and `[guard] disable = ["limits"]` block them by name.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable

import pluggy

from query_guard.errors import PluginError
from query_guard.guard import hookspecs
from query_guard.guard.hookcalls import wrapper_hooks

ENTRY_POINT_GROUP = "query_guard"

log = logging.getLogger(__name__)

# Rule order is DESIGN §4/§5 order; pluggy calls the last registered first, so the
# manager registers them reversed. Third-party plugins (registered later) run before them.
BUILTIN_RULES: tuple[str, ...] = (
    "query_guard.rules.resource_limits",  # first: nothing else may see an oversized or deep query
    "query_guard.rules.ambiguous_text",
    "query_guard.rules.fences",
    "query_guard.rules.falkordb_dialect",
    "query_guard.rules.compat_procedures",
    "query_guard.rules.fix_rel_types",
    "query_guard.rules.align_directions",
    "query_guard.rules.redirect_self_loops",
    "query_guard.rules.read_only",
    "query_guard.rules.admin_commands",
    "query_guard.rules.cypher_version",
    "query_guard.rules.databases",
    "query_guard.rules.limits",
    "query_guard.rules.range_limits",
    "query_guard.rules.unknown_names",
    "query_guard.rules.gremlin_read_only",
    "query_guard.rules.gremlin_scans",
    "query_guard.rules.gremlin_directions",
    "query_guard.rules.gremlin_symmetric",
    "query_guard.rules.gremlin_anchor_id",  # SEGRA P4
    "query_guard.rules.gremlin_threshold",  # P2
    "query_guard.rules.gremlin_bracket",  # P3
    "query_guard.rules.gremlin_window",  # P1
    "query_guard.rules.gremlin_limits",
    "query_guard.rules.sql_read_only",
    "query_guard.rules.sql_limits",
    "query_guard.rules.sql_unknown_names",
)

# Built-in repair plugins (DESIGN §6 `guard_repair`). They are stateful (endpoint settings),
# so each module exposes `from_config(repair_table) -> plugin | None` and
# `query_guard.repair.repairer.build_repairer` registers the instance on the guard's plugin manager
# only when configured; they implement no rule hook, so Cypher rule behaviour does not
# depend on them.
BUILTIN_REPAIR: tuple[str, ...] = ("query_guard.rules.llm_repair",)


# Security checks no configuration may switch off: `--disable` names them in vain.
ALWAYS_ON: frozenset[str] = frozenset({"ambiguous_text", "admin_commands"})


def builtin_rule_names() -> list[str]:
    return [m.rsplit(".", 1)[1] for m in BUILTIN_RULES]


def build_plugin_manager(
    disable: Iterable[str] = (),
    extra: Iterable[object] = (),
    entry_points: bool = True,
    builtins: Iterable[str] = BUILTIN_RULES,
    skip_broken: bool = False,
) -> pluggy.PluginManager:
    """A fresh manager with the built-in rules, installed entry-point rules and `extra`.

    A plugin that cannot be loaded (import error, unknown hook, wrong hook argument, a hook
    option pluggy rejects) is a `PluginError` naming it; with `skip_broken` a broken
    third-party plugin is logged and left out instead (`[guard] on_rule_error = "warn"` in
    `serve`). Built-in rules are never skipped."""
    pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
    pm.add_hookspecs(hookspecs)
    disabled = [name for name in dict.fromkeys(disable) if name not in ALWAYS_ON]
    for name in disabled:
        pm.set_blocked(name)
    modules = list(builtins)
    for module_path in reversed(modules):
        name = module_path.rsplit(".", 1)[1]
        if pm.is_blocked(name):
            continue
        try:
            module = importlib.import_module(module_path)
        except ImportError as exc:
            raise PluginError(f"built-in rule {module_path} failed to import: {exc}") from exc
        pm.register(module, name=name)
    if entry_points:
        _load_entry_points(pm, skip_broken)
    for plugin in extra:
        name = getattr(plugin, "name", None) or getattr(plugin, "__name__", None)
        if not (isinstance(name, str) and pm.is_blocked(name)):
            _register(pm, plugin, name if isinstance(name, str) else repr(plugin), skip_broken)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {exc.plugin!r}: {exc}") from exc
    known = {m.rsplit(".", 1)[1] for m in modules} | {
        name for name, plugin in pm.list_name_plugin() if plugin is not None
    }
    unknown = [n for n in disabled if n not in known and not _entry_point_named(n)]
    if unknown:
        raise PluginError(
            f"cannot disable unknown rule(s) {', '.join(unknown)}; "
            f"rules: {', '.join(sorted(known))}"
        )
    return pm


def known_rule_names(pm: pluggy.PluginManager) -> set[str]:
    """Names a `[rules.<name>]` table may use: the rules registered (or disabled) on `pm`,
    the built-in ones and every installed entry point (a skipped broken one too)."""
    from importlib.metadata import entry_points

    return (
        {name for name, _ in pm.list_name_plugin()}
        | set(builtin_rule_names())
        | {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    )


def _load_entry_points(pm: pluggy.PluginManager, skip_broken: bool) -> None:
    """Like pluggy's `load_setuptools_entrypoints`, one plugin at a time, so that a broken
    package is named in the error (or skipped) instead of aborting the whole load."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if pm.is_blocked(ep.name) or pm.has_plugin(ep.name):
            continue
        source = f"{ep.name} = {ep.value}" + (f" (from {ep.dist.name})" if ep.dist else "")
        try:
            plugin = ep.load()
        except Exception as exc:
            _broken(f"rule plugin {source} failed to import: {exc!r}", skip_broken, exc)
            continue
        _register(pm, plugin, ep.name, skip_broken, source)


def _register(
    pm: pluggy.PluginManager, plugin: object, name: str, skip_broken: bool, source: str = ""
) -> None:
    try:
        pm.register(plugin, name=name)
    except (pluggy.PluginValidationError, ValueError) as exc:
        _broken(f"rule plugin {source or name} is invalid: {exc}", skip_broken, exc)
        return
    wrappers = wrapper_hooks(pm, plugin)
    if wrappers:
        pm.unregister(plugin)
        problem = (
            f"rule plugin {source or name} is invalid: its {', '.join(wrappers)} is a pluggy "
            "wrapper (wrapper=True or hookwrapper=True); query-guard calls each rule on its own, "
            "so a rule hook must be a plain @hookimpl returning findings"
        )
        _broken(problem, skip_broken, None)


def _broken(message: str, skip_broken: bool, exc: Exception | None) -> None:
    if not skip_broken:
        raise PluginError(message) from exc
    log.error("%s; skipped ([guard] on_rule_error = \"warn\")", message)


def _entry_point_named(name: str) -> bool:
    from importlib.metadata import entry_points

    return any(ep.name == name for ep in entry_points(group=ENTRY_POINT_GROUP))
