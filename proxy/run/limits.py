"""The numbers of `[limits]` as one value (`Limits`), shared by the runner (parameters, the
guard's budget, result cuts) and the fronts (connections, messages, idle expiry)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    """`[limits]`: what every front enforces per connection and query (0 switches a bound
    off). One object, read by the runner and by each front's connection handling."""

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
    def from_config(cls, limits: Mapping[str, Any]) -> Limits:
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
