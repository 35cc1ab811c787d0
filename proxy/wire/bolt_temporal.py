"""Temporal parameters kept lossless (issue 10 item 8).

A client's date / time structures become `Temporal` values, checked only for their shape, and
go to a Bolt backend as the very same structure: every nanosecond and any year the client could
encode arrives as sent. The one conversion is between Bolt 4.4's legacy date-times (local
wall-clock seconds, 'F' / 'f') and Bolt 5's UTC ones ('I' / 'i'), when the client speaks one and
the upstream the other; for a fixed offset that is exact integer arithmetic.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from query_guard.values import Temporal
from query_guard.wire.packstream import InvalidValue, Structure

DATE, TIME, LOCAL_TIME, LOCAL_DATE_TIME = 0x44, 0x54, 0x74, 0x64
DATE_TIME, DATE_TIME_ZONE_ID = 0x49, 0x69  # Bolt 5 (and 4.4 + utc patch): UTC seconds
LEGACY_DATE_TIME, LEGACY_DATE_TIME_ZONE_ID = 0x46, 0x66  # Bolt 4.4: local wall-clock seconds

# Each temporal structure's field types (the spec's); nothing else about them is checked here:
# what a value means (a zone id, a time of day past midnight) is the backend's to judge.
SHAPES: dict[int, tuple[type, ...]] = {
    DATE: (int,),
    TIME: (int, int),
    LOCAL_TIME: (int,),
    LOCAL_DATE_TIME: (int, int),
    DATE_TIME: (int, int, int),
    DATE_TIME_ZONE_ID: (int, int, str),
    LEGACY_DATE_TIME: (int, int, int),
    LEGACY_DATE_TIME_ZONE_ID: (int, int, str),
}
_EPOCH = dt.datetime(1970, 1, 1)


def temporal_parameter(s: Structure) -> Temporal:
    """The lossless value of a temporal structure a client sent (in the Bolt 5 form)."""
    shape = SHAPES[s.tag]
    fields = s.fields
    if len(fields) != len(shape) or not all(
        type(v) is t for v, t in zip(fields, shape, strict=True)
    ):
        raise InvalidValue(f"invalid temporal structure {chr(s.tag)!r}: fields {fields!r}")
    if s.tag == LEGACY_DATE_TIME:
        local, nanos, offset = fields
        return Temporal(DATE_TIME, (local - offset, nanos, offset))
    if s.tag == LEGACY_DATE_TIME_ZONE_ID:
        local, nanos, zone = fields
        return Temporal(DATE_TIME_ZONE_ID, (local - _offset_at_local(local, zone), nanos, zone))
    return Temporal(s.tag, tuple(fields))


def temporal_structure(value: Temporal, utc: bool) -> Structure:
    """The structure for `value` on a connection with (`utc`) or without Bolt 5 date-times."""
    if utc or value.tag not in (DATE_TIME, DATE_TIME_ZONE_ID):
        return Structure(value.tag, list(value.fields))
    seconds, nanos, zone = value.fields
    assert isinstance(seconds, int) and isinstance(nanos, int)
    if isinstance(zone, int):
        return Structure(LEGACY_DATE_TIME, [seconds + zone, nanos, zone])
    offset = _offset_at_instant(seconds, zone)
    return Structure(LEGACY_DATE_TIME_ZONE_ID, [seconds + offset, nanos, zone])


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidValue(f"unknown time zone {name!r}") from exc


def _offset_at_local(local: int, zone: str) -> int:
    """The UTC offset (seconds) of `zone` at wall-clock `local` seconds (Bolt 4.4 'f')."""
    try:
        wall = _EPOCH + dt.timedelta(seconds=local)
    except OverflowError as exc:
        raise InvalidValue("a legacy zoned date-time outside years 1-9999") from exc
    offset = wall.replace(tzinfo=_zone(zone)).utcoffset()
    return int(offset.total_seconds()) if offset is not None else 0


def _offset_at_instant(seconds: int, zone: str) -> int:
    """The UTC offset (seconds) of `zone` at the instant `seconds` after the epoch."""
    try:
        instant = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=seconds)
        offset = instant.astimezone(_zone(zone)).utcoffset()
    except OverflowError as exc:
        raise InvalidValue("a zoned date-time outside years 1-9999 for Bolt 4.4") from exc
    return int(offset.total_seconds()) if offset is not None else 0
