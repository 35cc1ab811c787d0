"""The neutral value model every backend produces and every frontend encodes.

Values in records are plain Python (None, bool, int, float, str, bytes, list, dict,
datetime.date/time/datetime, `Duration`) or one of the graph/spatial types below. Temporal
*parameters* from Bolt clients stay `Temporal`: exactly what the client sent (any year, every
nanosecond), for the backend to receive unchanged. Frontends (Bolt, HTTP) encode these;
backends (FalkorDB over RESP, Bolt upstream, embedded) decode into them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class GraphNode:
    id: int
    labels: tuple[str, ...]
    properties: dict[str, Any]
    element_id: str = ""


@dataclass(frozen=True, slots=True)
class GraphRelationship:
    id: int
    type: str
    start_id: int
    end_id: int
    properties: dict[str, Any]
    element_id: str = ""
    start_element_id: str = ""
    end_element_id: str = ""


@dataclass(frozen=True, slots=True)
class GraphPath:
    nodes: tuple[GraphNode, ...]
    relationships: tuple[GraphRelationship, ...]


@dataclass(frozen=True, slots=True)
class Duration:
    months: int = 0
    days: int = 0
    seconds: int = 0
    nanoseconds: int = 0


@dataclass(frozen=True, slots=True)
class Point:
    srid: int
    x: float
    y: float
    z: float | None = None


@dataclass(frozen=True, slots=True)
class Temporal:
    """A date, time or date-time exactly as a Bolt client sent it: the PackStream structure's
    `tag` and `fields` in the Bolt 5 form (zoned date-times as UTC seconds, nanoseconds, then
    the offset seconds or zone id). Python's datetime would drop nanoseconds and years outside
    1-9999; this keeps them, so a parameter reaches a Bolt backend byte for byte."""

    tag: int
    fields: tuple[int | str, ...]
