"""Connection caps of the Bolt front (`[limits] max_connections`, `max_connections_per_client`);
the per-query limits are the runner's (`query_guard.run.limits`)."""

from __future__ import annotations

from query_guard.run.limits import Limits


def connection_refusal(open_hosts: list[str], host: str, limits: Limits) -> str | None:
    """Why a new connection from `host` is one too many, given the client addresses of the
    open ones (None: accept it)."""
    if limits.max_connections and len(open_hosts) >= limits.max_connections:
        return f"refused: {len(open_hosts)} connections open ([limits] max_connections)"
    per_client = limits.max_connections_per_client
    if per_client and open_hosts.count(host) >= per_client:
        return (
            f"refused: {per_client} connections from {host} open "
            "([limits] max_connections_per_client)"
        )
    return None
