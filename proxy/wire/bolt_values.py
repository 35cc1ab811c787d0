"""Bolt structure semantics: neutral result values <-> PackStream structures, per Bolt version.

Bolt 5 adds element ids to graph structures and sends zoned date-times as UTC instants
('I'/'i'); Bolt 4.4 uses the legacy local-time forms ('F'/'f') unless the client asked for the
"utc" patch in HELLO. `ValueCodec` captures that choice once per connection.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from query_guard.values import Duration, GraphNode, GraphPath, GraphRelationship, Point, Temporal
from query_guard.wire.bolt_temporal import (
    DATE,
    DATE_TIME,
    DATE_TIME_ZONE_ID,
    LEGACY_DATE_TIME,
    LEGACY_DATE_TIME_ZONE_ID,
    LOCAL_DATE_TIME,
    LOCAL_TIME,
    SHAPES,
    TIME,
    temporal_parameter,
    temporal_structure,
)
from query_guard.wire.packstream import InvalidValue, PackStreamError, Structure

NODE, RELATIONSHIP, UNBOUND_RELATIONSHIP, PATH = 0x4E, 0x52, 0x72, 0x50
DURATION, POINT_2D, POINT_3D = 0x45, 0x58, 0x59

UTC = dt.UTC
EPOCH = dt.datetime(1970, 1, 1)
EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=UTC)
EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
NANOS_PER_SECOND = 1_000_000_000


@dataclass(frozen=True, slots=True)
class ValueCodec:
    """How structures look on one connection."""

    element_ids: bool = True  # Bolt >= 5.0
    utc: bool = True  # Bolt >= 5.0, or 4.4 with the "utc" patch

    # -- encoding (results) ---------------------------------------------------------------

    def dehydrate(self, value: Any) -> Structure:
        """The structure for a neutral value PackStream has no native form for."""
        if isinstance(value, GraphNode):
            return self._node(value)
        if isinstance(value, GraphRelationship):
            return self._relationship(value)
        if isinstance(value, GraphPath):
            return self._path(value)
        if isinstance(value, dt.datetime):  # before date: datetime is a date subclass
            return self._datetime(value)
        if isinstance(value, dt.date):
            return Structure(DATE, [value.toordinal() - EPOCH_ORDINAL])
        if isinstance(value, dt.time):
            return _time(value)
        if isinstance(value, Duration):
            return Structure(DURATION, [value.months, value.days, value.seconds, value.nanoseconds])
        if isinstance(value, dt.timedelta):
            return Structure(DURATION, [0, value.days, value.seconds, value.microseconds * 1000])
        if isinstance(value, Point):
            if value.z is None:
                return Structure(POINT_2D, [value.srid, float(value.x), float(value.y)])
            return Structure(POINT_3D, [value.srid, float(value.x), float(value.y), float(value.z)])
        if isinstance(value, Temporal):  # a client's parameter, sent on as it came
            return temporal_structure(value, self.utc)
        raise PackStreamError(f"cannot send a value of type {type(value).__name__} over Bolt")

    def _node(self, n: GraphNode) -> Structure:
        fields: list[Any] = [n.id, list(n.labels), n.properties]
        if self.element_ids:
            fields.append(n.element_id or str(n.id))
        return Structure(NODE, fields)

    def _relationship(self, r: GraphRelationship) -> Structure:
        fields: list[Any] = [r.id, r.start_id, r.end_id, r.type, r.properties]
        if self.element_ids:
            fields += [
                r.element_id or str(r.id),
                r.start_element_id or str(r.start_id),
                r.end_element_id or str(r.end_id),
            ]
        return Structure(RELATIONSHIP, fields)

    def _unbound(self, r: GraphRelationship) -> Structure:
        fields: list[Any] = [r.id, r.type, r.properties]
        if self.element_ids:
            fields.append(r.element_id or str(r.id))
        return Structure(UNBOUND_RELATIONSHIP, fields)

    def _path(self, p: GraphPath) -> Structure:
        if len(p.nodes) != len(p.relationships) + 1:
            raise PackStreamError("a path needs exactly one more node than relationships")
        nodes: list[GraphNode] = []
        node_index: dict[Any, int] = {}
        for n in p.nodes:
            if _node_key(n) not in node_index:
                node_index[_node_key(n)] = len(nodes)
                nodes.append(n)
        rels: list[GraphRelationship] = []
        rel_index: dict[Any, int] = {}
        sequence: list[int] = []
        for i, r in enumerate(p.relationships):
            key = r.element_id or r.id
            if key not in rel_index:
                rel_index[key] = len(rels)
                rels.append(r)
            # 1-based relationship index, negative when walked against its direction
            forward = _is_start(r, p.nodes[i])
            sequence.append(rel_index[key] + 1 if forward else -(rel_index[key] + 1))
            sequence.append(node_index[_node_key(p.nodes[i + 1])])
        return Structure(
            PATH, [[self._node(n) for n in nodes], [self._unbound(r) for r in rels], sequence]
        )

    def _datetime(self, value: dt.datetime) -> Structure:
        nanos = value.microsecond * 1000
        if value.tzinfo is None or value.utcoffset() is None:
            seconds = _seconds(value - EPOCH)
            return Structure(LOCAL_DATE_TIME, [seconds, nanos])
        offset = value.utcoffset()
        assert offset is not None
        zone = _zone_name(value.tzinfo)
        if self.utc:
            seconds = _seconds(value - EPOCH_UTC)
            if zone is not None:
                return Structure(DATE_TIME_ZONE_ID, [seconds, nanos, zone])
            return Structure(DATE_TIME, [seconds, nanos, _seconds(offset)])
        seconds = _seconds(value.replace(tzinfo=None) - EPOCH)
        if zone is not None:
            return Structure(LEGACY_DATE_TIME_ZONE_ID, [seconds, nanos, zone])
        return Structure(LEGACY_DATE_TIME, [seconds, nanos, _seconds(offset)])

    # -- decoding -------------------------------------------------------------------------

    def hydrate_parameter(self, s: Structure) -> Any:
        """The value of a structure a client sent: temporal ones stay lossless (`Temporal`),
        so that they reach the backend exactly as sent; the rest as `hydrate` makes them."""
        if s.tag in SHAPES:
            return temporal_parameter(s)
        return self.hydrate(s)

    def hydrate(self, s: Structure) -> Any:
        """The plain Python / neutral value for a structure (a result value)."""
        handler = _HYDRATORS.get(s.tag)
        if handler is None:
            raise InvalidValue(f"unknown structure tag {s.tag:#04x}")
        try:
            return handler(s.fields)
        except InvalidValue:
            raise
        except (TypeError, ValueError, IndexError, OverflowError, KeyError, AttributeError) as exc:
            raise InvalidValue(f"invalid structure {chr(s.tag)!r}: {exc}") from exc


def _seconds(delta: dt.timedelta) -> int:
    """Whole seconds of a delta (its microseconds travel separately as nanoseconds)."""
    return delta.days * 86400 + delta.seconds


def _node_key(n: GraphNode) -> Any:
    return n.element_id or n.id


def _is_start(r: GraphRelationship, node: GraphNode) -> bool:
    if r.start_element_id and node.element_id:
        return r.start_element_id == node.element_id
    return r.start_id == node.id


def _zone_name(tz: dt.tzinfo | None) -> str | None:
    if isinstance(tz, ZoneInfo):
        return tz.key
    name = getattr(tz, "zone", None)  # pytz zones carry their IANA name here
    return name if isinstance(name, str) else None


def _time(value: dt.time) -> Structure:
    nanos = (
        value.hour * 3600 + value.minute * 60 + value.second
    ) * NANOS_PER_SECOND + value.microsecond * 1000
    offset = value.utcoffset()
    if offset is None:
        return Structure(LOCAL_TIME, [nanos])
    return Structure(TIME, [nanos, _seconds(offset)])


def _fields(fields: list[Any], *types: type | tuple[type, ...]) -> list[Any]:
    if len(fields) != len(types):
        raise InvalidValue(f"expected {len(types)} fields, got {len(fields)}")
    for value, kind in zip(fields, types, strict=True):
        if not isinstance(value, kind) or isinstance(value, bool):
            raise InvalidValue(f"unexpected field {value!r}")
    return fields


def _offset(seconds: int) -> dt.timezone:
    return dt.timezone(dt.timedelta(seconds=seconds))


def _local_time_of(nanos: int) -> dt.time:
    if not 0 <= nanos < 86400 * NANOS_PER_SECOND:
        raise InvalidValue("time of day out of range")
    seconds, rest = divmod(nanos, NANOS_PER_SECOND)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    return dt.time(hours, minutes, seconds, rest // 1000)


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidValue(f"unknown time zone {name!r}") from exc


def _instant(seconds: int, nanos: int) -> dt.datetime:
    return EPOCH_UTC + dt.timedelta(seconds=seconds, microseconds=nanos // 1000)


def _h_node(f: list[Any]) -> GraphNode:
    element_id = f[3] if len(f) > 3 else ""
    return GraphNode(f[0], tuple(f[1]), dict(f[2]), str(element_id or ""))


def _h_relationship(f: list[Any]) -> GraphRelationship:
    element_ids = [str(x or "") for x in f[5:8]]
    element_ids += [""] * (3 - len(element_ids))
    return GraphRelationship(f[0], f[3], f[1], f[2], dict(f[4]), *element_ids)


def _h_unbound(f: list[Any]) -> GraphRelationship:
    element_id = f[3] if len(f) > 3 else ""
    return GraphRelationship(f[0], f[1], -1, -1, dict(f[2]), str(element_id or ""))


def _h_path(f: list[Any]) -> GraphPath:
    nodes, rels, sequence = f
    walked_nodes = [nodes[0]]
    walked_rels: list[GraphRelationship] = []
    for i in range(0, len(sequence), 2):
        r, n = rels[abs(sequence[i]) - 1], nodes[sequence[i + 1]]
        prev = walked_nodes[-1]
        start, end = (prev, n) if sequence[i] > 0 else (n, prev)
        walked_rels.append(
            GraphRelationship(
                r.id,
                r.type,
                start.id,
                end.id,
                r.properties,
                r.element_id,
                start.element_id,
                end.element_id,
            )
        )
        walked_nodes.append(n)
    return GraphPath(tuple(walked_nodes), tuple(walked_rels))


def _h_date(f: list[Any]) -> dt.date:
    (days,) = _fields(f, int)
    try:
        return dt.date.fromordinal(days + EPOCH_ORDINAL)
    except (ValueError, OverflowError) as exc:
        raise InvalidValue("date out of the supported range (years 1-9999)") from exc


def _h_time(f: list[Any]) -> dt.time:
    nanos, offset = _fields(f, int, int)
    return _local_time_of(nanos).replace(tzinfo=_offset(offset))


def _h_local_time(f: list[Any]) -> dt.time:
    (nanos,) = _fields(f, int)
    return _local_time_of(nanos)


def _h_date_time(f: list[Any]) -> dt.datetime:
    seconds, nanos, offset = _fields(f, int, int, int)
    return _instant(seconds, nanos).astimezone(_offset(offset))


def _h_date_time_zone_id(f: list[Any]) -> dt.datetime:
    seconds, nanos, zone = _fields(f, int, int, str)
    return _instant(seconds, nanos).astimezone(_zone(zone))


def _h_legacy_date_time(f: list[Any]) -> dt.datetime:
    seconds, nanos, offset = _fields(f, int, int, int)
    return _h_local_date_time([seconds, nanos]).replace(tzinfo=_offset(offset))


def _h_legacy_date_time_zone_id(f: list[Any]) -> dt.datetime:
    seconds, nanos, zone = _fields(f, int, int, str)
    return _h_local_date_time([seconds, nanos]).replace(tzinfo=_zone(zone))


def _h_local_date_time(f: list[Any]) -> dt.datetime:
    seconds, nanos = _fields(f, int, int)
    return EPOCH + dt.timedelta(seconds=seconds, microseconds=nanos // 1000)


def _h_duration(f: list[Any]) -> Duration:
    return Duration(*_fields(f, int, int, int, int))


def _h_point(f: list[Any]) -> Point:
    srid, *coords = f
    if type(srid) is not int or not all(isinstance(c, (int, float)) for c in coords):
        raise InvalidValue("point fields must be an integer srid and numbers")
    return Point(srid, *(float(c) for c in coords))


_HYDRATORS = {
    NODE: _h_node,
    RELATIONSHIP: _h_relationship,
    UNBOUND_RELATIONSHIP: _h_unbound,
    PATH: _h_path,
    DATE: _h_date,
    TIME: _h_time,
    LOCAL_TIME: _h_local_time,
    DATE_TIME: _h_date_time,
    DATE_TIME_ZONE_ID: _h_date_time_zone_id,
    LEGACY_DATE_TIME: _h_legacy_date_time,
    LEGACY_DATE_TIME_ZONE_ID: _h_legacy_date_time_zone_id,
    LOCAL_DATE_TIME: _h_local_date_time,
    DURATION: _h_duration,
    POINT_2D: _h_point,
    POINT_3D: _h_point,
}
