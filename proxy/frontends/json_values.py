"""Result values as JSON, the way Neo4j's HTTP APIs write them.

Plain JSON (`to_json`, the default): nodes become `{"elementId", "labels", "properties"}`,
relationships `{"elementId", "type", "startNodeElementId", "endNodeElementId", "properties"}`,
paths the alternating list of their nodes and relationships, temporal values ISO 8601 text,
durations `P…` text, points `{"srid", "x", "y"[, "z"]}`, bytes base64.

Typed JSON (`to_typed`, when the client accepts `application/vnd.neo4j.query…`): every value
is `{"$type": …, "_value": …}` — integers and floats as text, `Node`
`{"_element_id", "_labels", "_properties"}`, `Relationship` `{"_element_id",
"_start_node_element_id", "_end_node_element_id", "_type", "_properties"}`, `Path` the
alternating list, `Date`/`Time`/`LocalTime`/`OffsetDateTime`/`ZonedDateTime`/`LocalDateTime`
ISO 8601 text, `Duration` ISO text, `Point` `SRID=…;POINT (x y)`, `Base64`. `from_typed`
reads parameters sent in that form, its recursion bounded (`MAX_TYPED_DEPTH`).
"""

from __future__ import annotations

import base64
import datetime as dt
import math
from typing import Any

from query_guard.values import Duration, GraphNode, GraphPath, GraphRelationship, Point

MAX_TYPED_DEPTH = 50  # typed Lists/Maps inside each other (a JSON body nests 100 at most)


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
        return [to_json(v) for v in path_items(value)]
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


def to_typed(value: Any) -> dict[str, Any]:
    """`value` in Neo4j's typed JSON (`{"$type", "_value"}`)."""
    if value is None:
        return _typed("Null", None)
    if isinstance(value, bool):
        return _typed("Boolean", value)
    if isinstance(value, int):
        return _typed("Integer", str(value))
    if isinstance(value, float):
        return _typed("Float", _float_text(value))
    if isinstance(value, str):
        return _typed("String", value)
    if isinstance(value, list | tuple):
        return _typed("List", [to_typed(v) for v in value])
    if isinstance(value, dict):
        return _typed("Map", {str(k): to_typed(v) for k, v in value.items()})
    if isinstance(value, GraphNode):
        return _typed("Node", {
            "_element_id": value.element_id or str(value.id),
            "_labels": list(value.labels),
            "_properties": {k: to_typed(v) for k, v in value.properties.items()},
        })  # fmt: skip
    if isinstance(value, GraphRelationship):
        return _typed("Relationship", {
            "_element_id": value.element_id or str(value.id),
            "_start_node_element_id": value.start_element_id or str(value.start_id),
            "_end_node_element_id": value.end_element_id or str(value.end_id),
            "_type": value.type,
            "_properties": {k: to_typed(v) for k, v in value.properties.items()},
        })  # fmt: skip
    if isinstance(value, GraphPath):
        return _typed("Path", [to_typed(v) for v in path_items(value)])
    if isinstance(value, dt.datetime):
        return _typed(_datetime_type(value), _datetime_text(value))
    if isinstance(value, dt.date):
        return _typed("Date", value.isoformat())
    if isinstance(value, dt.time):
        return _typed("LocalTime" if value.tzinfo is None else "Time", value.isoformat())
    if isinstance(value, Duration):
        return _typed("Duration", duration_text(value))
    if isinstance(value, Point):
        coords = f"{_num(value.x)} {_num(value.y)}"
        if value.z is None:
            return _typed("Point", f"SRID={value.srid};POINT ({coords})")
        return _typed("Point", f"SRID={value.srid};POINT Z ({coords} {_num(value.z)})")
    if isinstance(value, bytes | bytearray):
        return _typed("Base64", base64.b64encode(bytes(value)).decode("ascii"))
    return _typed("String", str(value))


def from_typed(value: Any, depth: int = 1) -> Any:
    """A typed-JSON parameter value as the Python value the backends take (ValueError when
    it is not typed JSON, or nests Lists/Maps more than `MAX_TYPED_DEPTH` deep: the
    recursion is bounded)."""
    if not isinstance(value, dict) or set(value) != {"$type", "_value"}:
        raise ValueError(f"not a typed JSON value ({{'$type', '_value'}}): {value!r:.80}")
    kind, raw = value["$type"], value["_value"]
    if kind in ("List", "Map"):
        if depth > MAX_TYPED_DEPTH:
            raise ValueError(f"typed JSON Lists/Maps nest more than {MAX_TYPED_DEPTH} deep")
        return _list_in(raw, depth) if kind == "List" else _map_in(raw, depth)
    reader = _READERS.get(kind)
    if reader is None:
        raise ValueError(f"unsupported typed JSON $type {kind!r}")
    return reader(raw)


def path_items(path: GraphPath) -> list[Any]:
    out: list[Any] = []
    for i, node in enumerate(path.nodes):
        out.append(node)
        if i < len(path.relationships):
            out.append(path.relationships[i])
    return out


def _typed(kind: str, value: Any) -> dict[str, Any]:
    return {"$type": kind, "_value": value}


def _float_text(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _num(value: float) -> str:
    return repr(float(value))


def _datetime_type(value: dt.datetime) -> str:
    if value.tzinfo is None:
        return "LocalDateTime"
    return "ZonedDateTime" if _zone_name(value) else "OffsetDateTime"


def _datetime_text(value: dt.datetime) -> str:
    zone = _zone_name(value)
    return f"{value.isoformat()}[{zone}]" if zone else value.isoformat()


def _zone_name(value: dt.datetime) -> str:
    key = getattr(value.tzinfo, "key", None)  # a zoneinfo.ZoneInfo: a named zone
    return key if isinstance(key, str) else ""


def _datetime_in(text: str) -> dt.datetime:
    base, _, zone = text.partition("[")
    moment = dt.datetime.fromisoformat(base)
    if zone:
        from zoneinfo import ZoneInfo

        moment = moment.astimezone(ZoneInfo(zone.rstrip("]")))
    return moment


def _list_in(raw: Any, depth: int) -> list[Any]:
    if not isinstance(raw, list):
        raise ValueError("a typed List's _value must be a list")
    return [from_typed(v, depth + 1) for v in raw]


def _map_in(raw: Any, depth: int) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ValueError("a typed Map's _value must be an object")
    return {str(k): from_typed(v, depth + 1) for k, v in raw.items()}


def _checked(kind: type, convert: Any) -> Any:
    def read(raw: Any) -> Any:
        if not isinstance(raw, kind) or isinstance(raw, bool) is not (kind is bool):
            raise ValueError(f"expected {kind.__name__} text, got {raw!r:.40}")
        return convert(raw)

    return read


_READERS: dict[str, Any] = {
    "Null": lambda raw: None,
    "Boolean": _checked(bool, bool),
    "Integer": _checked(str, int),
    "Float": _checked(str, float),
    "String": _checked(str, str),
    "Base64": _checked(str, lambda raw: base64.b64decode(raw, validate=True)),
    "Date": _checked(str, dt.date.fromisoformat),
    "LocalTime": _checked(str, dt.time.fromisoformat),
    "Time": _checked(str, dt.time.fromisoformat),
    "LocalDateTime": _checked(str, dt.datetime.fromisoformat),
    "OffsetDateTime": _checked(str, dt.datetime.fromisoformat),
    "ZonedDateTime": _checked(str, _datetime_in),
}


def duration_text(d: Duration) -> str:
    """ISO 8601 as Neo4j writes a duration: `P1Y2M14DT16H12M0.5S`, `PT0S` when zero."""
    years, months = divmod(d.months, 12)
    total = d.seconds * 1_000_000_000 + d.nanoseconds
    sign = "-" if total < 0 else ""
    hours, rest = divmod(abs(total), 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    seconds, nanos = divmod(rest, 1_000_000_000)
    date = "".join(f"{n}{u}" for n, u in ((years, "Y"), (months, "M"), (d.days, "D")) if n)
    second = f"{seconds}.{nanos:09d}".rstrip("0") if nanos else str(seconds)
    parts = [(hours, "H"), (minutes, "M")]
    time = "".join(f"{sign}{n}{u}" for n, u in parts if n)
    if seconds or nanos:
        time += f"{sign}{second}S"
    if not date and not time:
        return "PT0S"
    return f"P{date}" + (f"T{time}" if time else "")
