"""Where the listeners of `[server]` may listen: `host:port` values, and the refusal to serve
an embedded database beyond this machine without checking who connects."""

from __future__ import annotations

from query_guard.config.auth import is_loopback
from query_guard.config.load import Config
from query_guard.errors import ConfigError


def split_address(value: str, key: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ConfigError(key, f"must look like 'host:port', got {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def check_exposure(config: Config) -> None:
    """An embedded database has no accounts of its own, so a listener serving it beyond this
    machine must check who connects: with `[server] users` (Bolt logon, Gremlin SASL, HTTP
    Basic) or mTLS (`[server] tls_client_ca`). Raises `ConfigError`."""
    server, backend = config.server, config.backend
    mtls = bool(server["tls_client_ca"])
    listeners = (
        ("bolt", not backend["cypher"], bool(server["users"]) or mtls),
        ("http", not backend["cypher"] or not backend["gremlin"], bool(server["users"]) or mtls),
        ("gremlin", not backend["gremlin"], bool(server["users"]) or mtls),
    )
    for key, embedded, checked in listeners:
        address = str(server[key])
        if not address or not embedded or checked:
            continue
        host, _ = split_address(address, f"server.{key}")
        if not is_loopback(host):
            fix = "set [server] users (query-guard hash-password) or "
            raise ConfigError(
                f"server.{key}",
                f"the embedded database would be served on {host} to anyone: {fix}require "
                "client certificates (tls_client_ca), or listen on a loopback address",
            )
