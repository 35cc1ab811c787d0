"""Builds a fresh PluginManager per guard instance: built-in rules, entry-point plugins, extras.

Built-in rules are ordinary plugins registered under their module name (`limits`,
`read_only`, …), so `--disable limits` and `[guard] disable = ["limits"]` block them by name.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

import pluggy

from proxy import hookspecs
from proxy.errors import PluginError

ENTRY_POINT_GROUP = "query_guard"

# Rule order is DESIGN §4/§5 order; pluggy calls the last registered first, so the
# manager registers them reversed. Third-party plugins (registered later) run before them.
BUILTIN_RULES: tuple[str, ...] = (
    "plugins.fences",
    "plugins.fix_rel_types",
    "plugins.align_directions",
    "plugins.redirect_self_loops",
    "plugins.read_only",
    "plugins.databases",
    "plugins.limits",
    "plugins.unknown_names",
    "plugins.gremlin_read_only",
    "plugins.gremlin_scans",
    "plugins.gremlin_directions",
    "plugins.gremlin_symmetric",
    "plugins.gremlin_similarity",
    "plugins.gremlin_limits",
)

# Built-in repair plugins (DESIGN §6 `guard_repair`). They are stateful (endpoint settings),
# so each module exposes `from_config(repair_table) -> plugin | None` and
# `proxy.repair.build_repairer` registers the instance on the guard's plugin manager only when
# configured; they implement no rule hook, so Cypher rule behaviour does not depend on them.
BUILTIN_REPAIR: tuple[str, ...] = ("plugins.llm_repair",)


def builtin_rule_names() -> list[str]:
    return [m.rsplit(".", 1)[1] for m in BUILTIN_RULES]


def build_plugin_manager(
    disable: Iterable[str] = (),
    extra: Iterable[object] = (),
    entry_points: bool = True,
    builtins: Iterable[str] = BUILTIN_RULES,
) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
    pm.add_hookspecs(hookspecs)
    disabled = list(dict.fromkeys(disable))
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
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    for plugin in extra:
        name = getattr(plugin, "name", None) or getattr(plugin, "__name__", None)
        if not (isinstance(name, str) and pm.is_blocked(name)):
            pm.register(plugin, name=name if isinstance(name, str) else None)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(str(exc)) from exc
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


def _entry_point_named(name: str) -> bool:
    from importlib.metadata import entry_points

    return any(ep.name == name for ep in entry_points(group=ENTRY_POINT_GROUP))
