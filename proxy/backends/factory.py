"""The backends for the `[backend]` URLs (and for a bare database URI: `query-guard schema
--uri`, `export`): for `cypher`, FalkorDB over RESP or a Bolt server
through our relay client (`query_guard.backends.bolt_relay`), with the configured credentials and
TLS; for `sql`, SQLite or PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from query_guard.backend import Backend
from query_guard.config.load import Config
from query_guard.config.tls import upstream_tls
from query_guard.errors import ConfigError
from query_guard.schema.discovery import (
    DEFAULT_RECIPROCITY_THRESHOLD,
    DEFAULT_SAMPLE,
    discover_schema,
)
from query_guard.sql.backend import SqlBackend

CREDENTIAL_MODES = ("passthrough", "configured")
FALKORDB_SCHEMES = {"falkordb", "falkor", "redis"}
BOLT_SCHEMES = {"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"}


def make_backend(url: str, config: Config) -> Any:
    """The backend for a `[backend] cypher` URL (writes refused upstream too when read-only)."""
    scheme = url.split("://", 1)[0].lower()
    read_only = config.guard.read_only
    if scheme in ("falkordb", "falkor", "redis"):
        from query_guard.backends.falkordb import FalkorDBBackend

        timeout = int(config.limits.get("query_timeout_ms", 0))
        return FalkorDBBackend(url, read_only=read_only, query_timeout_ms=timeout or None)
    if scheme.startswith(("bolt", "neo4j")):
        mode = str(config.backend["credentials"])
        if mode not in CREDENTIAL_MODES:
            raise ConfigError("backend.credentials", f"must be one of {CREDENTIAL_MODES}")
        options: dict[str, Any] = {
            "auth": configured_auth(config, required=mode == "configured"),
            "database": str(config.backend["database"]) or None,
            "read_only": read_only,
            "passthrough": mode == "passthrough",
            "query_timeout_ms": int(config.limits.get("query_timeout_ms", 0)),
            "max_abandoned": int(config.limits.get("max_abandoned_queries", 0)),
        }
        from query_guard.backends.bolt_relay import BoltRelayBackend

        return BoltRelayBackend(url, tls=upstream_tls(url, config), **options)
    raise ConfigError("backend.cypher", f"unsupported URL scheme {scheme!r}")


def configured_auth(config: Config, required: bool) -> tuple[str, str] | None:
    """(user, password from `password_env`); in pass-through mode they are optional and only
    serve schema discovery and clients that send no credentials."""
    user = str(config.backend["user"])
    env = str(config.backend["password_env"])
    if not user:
        if required:
            raise ConfigError("backend.user", 'credentials = "configured" needs a user')
        return None
    if env and env not in os.environ:
        raise ConfigError("backend.password_env", f"environment variable {env} is not set")
    return user, os.environ.get(env, "") if env else ""


def make_sql_backend(
    url: str, data_dir: str | Path, limits: Mapping[str, Any] | None = None
) -> SqlBackend | None:
    """The SQL backend for a `[backend] sql` URL, within `[limits]` (`query_timeout_ms`,
    `max_result_bytes`):

        ""                      embedded SQLite with Northwind, built on first start in data_dir
        "off"                   no SQL backend (SQL can still be checked, not run)
        "sqlite:///abs/path.db" an existing SQLite file, opened read-only
        "postgresql://…"        PostgreSQL (asyncpg), every transaction read-only
    """
    url = url.strip()
    limits = limits if limits is not None else {}
    timeout_ms = int(limits.get("query_timeout_ms", 30_000))
    bounds = {"timeout_ms": timeout_ms,
              "max_result_bytes": int(limits.get("max_result_bytes", 256 * 1024 * 1024))}
    if url == "off":
        return None
    if url == "":
        from query_guard.backends.sql_sqlite import SqliteBackend, northwind_path

        return SqliteBackend(northwind_path(Path(data_dir)), northwind=True, **bounds)
    if url.startswith("sqlite:"):
        from query_guard.backends.sql_sqlite import SqliteBackend

        path = url.removeprefix("sqlite:").removeprefix("//")
        return SqliteBackend(Path(path), **bounds)
    if url.startswith(("postgresql://", "postgres://")):
        try:
            from query_guard.backends.sql_postgres import PostgresBackend
        except ModuleNotFoundError as exc:  # asyncpg: the `postgres` extra
            raise ConfigError(
                "backend.sql", f"PostgreSQL needs the postgres extra ({exc}): "
                "pip install 'query-guard[postgres]'"
            ) from exc
        return PostgresBackend(
            url, statement_timeout_ms=timeout_ms, max_result_bytes=bounds["max_result_bytes"]
        )
    raise ConfigError("backend.sql", "use '', 'off', 'sqlite:///path' or 'postgresql://…'")


def backend_for_uri(uri: str) -> Backend:
    """A backend for `falkordb://host:port/graph` or `bolt://` / `neo4j://` URIs (user and
    password may ride in the URI; a path names the Neo4j database)."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme in FALKORDB_SCHEMES:
        from query_guard.backends.falkordb import FalkorDBBackend

        return FalkorDBBackend(uri)
    if scheme in BOLT_SCHEMES:
        from query_guard.backends.bolt_relay import BoltRelayBackend

        auth = None
        if parts.username is not None:
            auth = (unquote(parts.username), unquote(parts.password or ""))
        netloc = parts.hostname or "localhost"
        if parts.port:
            netloc = f"{netloc}:{parts.port}"
        database = unquote(parts.path.strip("/")) or None
        url = urlunsplit((scheme, netloc, "", parts.query, ""))
        return BoltRelayBackend(url, auth, database)
    raise ValueError(
        f"unsupported database URI {uri!r}: use falkordb://host:port/graph, bolt:// or neo4j://"
    )


async def discover_from_uri(
    uri: str,
    sample: int = DEFAULT_SAMPLE,
    reciprocity_threshold: float = DEFAULT_RECIPROCITY_THRESHOLD,
) -> dict[str, Any]:
    """Connect to `uri`, discover its schema, disconnect."""
    backend = backend_for_uri(uri)
    await backend.start()
    try:
        return await discover_schema(backend, sample, reciprocity_threshold)
    finally:
        await backend.close()
