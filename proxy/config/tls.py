"""TLS contexts for the proxy's listeners (`[server] tls_*`) and its Bolt upstreams
(`[backend] tls_verify` / `tls_ca`): TLS 1.2 or newer, certificates verified unless the
operator says otherwise."""

from __future__ import annotations

import ssl
from pathlib import Path

from query_guard.config.load import Config
from query_guard.errors import ConfigError


def listener_tls(config: Config) -> ssl.SSLContext | None:
    """The listeners' context from `[server] tls_cert` / `tls_key` / `tls_client_ca` (Bolt
    and Gremlin alike); None when none is set (plaintext)."""
    server = config.server
    cert, key = str(server["tls_cert"]), str(server["tls_key"])
    client_ca = str(server["tls_client_ca"])
    if not (cert or key or client_ca):
        return None
    return server_context(cert, key, client_ca)


def upstream_tls(url: str, config: Config) -> ssl.SSLContext | None:
    """TLS for a `bolt+s://` / `neo4j+s://` upstream, verified unless `[backend] tls_verify
    = false` (`+ssc` schemes never verify: that is what they mean); None for plain schemes."""
    scheme = url.split("://", 1)[0].lower()
    if not scheme.endswith(("+s", "+ssc")):
        return None
    verify = bool(config.backend["tls_verify"]) and not scheme.endswith("+ssc")
    return client_context(verify, str(config.backend["tls_ca"]))


def server_context(cert: str, key: str, client_ca: str = "") -> ssl.SSLContext:
    """A listener's context: the certificate chain in `cert` (PEM, leaf first) and its
    private key; with `client_ca`, clients must present a certificate that CA signed (mTLS).
    Unreadable or mismatched files raise `ConfigError` naming the key."""
    if not cert or not key:
        raise ConfigError(
            "server.tls_cert" if not cert else "server.tls_key",
            "tls_cert and tls_key go together: set both, or neither",
        )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError("server.tls_cert", f"cannot load {cert} / {key}: {exc}") from exc
    if client_ca:
        _load_ca(context, client_ca, "server.tls_client_ca")
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def client_context(verify: bool = True, ca: str = "") -> ssl.SSLContext:
    """An upstream connection's context: the system trust store (plus `ca`, when given) and
    host name checks; `verify=False` switches both off (self-signed test servers only)."""
    context = ssl.create_default_context()
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if ca:
        _load_ca(context, ca, "backend.tls_ca")
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def _load_ca(context: ssl.SSLContext, path: str, key: str) -> None:
    if not Path(path).is_file():
        raise ConfigError(key, f"file not found: {path}")
    try:
        context.load_verify_locations(cafile=path)
    except ssl.SSLError as exc:
        raise ConfigError(key, f"{path} holds no usable CA certificate: {exc}") from exc
