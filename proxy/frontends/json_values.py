"""Result values as JSON, the way Neo4j's HTTP APIs write them (plain JSON, not typed).

Nodes become `{"elementId", "labels", "properties"}`, relationships
`{"elementId", "type", "startNodeElementId", "endNodeElementId", "properties"}`, paths the
alternating list of their nodes and relationships, temporal values ISO 8601 text, durations
`P…` text, points `{"srid", "x", "y"[, "z"]}`, bytes base64.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
from typing import Any

from proxy.backends.base import Duration, GraphNode, GraphPath, GraphRelationship, Point


def to_json(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, GraphNode):
        return {
            "elementId": value.element_id or str(value.id),
            "labels": list(value.labels),
            "properties": to_json(value.properties),
        }
    if isinstance(value, GraphRelationship):
        return {
            "elementId": value.element_id or str(value.id),
            "type": value.type,
            "startNodeElementId": value.start_element_id or str(value.start_id),
            "endNodeElementId": value.end_element_id or str(value.end_id),
            "properties": to_json(value.properties),
        }
    if isinstance(value, GraphPath):
        out: list[Any] = []
        for i, node in enumerate(value.nodes):
            out.append(to_json(node))
            if i < len(value.relationships):
                out.append(to_json(value.relationships[i]))
        return out
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Duration):
        return duration_text(value)
    if isinstance(value, Point):
        point = {"srid": value.srid, "x": value.x, "y": value.y}
        return point if value.z is None else {**point, "z": value.z}
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


def duration_text(d: Duration) -> str:
    seconds = d.seconds + d.nanoseconds / 1e9
    time = f"T{seconds:g}S" if seconds else ""
    return f"P{d.months}M{d.days}D{time}" if (d.months or d.days or not time) else f"P{time}"
