"""Operator configuration: one TOML file, validated key by key (errors name the key).

Every key is declared once in `_KEYS` with its type and default; `conf/query-guard.toml`
documents them all (a test keeps the two in step).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from proxy.errors import ConfigError

DEFAULT_ALLOWED_PROCEDURES: tuple[str, ...] = (
    "db.labels",
    "db.relationshipTypes",
    "db.propertyKeys",
    "db.schema.*",
    "db.index.fulltext.queryNodes",
    "db.index.fulltext.queryRelationships",
    "db.index.vector.queryNodes",
    "db.index.vector.queryRelationships",
    "db.indexes",
    "db.constraints",
)

# The embedded FalkorDB's graph (and a falkordb:// URL's default graph), and the names a
# client may use for "the database this proxy serves" (Neo4j's default and home names).
DEFAULT_GRAPH = "movies"
HOME_ALIASES: tuple[str, ...] = ("neo4j", "")
ON_RULE_ERROR = ("warn", "block")

# section -> key -> (accepted types, default). Tables whose keys are free (rule options,
# similarity edge maps) are marked with `dict` as the only type of the section itself.
_KEYS: dict[str, dict[str, tuple[tuple[type, ...], Any]]] = {
    "server": {
        "bolt": ((str,), "127.0.0.1:7687"),
        "http": ((str,), ""),
        "http_max_body_bytes": ((int,), 1024 * 1024),
        "http_cors_origins": ((list,), []),
        "gremlin": ((str,), ""),
        "advertised_address": ((str,), ""),
        "data_dir": ((str,), ".query-guard"),
        "tls_cert": ((str,), ""),
        "tls_key": ((str,), ""),
        "tls_client_ca": ((str,), ""),
        "users": ((dict,), {}),
    },
    "backend": {
        "cypher": ((str,), ""),
        "gremlin": ((str,), ""),
        "gremlin_data": ((list,), []),
        "gremlin_user": ((str,), ""),
        "gremlin_password_env": ((str,), ""),
        "user": ((str,), ""),
        "password_env": ((str,), ""),
        "credentials": ((str,), "passthrough"),
        "database": ((str,), ""),
        "discovery_user": ((str,), ""),
        "discovery_password_env": ((str,), ""),
        "databases": ((list,), []),
        "tls_verify": ((bool,), True),
        "tls_ca": ((str,), ""),
        "sql": ((str,), ""),
    },
    "guard": {
        "read_only": ((bool,), True),
        "default_limit": ((int,), 1000),
        "max_limit": ((int,), 10000),
        "allowed_procedures": ((list,), list(DEFAULT_ALLOWED_PROCEDURES)),
        "allowed_functions": ((list,), []),
        "reciprocity_threshold": ((float, int), 0.9),
        "schema": ((str,), ""),
        "discover_schema": ((bool,), True),
        "schema_ttl_seconds": ((int,), 600),
        "disable": ((list,), []),
        "cache_size": ((int,), 4096),
        "on_rule_error": ((str,), "warn"),
        "sql_dialect": ((str,), "postgres"),
    },
    "audit": {
        "path": ((str,), ""),
        "include_parameters": ((bool,), False),
    },
    "compat": {
        "procedures": ((str,), "proxy"),
        "schema_statements": ((str,), "error"),
    },
    "repair": {
        "enabled": ((bool,), True),
        "budget": ((int,), 3),
        "tier1": ((bool,), True),
        "grounding": ((bool,), True),
        "relaxation": ((bool,), True),
        "speculative": ((str,), "suggest"),
    },
    # resource limits (issue 8); 0 switches one off. Read by plugins/resource_limits.py (text),
    # the Bolt front (parameters, messages, results, connections, guard budget) and backends.
    "limits": {
        "max_query_bytes": ((int,), 64 * 1024),
        "max_nesting": ((int,), 12),
        "max_parameters": ((int,), 100),
        "max_parameter_bytes": ((int,), 1024 * 1024),
        "max_parameter_depth": ((int,), 8),
        "max_message_elements": ((int,), 100_000),
        "max_result_rows": ((int,), -1),
        "max_result_bytes": ((int,), 256 * 1024 * 1024),
        "query_timeout_ms": ((int,), 30_000),
        "guard_timeout_ms": ((int,), 5_000),
        "guard_workers": ((int,), 2),
        "cache_bytes": ((int,), 64 * 1024 * 1024),
        "cache_max_query_bytes": ((int,), 16 * 1024),
        "idle_timeout_seconds": ((int, float), 600),
        "max_connections": ((int,), 1000),
        "max_connections_per_client": ((int,), 200),
    },
}
_FREE_TABLES = {"rules", "gremlin", "repair.llm"}
# `[repair.llm]`: the optional LLM repair plugin (plugins/llm_repair.py); off without base_url.
_REPAIR_LLM_KEYS: dict[str, tuple[type, ...]] = {
    "base_url": (str,),
    "model": (str,),
    "api_key_env": (str,),
    "timeout_seconds": (int, float),
    "max_tokens": (int,),
}


@dataclass(frozen=True, slots=True)
class GuardSettings:
    """What the pure pipeline needs from the configuration."""

    read_only: bool = True
    default_limit: int = 1000  # 0 = never inject a LIMIT
    max_limit: int = 10000  # 0 = never cap
    allowed_procedures: tuple[str, ...] = DEFAULT_ALLOWED_PROCEDURES
    # functions allowed in read-only mode beyond proxy/cypher/functions.py (shell patterns)
    allowed_functions: tuple[str, ...] = ()
    reciprocity_threshold: float = 0.9
    disable: tuple[str, ...] = ()
    cache_size: int = 4096
    # a rule plugin that fails to load or raises: "warn" (skip it, say so) or "block" (fail
    # closed: serve does not start / the query is blocked)
    on_rule_error: str = "warn"
    sql_dialect: str = "postgres"  # any sqlglot dialect: how SQL queries are read
    # resource limits the pure pipeline needs ([limits]; 0 = off)
    max_query_bytes: int = 64 * 1024
    max_nesting: int = 12
    cache_bytes: int = 64 * 1024 * 1024  # verdict / parse caches, approximate bytes
    cache_max_query_bytes: int = 16 * 1024  # longer queries are never cached
    # Graphs / databases a query may name (Bolt `db`, Cypher `USE`); HOME_ALIASES always count.
    allowed_databases: tuple[str, ...] = (DEFAULT_GRAPH, *HOME_ALIASES)


@dataclass(frozen=True, slots=True)
class CompatSettings:
    """`[compat]`: what the proxy answers itself for Neo4j-only client libraries."""

    procedures: str = "proxy"  # "proxy": answer system procedures; "backend": pass through
    schema_statements: str = "error"  # idempotent CREATE … IF NOT EXISTS: "error"|"acknowledge"


_COMPAT_CHOICES = {
    "procedures": ("proxy", "backend"),
    "schema_statements": ("error", "acknowledge"),
}


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

    def rule_options(self, rule: str) -> Mapping[str, Any]:
        return self.rules.get(rule, {})


def load_config(path: str | Path | None = None) -> Config:
    """Read and validate a TOML file (None: all defaults)."""
    if path is None:
        return parse_config({})
    p = Path(path)
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError("--config", f"file not found: {p}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("--config", f"{p} is not valid TOML: {exc}") from exc
    return parse_config(raw, source=str(p))


def parse_config(raw: Mapping[str, Any], source: str = "<dict>") -> Config:
    sections: dict[str, dict[str, Any]] = {}
    for name, table in raw.items():
        if name not in _KEYS and name not in _FREE_TABLES:
            known = ", ".join(sorted({*_KEYS, *_FREE_TABLES} - {"repair.llm"}))
            raise ConfigError(name, f"unknown section; known sections: {known}")
        if not isinstance(table, Mapping):
            raise ConfigError(name, "must be a table ([section])")
    for name, keys in _KEYS.items():
        table = dict(raw.get(name, {}))
        out: dict[str, Any] = {}
        for key, value in table.items():
            if key not in keys:
                if name == "repair" and key == "llm" and isinstance(value, Mapping):
                    out["llm"] = _repair_llm(value)
                    continue
                raise ConfigError(
                    f"{name}.{key}", f"unknown key; known keys: {', '.join(sorted(keys))}"
                )
            types, _ = keys[key]
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                wanted = " or ".join(t.__name__ for t in types)
                raise ConfigError(f"{name}.{key}", f"must be {wanted}, got {value!r}")
            out[key] = value
        for key, (_, default) in keys.items():
            out.setdefault(key, default)
        sections[name] = out
    limits = _limits(sections["limits"], sections["guard"])
    guard = _guard_settings(sections["guard"], limits, served_databases(sections["backend"]))
    gremlin = dict(raw.get("gremlin", {}))
    _validate_gremlin(gremlin)
    rules = raw.get("rules", {})
    for rule, opts in rules.items():
        if not isinstance(opts, Mapping):
            raise ConfigError(f"rules.{rule}", "must be a table of options for that rule")
    return Config(
        server=sections["server"],
        backend=sections["backend"],
        guard=guard,
        guard_raw=sections["guard"],
        audit=sections["audit"],
        repair=sections["repair"],
        rules={k: dict(v) for k, v in rules.items()},
        gremlin=gremlin,
        source=source,
        compat=_compat_settings(sections["compat"]),
        limits=limits,
    )


def _compat_settings(table: Mapping[str, Any]) -> CompatSettings:
    for key, choices in _COMPAT_CHOICES.items():
        if table[key] not in choices:
            wanted = " or ".join(repr(c) for c in choices)
            raise ConfigError(f"compat.{key}", f"must be {wanted}, got {table[key]!r}")
    return CompatSettings(table["procedures"], table["schema_statements"])


def _repair_llm(table: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in table.items():
        if key not in _REPAIR_LLM_KEYS:
            known = ", ".join(sorted(_REPAIR_LLM_KEYS))
            raise ConfigError(f"repair.llm.{key}", f"unknown key; known keys: {known}")
        types = _REPAIR_LLM_KEYS[key]
        if not isinstance(value, types) or isinstance(value, bool):
            wanted = " or ".join(t.__name__ for t in types)
            raise ConfigError(f"repair.llm.{key}", f"must be {wanted}, got {value!r}")
        if key in ("timeout_seconds", "max_tokens") and value <= 0:
            raise ConfigError(f"repair.llm.{key}", f"must be > 0, got {value!r}")
    return dict(table)


def _validate_gremlin(table: Mapping[str, Any]) -> None:
    """Fail at load time, naming the key, rather than on every Gremlin query."""
    from proxy.gremlin.similarity import gremlin_settings

    gremlin_settings(table)


def _limits(table: Mapping[str, Any], guard: Mapping[str, Any]) -> dict[str, Any]:
    """`[limits]` checked; `max_result_rows = -1` resolved to `[guard] max_limit`."""
    out = dict(table)
    for key, value in out.items():
        if value < 0 and not (key == "max_result_rows" and value == -1):
            raise ConfigError(f"limits.{key}", f"must be ≥ 0 (0 switches it off), got {value}")
    if out["max_result_rows"] == -1:
        out["max_result_rows"] = guard["max_limit"]
    if out["guard_workers"] < 1:
        raise ConfigError("limits.guard_workers", "must be ≥ 1")
    return out


def served_databases(backend: Mapping[str, Any]) -> tuple[str, ...]:
    """`[backend] databases`, or else the one configured graph (a falkordb:// URL's graph,
    `[backend] database`, the embedded default), plus the home aliases."""
    listed = backend["databases"]
    if not all(isinstance(x, str) and x for x in listed):
        raise ConfigError("backend.databases", "must be a list of non-empty names")
    if listed:
        return (*dict.fromkeys(listed), *HOME_ALIASES)
    url = str(backend["cypher"])
    configured = str(backend["database"])
    if not url:
        configured = DEFAULT_GRAPH
    elif url.split("://", 1)[0].lower() in ("falkordb", "falkor", "redis"):
        configured = unquote(urlsplit(url).path.lstrip("/")) or DEFAULT_GRAPH
    return (configured, *HOME_ALIASES) if configured else HOME_ALIASES


def _guard_settings(
    g: Mapping[str, Any], limits: Mapping[str, Any], databases: tuple[str, ...]
) -> GuardSettings:
    for key in ("default_limit", "max_limit", "cache_size"):
        if g[key] < 0:
            raise ConfigError(f"guard.{key}", f"must be ≥ 0 (0 switches it off), got {g[key]}")
    if g["default_limit"] and g["max_limit"] and g["default_limit"] > g["max_limit"]:
        raise ConfigError("guard.default_limit", "must not exceed guard.max_limit")
    if not 0.0 <= float(g["reciprocity_threshold"]) <= 1.0:
        raise ConfigError("guard.reciprocity_threshold", "must be between 0 and 1")
    for key in ("allowed_procedures", "allowed_functions", "disable"):
        if not all(isinstance(x, str) for x in g[key]):
            raise ConfigError(f"guard.{key}", "must be a list of strings")
    if g["on_rule_error"] not in ON_RULE_ERROR:
        raise ConfigError("guard.on_rule_error", f"must be one of {ON_RULE_ERROR}")
    from sqlglot.dialects.dialect import Dialect

    try:
        Dialect.get_or_raise(g["sql_dialect"])
    except ValueError as exc:
        raise ConfigError("guard.sql_dialect", str(exc).split("\n")[0]) from exc
    return GuardSettings(
        on_rule_error=g["on_rule_error"],
        sql_dialect=g["sql_dialect"],
        read_only=g["read_only"],
        default_limit=g["default_limit"],
        max_limit=g["max_limit"],
        allowed_procedures=tuple(g["allowed_procedures"]),
        allowed_functions=tuple(g["allowed_functions"]),
        reciprocity_threshold=float(g["reciprocity_threshold"]),
        disable=tuple(g["disable"]),
        cache_size=g["cache_size"],
        max_query_bytes=limits["max_query_bytes"],
        max_nesting=limits["max_nesting"],
        cache_bytes=limits["cache_bytes"],
        cache_max_query_bytes=limits["cache_max_query_bytes"],
        allowed_databases=databases,
    )


def documented_keys() -> dict[str, set[str]]:
    """Section -> declared keys (the example config must document each)."""
    return {name: set(keys) for name, keys in _KEYS.items()}
