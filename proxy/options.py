"""Typed options for rule plugins: a plugin declares `OPTIONS = {"key": Option(...)}` and gets
its `[rules.<name>]` table validated and typed (defaults filled in) when the guard is built.

Example (in a rule module)::

    OPTIONS = {"min_similarity": Option(float, 0.6, "similarity a replacement name needs")}

An unknown key, a value of the wrong type or outside `choices` is a `ConfigError` naming
`rules.<name>.<key>`. Plugins that declare no `OPTIONS` get their table as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from proxy.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Option:
    """One option of a rule: its type (int options also take no bool), default, meaning."""

    type: type
    default: Any
    doc: str
    choices: tuple[Any, ...] = ()

    def coerce(self, key: str, value: Any) -> Any:
        wanted = self.type
        if wanted is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, wanted) or (isinstance(value, bool) and wanted is not bool):
            raise ConfigError(key, f"must be {wanted.__name__}, got {value!r}")
        if wanted is list and not all(isinstance(x, str) for x in value):
            raise ConfigError(key, "must be a list of strings")
        if self.choices and value not in self.choices:
            raise ConfigError(key, f"must be one of {list(self.choices)}, got {value!r}")
        return value


def resolve_options(
    rule: str, declared: Mapping[str, Option], given: Mapping[str, Any]
) -> dict[str, Any]:
    """`given` validated against `declared`, with every default filled in."""
    out: dict[str, Any] = {}
    for key, value in given.items():
        if key not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise ConfigError(f"rules.{rule}.{key}", f"unknown option; {rule} takes: {known}")
        out[key] = declared[key].coerce(f"rules.{rule}.{key}", value)
    for key, option in declared.items():
        out.setdefault(key, option.default)
    return out


def declared_options(plugin: object) -> Mapping[str, Option] | None:
    options = getattr(plugin, "OPTIONS", None)
    return options if isinstance(options, Mapping) else None
