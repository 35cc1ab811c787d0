"""The Cypher backend for a `[backend] cypher` URL: FalkorDB over RESP, or a Bolt server
through our relay client (`proxy.backends.bolt_relay`), with the configured credentials and
TLS."""

from __future__ import annotations

import os
from typing import Any

from proxy.config import Config
from proxy.errors import ConfigError
from proxy.tls import upstream_tls

CREDENTIAL_MODES = ("passthrough", "configured")


def make_backend(url: str, config: Config) -> Any:
    """The backend for a `[backend] cypher` URL (writes refused upstream too when read-only)."""
    scheme = url.split("://", 1)[0].lower()
    read_only = config.guard.read_only
    if scheme in ("falkordb", "falkor", "redis"):
        from proxy.backends.falkordb import FalkorDBBackend

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
        from proxy.backends.bolt_relay import BoltRelayBackend

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


