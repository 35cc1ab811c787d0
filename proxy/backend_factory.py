"""The backends for the `[backend]` URLs: for `cypher`, FalkorDB over RESP or a Bolt server
through our relay client (`query_guard.backends.bolt_relay`), with the configured credentials and
TLS; for `sql`, SQLite or PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from query_guard.config import Config
from query_guard.errors import ConfigError
from query_guard.sql.backend import SqlBackend
from query_guard.tls import upstream_tls

CREDENTIAL_MODES = ("passthrough", "configured")


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
