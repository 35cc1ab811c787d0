"""Resource limits of the Bolt front (`[limits]`): parameter size, the guard's time budget in a
bounded thread pool (so a huge query never freezes the event loop), result caps.

Each refusal is a blocked `Verdict` with its own finding code (`LIM.PARAMETERS`,
`LIM.TIMEOUT`), so the client gets the same FAILURE shape as for any blocked query.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from proxy.model import Finding, Severity


@dataclass(frozen=True)
class BoltLimits:
    """What one Bolt server enforces per connection and query (0 switches a bound off)."""

    max_parameters: int = 100
    max_parameter_bytes: int = 1024 * 1024
    max_parameter_depth: int = 8
    max_message_elements: int = 100_000
    max_result_rows: int = 10_000
    max_result_bytes: int = 256 * 1024 * 1024
    guard_timeout: float = 5.0  # seconds
    guard_workers: int = 2
    idle_timeout: float = 600.0  # seconds without a complete message
    max_connections: int = 1000
    max_connections_per_client: int = 200

    @classmethod
    def from_config(cls, limits: Mapping[str, Any]) -> BoltLimits:
        defaults = cls()
        return cls(
            max_parameters=limits.get("max_parameters", defaults.max_parameters),
            max_parameter_bytes=limits.get("max_parameter_bytes", defaults.max_parameter_bytes),
            max_parameter_depth=limits.get("max_parameter_depth", defaults.max_parameter_depth),
            max_message_elements=limits.get("max_message_elements", defaults.max_message_elements),
            max_result_rows=limits.get("max_result_rows", defaults.max_result_rows),
            max_result_bytes=limits.get("max_result_bytes", defaults.max_result_bytes),
            guard_timeout=limits.get("guard_timeout_ms", defaults.guard_timeout * 1000) / 1000,
            guard_workers=limits.get("guard_workers", defaults.guard_workers),
            idle_timeout=float(limits.get("idle_timeout_seconds", defaults.idle_timeout)),
            max_connections=limits.get("max_connections", defaults.max_connections),
            max_connections_per_client=limits.get(
                "max_connections_per_client", defaults.max_connections_per_client
            ),
        )


def connection_refusal(open_hosts: list[str], host: str, limits: BoltLimits) -> str | None:
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


def result_size_finding(rows: int, reason: str) -> Finding:
    return Finding(
        "LIM.RESULT_SIZE",
        Severity.WARNING,
        f"the result was cut off after {rows} records: {reason}. "
        "Add a smaller LIMIT, aggregate, or return fewer/smaller columns",
        (0, 0),
        rule="bolt",
    )
