"""The Bolt server states a connection moves through (the spec's "server state")."""

from __future__ import annotations

from enum import StrEnum


class State(StrEnum):
    CONNECTED = "CONNECTED"
    AUTHENTICATION = "AUTHENTICATION"
    READY = "READY"
    STREAMING = "STREAMING"
    TX_READY = "TX_READY"
    TX_STREAMING = "TX_STREAMING"
    FAILED = "FAILED"
    INTERRUPTED = "INTERRUPTED"
    DEFUNCT = "DEFUNCT"
