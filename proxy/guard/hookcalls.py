"""Calls a hook's implementations so that each plugin's result — or failure — is its own.

pluggy stops a hook call at the first implementation that raises and does not say which one
it was; the guard must name the failing rule and still run the others. So the implementations
pluggy registered (its order, its argument selection) are called one by one here, each failure
caught on its own. A hook with a wrapper or a firstresult spec is called through pluggy as a
whole instead, and only when a rule raised or returned None, once per plugin through its own
`PluginManager.subset_hook_caller`. Both are rebuilt only when the plugins change."""

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
        # per hook: its implementations when last seen, and (plugin name, function, argument
        # names) in call order, or None when the hook must go through pluggy
        self._plain: dict[str, tuple[tuple[object, ...], list[tuple[str, Any, Any]] | None]] = {}

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
        plugin with two implementations of the hook may appear twice, one returning None (or,
        called here one by one, an empty list) not at all.

        The implementations pluggy registered are called here one by one, with the arguments
        each names, as pluggy's own loop would (the hot path: a rule's failure is then its own
        without calling every rule again); a wrapper or a hook with a firstresult spec goes
        through pluggy (`_through_pluggy`)."""
        hook = getattr(self.pm.hook, hook_name)
        impls = hook.get_hookimpls()
        key = tuple(impls)
        cached = self._plain.get(hook_name)
        if cached is None or cached[0] != key:
            spec = hook.spec
            plain = not (spec is not None and spec.opts.get("firstresult")) and not any(
                impl.wrapper or impl.hookwrapper or impl.kwargnames for impl in impls
            )
            calls = [(i.plugin_name, i.function, i.argnames) for i in reversed(impls)]
            cached = self._plain[hook_name] = (key, calls if plain else None)
        calls = cached[1]
        if calls is None:
            return self._through_pluggy(hook, impls, kwargs)
        out: list[tuple[str, Any]] = []
        argument = kwargs.__getitem__
        arguments: dict[tuple[str, ...], tuple[Any, ...]] = {}  # most rules name the same ones
        for name, function, argnames in calls:
            try:
                args = arguments.get(argnames)
                if args is None:
                    args = arguments[argnames] = tuple(map(argument, argnames))
                value = function(*args)
            except Exception as exc:  # a rule's bug (or RecursionError): the caller reports it
                out.append((name, exc))
                continue
            if value is not None and (type(value) is not list or value):
                out.append((name, value))  # most rules find nothing: not their empty lists
        return out

    def _through_pluggy(
        self, hook: pluggy.HookCaller, impls: list[Any], kwargs: Mapping[str, Any]
    ) -> list[tuple[str, Any]]:
        """`results` by calling the hook as a whole, and only when a rule raised or returned
        None, once per plugin through its own subset hook caller."""
        try:
            values = hook(**kwargs)
        except Exception:
            values = None  # which rule raised is found below
        if values is not None and len(values) == len(impls):
            pairs = zip(reversed(impls), values, strict=True)
            return [(impl.plugin_name, value) for impl, value in pairs]
        out: list[tuple[str, Any]] = []
        for name, caller in self(hook.name):
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
