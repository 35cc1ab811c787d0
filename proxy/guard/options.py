"""Typed options for rule plugins: a plugin declares `OPTIONS = {"key": Option(...)}` and gets
its `[rules.<name>]` table validated and typed (defaults filled in) when the guard is built.

Example (in a rule module)::

    OPTIONS = {"min_similarity": Option(float, 0.6, "similarity a replacement name needs")}

The options become a strict pydantic model (`options_model`), like every configuration table:
an unknown key, a value of the wrong type (no coercion: `1` is no bool, `"3"` no int; an int
is accepted for a float) or outside `choices` is a `ConfigError` naming `rules.<name>.<key>`.
`type` may be any annotation pydantic understands (`int`, `list[str]`, `Literal[...]`); a
bare `list` means a list of strings. A built-in rule without `OPTIONS` takes none; a
third-party plugin that declares no `OPTIONS` gets its table as written (API version 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_origin

from pydantic import Field, ValidationError, create_model

from query_guard.config.describe import describe_all, did_you_mean, dotted
from query_guard.config.schema import Table
from query_guard.errors import ConfigError

if TYPE_CHECKING:
    import pluggy

    from query_guard.config.load import Config


@dataclass(frozen=True, slots=True)
class Option:
    """One option of a rule: its type, default, meaning, and (optionally) allowed values."""

    type: Any
    default: Any
    doc: str
    choices: tuple[Any, ...] = ()

    def annotation(self) -> Any:
        if self.choices:
            return Literal[self.choices]
        return list[str] if self.type is list else self.type

    @property
    def type_name(self) -> str:
        plain = isinstance(self.type, type) and get_origin(self.type) is None
        return self.type.__name__ if plain else str(self.type).replace("typing.", "")


class RuleOptions(Table):
    """Base of the models built from `OPTIONS`."""

    noun: ClassVar[str] = "option"


def options_model(rule: str, declared: Mapping[str, Option]) -> type[RuleOptions]:
    """The strict model of one rule's `[rules.<rule>]` table (fields aliased by option name,
    so an option may be called anything, `schema` or `copy` too)."""
    fields: dict[str, Any] = {
        f"o{i}": (opt.annotation(), Field(opt.default, alias=key, description=opt.doc))
        for i, (key, opt) in enumerate(declared.items())
    }
    return create_model(f"rules.{rule}", __base__=RuleOptions, **fields)


def resolve_options(
    rule: str, declared: Mapping[str, Option], given: Mapping[str, Any]
) -> dict[str, Any]:
    """`given` validated against `declared`, with every default filled in."""
    model = options_model(rule, declared)
    try:
        return model.model_validate(dict(given)).model_dump(by_alias=True)
    except ValidationError as exc:
        at = ("rules", rule)
        found = [ConfigError(dotted(p), why) for p, why in describe_all(exc, model, at)]
        raise ConfigError.combine(found) from None


def declared_options(plugin: object) -> Mapping[str, Option] | None:
    options = getattr(plugin, "OPTIONS", None)
    return options if isinstance(options, Mapping) else None


def typed_rule_options(pm: pluggy.PluginManager, cfg: Config) -> dict[str, Mapping[str, Any]]:
    """Each registered rule's `[rules.<name>]` table, validated and typed by its `OPTIONS`; a
    table for a rule that is not installed is an error naming it (with the file line)."""
    from query_guard.guard.registry import builtin_rule_names, known_rule_names

    known, builtin = known_rule_names(pm), set(builtin_rule_names())
    out: dict[str, Mapping[str, Any]] = dict(cfg.rules)
    errors: list[ConfigError] = []
    for name in cfg.rules:
        if name not in known:
            installed = sorted(known)
            hint = did_you_mean(name, installed)
            problem = f"unknown rule{hint}; installed rules: {', '.join(installed)}"
            errors.append(ConfigError(f"rules.{name}", problem))
    for name, plugin in pm.list_name_plugin():
        if plugin is None:  # disabled: its table is kept, not checked
            continue
        declared = declared_options(plugin)
        if declared is None and name in builtin and name in cfg.rules:
            declared = {}  # a built-in rule without OPTIONS takes none
        if declared is not None:
            try:
                out[name] = resolve_options(name, declared, cfg.rules.get(name, {}))
            except ConfigError as exc:
                errors.extend(exc.errors)
    if errors:
        raise ConfigError.combine([cfg.located(e) for e in errors]) from None
    return out
