"""Calls a hook through pluggy so that each plugin's result — or failure — is its own.

pluggy stops a hook call at the first implementation that raises and does not say which one
it was; the guard must name the failing rule and still run the others. So the hook is called
once as a whole (the common case: every rule returns its list, and pluggy's results line up
with its implementations), and only when a rule raised or returned None, once per plugin
through its own `PluginManager.subset_hook_caller` (pluggy still selects the arguments and
applies the hookspec). The per-plugin callers are rebuilt only when the plugins change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pluggy

Callers = list[tuple[str, pluggy.HookCaller]]


class PerPluginCalls:
    """For each hook name, one pluggy hook caller per implementing plugin, first-called first."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.pm = pm
        self._callers: dict[str, tuple[tuple[object, ...], Callers]] = {}

    def __call__(self, hook_name: str) -> Sequence[tuple[str, pluggy.HookCaller]]:
        """(plugin name, caller of that plugin's implementation) in the order pluggy calls them."""
        impls = getattr(self.pm.hook, hook_name).get_hookimpls()
        key = tuple(impls)
        cached = self._callers.get(hook_name)
        if cached is not None and cached[0] == key:
            return cached[1]
        # pluggy calls the last implementation first; a plugin with two implementations of one
        # hook (specname) is called once, with both
        order = dict.fromkeys((impl.plugin_name, impl.plugin) for impl in reversed(impls))
        plugins = {plugin for _, plugin in order}
        callers = [
            (name, self.pm.subset_hook_caller(hook_name, plugins - {plugin}))
            for name, plugin in order
        ]
        self._callers[hook_name] = (key, callers)
        return callers

    def results(self, hook_name: str, kwargs: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """(plugin name, a value it returned or the exception it raised), in pluggy's order; a
        plugin with two implementations of the hook may appear twice, one returning None not
        at all."""
        hook = getattr(self.pm.hook, hook_name)
        impls = hook.get_hookimpls()
        try:
            values = hook(**kwargs)
        except Exception:
            values = None  # which rule raised is found below
        if values is not None and len(values) == len(impls):
            pairs = zip(reversed(impls), values, strict=True)
            return [(impl.plugin_name, value) for impl, value in pairs]
        out: list[tuple[str, Any]] = []
        for name, caller in self(hook_name):
            try:
                out += [(name, value) for value in caller(**kwargs)]
            except Exception as exc:  # a rule's bug (or RecursionError): the caller reports it
                out.append((name, exc))
        return out


def wrapper_hooks(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    """The hooks `plugin` implements as a pluggy wrapper (`wrapper=True` / `hookwrapper=True`).

    A wrapper sees (and may replace or swallow) every other rule's findings and failures, which
    the guard keeps apart per rule: such a plugin is rejected when it is loaded."""
    return sorted(
        caller.name
        for caller in pm.get_hookcallers(plugin) or ()
        for impl in caller.get_hookimpls()
        if impl.plugin is plugin and (impl.wrapper or impl.hookwrapper)
    )
