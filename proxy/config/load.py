"""Operator configuration: one TOML file, validated by the schema in `proxy/config/schema.py`
(strict pydantic models); an error names the dotted key and the file line
(`conf.toml:12: guard.default_limit: must be int, got 'x'`).

`conf/query-guard.toml` documents every key (a test keeps the two in step). Consumers read
`Config`: the `server` / `backend` / `audit` / `repair` / `limits` / `experience` / `plan` /
`export` tables as Mappings, the
pipeline's `GuardSettings` and `CompatSettings`, `rule_options(rule)`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from pydantic import ValidationError

from query_guard.config.describe import describe_all, dotted, key_path
from query_guard.config.locate import KeyPath, locate
from query_guard.config.schema import (
    DEFAULT_ALLOWED_PROCEDURES,
    ConfigFile,
    ContextTable,
    ExperienceTable,
    ExportTable,
    PlanTable,
    Table,
    keys_of,
    table_model,
)
from query_guard.errors import ConfigError

__all__ = [
    "DEFAULT_ALLOWED_PROCEDURES", "DEFAULT_GRAPH", "HOME_ALIASES", "CompatSettings", "Config",
    "ConfigError", "GuardSettings", "documented_keys", "load_config", "parse_config",
    "served_databases",
]  # fmt: skip

# The embedded FalkorDB's graph (and a falkordb:// URL's default graph), and the names a
# client may use for "the database this proxy serves" (Neo4j's default and home names).
DEFAULT_GRAPH = "movies"
HOME_ALIASES: tuple[str, ...] = ("neo4j", "")


@dataclass(frozen=True, slots=True)
class GuardSettings:
    """What the pure pipeline needs from the configuration."""

    read_only: bool = True
    default_limit: int = 1000  # 0 = never inject a LIMIT
    max_limit: int = 10000  # 0 = never cap
    allowed_procedures: tuple[str, ...] = DEFAULT_ALLOWED_PROCEDURES
    # functions allowed in read-only mode beyond proxy/cypher/functions.py (shell patterns)
    allowed_functions: tuple[str, ...] = ()
    # SQL functions allowed beyond proxy/sql/functions.py (shell patterns; Cypher's list apart)
    sql_allowed_functions: tuple[str, ...] = ()
    reciprocity_threshold: float = 0.9
    disable: tuple[str, ...] = ()
    cache_size: int = 4096
    # a rule plugin that fails to load or raises: "warn" (skip it, say so) or "block" (fail
    # closed: serve does not start / the query is blocked)
    on_rule_error: str = "warn"
    sql_dialect: str = "postgres"  # any sqlglot dialect: how SQL queries are read
    cypher_version: str = "5"  # "25": the database speaks Cypher 25 (plugins/cypher_version.py)
    # resource limits the pure pipeline needs ([limits]; 0 = off)
    max_query_bytes: int = 64 * 1024
    max_nesting: int = 12
    max_query_tokens: int = 2000
    max_range_size: int = 1_000_000  # elements one range() may build (plugins/range_limits.py)
    cache_bytes: int = 64 * 1024 * 1024  # verdict / parse caches, approximate bytes
    cache_max_query_bytes: int = 16 * 1024  # longer queries are never cached
    # Graphs / databases a query may name (Bolt `db`, Cypher `USE`); HOME_ALIASES always count.
    allowed_databases: tuple[str, ...] = (DEFAULT_GRAPH, *HOME_ALIASES)


@dataclass(frozen=True, slots=True)
class CompatSettings:
    """`[compat]`: what the proxy answers itself for Neo4j-only client libraries."""

    procedures: str = "proxy"  # "proxy": answer system procedures; "backend": pass through
    schema_statements: str = "error"  # idempotent CREATE … IF NOT EXISTS: "error"|"acknowledge"
    # a proxy-answered procedure re-discovers a catalog older than this first (0: always)
    schema_max_age_seconds: float = 60.0


@dataclass(frozen=True)
class Config:
    """The whole validated configuration (raw tables kept for sections owned by subsystems)."""

    server: Mapping[str, Any]
    backend: Mapping[str, Any]
    guard: GuardSettings
    guard_raw: Mapping[str, Any]
    audit: Mapping[str, Any]
    repair: Mapping[str, Any]
    rules: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    gremlin: Mapping[str, Any] = field(default_factory=dict)
    source: str = "<defaults>"
    compat: CompatSettings = field(default_factory=CompatSettings)
    limits: Mapping[str, Any] = field(default_factory=dict)
    experience: Mapping[str, Any] = field(default_factory=lambda: _dump(ExperienceTable()))
    context: Mapping[str, Any] = field(default_factory=lambda: _dump(ContextTable()))
    plan: Mapping[str, Any] = field(default_factory=lambda: _dump(PlanTable()))
    export: Mapping[str, Any] = field(default_factory=lambda: _dump(ExportTable()))
    text: str = field(default="", repr=False, compare=False)  # the TOML, to locate keys

    def rule_options(self, rule: str) -> Mapping[str, Any]:
        return self.rules.get(rule, {})

    def error(self, path: KeyPath, problem: str) -> ConfigError:
        """A `ConfigError` for `path`, with this file's name and the key's line."""
        return _error(path, problem, self.source, self.text)

    def located(self, exc: ConfigError) -> ConfigError:
        """`exc` (raised by code that saw only a table) with the file and line added."""
        if exc.line is not None or not self.text:
            return exc
        return self.error(key_path(exc.key), exc.problem)


def load_config(path: str | Path | None = None) -> Config:
    """Read and validate a TOML file (None: all defaults)."""
    if path is None:
        return parse_config({})
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
        raw = tomllib.loads(text)
    except FileNotFoundError as exc:
        raise ConfigError("--config", f"file not found: {p}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("--config", f"{p} is not valid TOML: {exc}") from exc
    return parse_config(raw, source=str(p), text=text)


def parse_config(raw: Mapping[str, Any], source: str = "<dict>", text: str = "") -> Config:
    """Validate `raw` (a parsed TOML document); `text` (its source) lets errors name lines."""
    try:
        model = ConfigFile.model_validate(dict(raw))
    except ValidationError as exc:
        found = [_error(p, why, source, text) for p, why in describe_all(exc, ConfigFile)]
        raise ConfigError.combine(found) from None
    tables = {name: _dump(getattr(model, name)) for name in ("server", "backend", "guard")}
    repair = _dump(model.repair)
    if repair.get("llm") is None:
        repair.pop("llm", None)
    limits = _dump(model.limits)
    if limits["max_result_rows"] == -1:  # never stream more rows than the LIMIT cap
        limits["max_result_rows"] = tables["guard"]["max_limit"]
    databases = served_databases(tables["backend"])
    return Config(
        server=tables["server"],
        backend=tables["backend"],
        guard=_guard_settings({**limits, **tables["guard"]}, databases),
        guard_raw=tables["guard"],
        audit=_dump(model.audit),
        repair=repair,
        rules={k: dict(v) for k, v in model.rules.items()},
        gremlin=dict(raw.get("gremlin", {})),
        source=source,
        compat=CompatSettings(**_dump(model.compat)),
        limits=limits,
        experience=_dump(model.experience),
        context=_dump(model.context),
        plan=_dump(model.plan),
        export=_dump(model.export),
        text=text,
    )


def _dump(table: Table) -> dict[str, Any]:
    return table.model_dump(by_alias=True)


def _error(path: KeyPath, problem: str, source: str, text: str) -> ConfigError:
    line = locate(text, path) if text else None
    return ConfigError(dotted(path), problem, source if text else "", line)


def served_databases(backend: Mapping[str, Any]) -> tuple[str, ...]:
    """`[backend] databases`, or else the one configured graph (a falkordb:// URL's graph,
    `[backend] database`, the embedded default), plus the home aliases."""
    listed = backend["databases"]
    if listed:
        return (*dict.fromkeys(listed), *HOME_ALIASES)
    url = str(backend["cypher"])
    configured = str(backend["database"])
    if not url:
        configured = DEFAULT_GRAPH
    elif url.split("://", 1)[0].lower() in ("falkordb", "falkor", "redis"):
        configured = unquote(urlsplit(url).path.lstrip("/")) or DEFAULT_GRAPH
    return (configured, *HOME_ALIASES) if configured else HOME_ALIASES


def _guard_settings(values: Mapping[str, Any], databases: tuple[str, ...]) -> GuardSettings:
    """`[guard]` (and the `[limits]` the pure pipeline needs): every `GuardSettings` field
    takes the table value of the same name (lists become tuples)."""
    names = {f.name for f in fields(GuardSettings)} - {"allowed_databases"}
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items() if k in names}
    return GuardSettings(**kwargs, allowed_databases=databases)


def documented_keys() -> dict[str, set[str]]:
    """Section -> declared keys (the example config must document each); `[repair.llm]`,
    `[gremlin.*]` and `[rules.*]` are documented as commented examples."""
    out: dict[str, set[str]] = {}
    for name, f in ConfigFile.model_fields.items():
        model = table_model(f.annotation)
        if model is None or name == "gremlin":
            continue
        nested = {k for k, sub in model.model_fields.items() if table_model(sub.annotation)}
        out[name] = set(keys_of(model)) - nested
    return out


def declared_keys() -> list[KeyPath]:
    """Every key the schema declares, as paths (`("repair", "llm", "model")`), tables
    excluded: what tests/unit/test_config.py looks for a reader of."""
    out: list[KeyPath] = []

    def walk(model: type[Table], prefix: KeyPath) -> None:
        for name, f in model.model_fields.items():
            key = (*prefix, f.alias or name)
            sub = table_model(f.annotation)
            if sub is None:
                out.append(key)
            else:
                walk(sub, key)

    walk(ConfigFile, ())
    return [k for k in out if k[0] != "rules"]
