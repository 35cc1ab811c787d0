"""PackStream v1 codec and Bolt structure semantics: spec byte examples, size boundaries,
hypothesis round trips, and hostile input."""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import struct
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from query_guard.values import Duration, GraphNode, GraphPath, GraphRelationship, Point
from query_guard.wire.bolt_values import ValueCodec
from query_guard.wire.packstream import (
    INT64_MAX,
    INT64_MIN,
    InvalidValue,
    PackStreamError,
    Structure,
    Unpacker,
    packb,
    unpackb,
)
from tests.budget import examples

BOLT5 = ValueCodec(element_ids=True, utc=True)
BOLT44 = ValueCodec(element_ids=False, utc=False)


def normalise(value: Any) -> Any:
    """What a value looks like after a round trip (tuples come back as lists)."""
    if isinstance(value, (list, tuple)):
        return [normalise(v) for v in value]
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return value


# -- spec examples ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "hex_bytes"),
    [
        (None, "c0"),
        (True, "c3"),
        (False, "c2"),
        (0, "00"),
        (1, "01"),
        (127, "7f"),
        (-1, "ff"),
        (-16, "f0"),
        (-17, "c8ef"),
        (-128, "c880"),
        (128, "c90080"),
        (-129, "c9ff7f"),
        (32767, "c97fff"),
        (32768, "ca00008000"),
        (-32769, "caffff7fff"),
        (2**31 - 1, "ca7fffffff"),
        (2**31, "cb0000000080000000"),
        (-(2**31) - 1, "cbffffffff7fffffff"),
        (INT64_MAX, "cb7fffffffffffffff"),
        (INT64_MIN, "cb8000000000000000"),
        (1.1, "c13ff199999999999a"),
        (-1.1, "c1bff199999999999a"),
        ("", "80"),
        ("A", "8141"),
        ("Größenmaßstäbe", "d012" + "Größenmaßstäbe".encode().hex()),
        (b"", "cc00"),
        (b"\x01\x02\x03", "cc03010203"),
        ([], "90"),
        ([1, 2, 3], "93010203"),
        ({}, "a0"),
        ({"one": "eins"}, "a1836f6e658465696e73"),
        (Structure(0x4E, [1, ["L"], {}]), "b34e0191814ca0"),
    ],
)
def test_spec_examples(value: Any, hex_bytes: str) -> None:
    data = bytes.fromhex(hex_bytes)
    assert packb(value) == data
    assert unpackb(data) == normalise(value)


@pytest.mark.parametrize(
    ("size", "str_marker", "list_marker", "map_marker", "bytes_marker"),
    [
        (0, "80", "90", "a0", "cc00"),
        (15, "8f", "9f", "af", "cc0f"),
        (16, "d010", "d410", "d810", "cc10"),
        (255, "d0ff", "d4ff", "d8ff", "ccff"),
        (256, "d10100", "d50100", "d90100", "cd0100"),
        (65535, "d1ffff", "d5ffff", "d9ffff", "cdffff"),
        (65536, "d200010000", "d600010000", "da00010000", "ce00010000"),
    ],
)
def test_size_boundaries(
    size: int, str_marker: str, list_marker: str, map_marker: str, bytes_marker: str
) -> None:
    text = "a" * size
    items = [0] * size
    mapping = {f"k{i}": i % 100 for i in range(size)}
    blob = b"\x00" * size
    for value, marker in (
        (text, str_marker), (items, list_marker), (mapping, map_marker), (blob, bytes_marker)
    ):
        data = packb(value)
        assert data.startswith(bytes.fromhex(marker))
        assert unpackb(data) == value


def test_integers_outside_int64_are_rejected() -> None:
    for value in (INT64_MAX + 1, INT64_MIN - 1, 2**100):
        with pytest.raises(PackStreamError):
            packb(value)


def test_map_keys_must_be_strings() -> None:
    with pytest.raises(PackStreamError):
        packb({1: "x"})
    with pytest.raises(PackStreamError):
        unpackb(bytes.fromhex("a1" "01" "01"))


def test_structures_have_at_most_15_fields() -> None:
    assert unpackb(packb(Structure(0x01, list(range(15))))) == Structure(1, list(range(15)))
    with pytest.raises(PackStreamError):
        packb(Structure(0x01, list(range(16))))


def test_subclasses_pack_as_their_base_type() -> None:
    import enum

    class Colour(enum.IntEnum):
        RED = 3

    class Name(enum.StrEnum):
        ADA = "Ada"

    assert unpackb(packb([Colour.RED, Name.ADA, (1, 2)])) == [3, "Ada", [1, 2]]


def test_special_floats() -> None:
    assert unpackb(packb(math.inf)) == math.inf
    assert math.isnan(unpackb(packb(math.nan)))
    assert packb(-0.0) == b"\xc1" + struct.pack(">d", -0.0)


# -- hypothesis round trips -------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=INT64_MIN, max_value=INT64_MAX)
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary()
)
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=20)
    | st.dictionaries(st.text(max_size=20), children, max_size=20)
    | st.builds(Structure, st.integers(0, 0x7F), st.lists(children, max_size=15)),
    max_leaves=60,
)


@given(values)
@settings(max_examples=examples(400))
def test_round_trip(value: Any) -> None:
    assert unpackb(packb(value)) == normalise(value)


@given(st.integers(min_value=INT64_MIN, max_value=INT64_MAX))
def test_integer_round_trip_uses_smallest_form(value: int) -> None:
    data = packb(value)
    assert unpackb(data) == value
    if -16 <= value < 128:
        assert len(data) == 1
    elif -128 <= value < 128:
        assert len(data) == 2
    elif -(2**15) <= value < 2**15:
        assert len(data) == 3
    elif -(2**31) <= value < 2**31:
        assert len(data) == 5
    else:
        assert len(data) == 9


@given(st.binary(max_size=200))
@settings(max_examples=examples(500))
def test_garbage_only_raises_packstream_errors(data: bytes) -> None:
    with contextlib.suppress(PackStreamError):
        unpackb(data, BOLT5.hydrate)


@given(values)
def test_truncation_is_detected(value: Any) -> None:
    data = packb(value)
    for cut in range(len(data) - 1, max(-1, len(data) - 8), -1):
        with pytest.raises(PackStreamError):
            unpackb(data[:cut])


@pytest.mark.parametrize(
    "marker", [0xC4, 0xC5, 0xC6, 0xC7, 0xCF, 0xD3, 0xD7, 0xDB, 0xDC, 0xDD, 0xDE, 0xDF, 0xE0, 0xEF]
)
def test_reserved_markers_are_rejected(marker: int) -> None:
    with pytest.raises(PackStreamError):
        unpackb(bytes([marker, 0, 0, 0, 0, 0, 0, 0, 0]))


def test_deep_nesting_is_bounded_not_a_recursion_error() -> None:
    with pytest.raises(PackStreamError):
        unpackb(b"\x91" * 100_000 + b"\x00")
    nested: Any = 0
    for _ in range(1000):
        nested = [nested]
    with pytest.raises(PackStreamError):
        packb(nested)


def test_invalid_utf8_and_trailing_bytes() -> None:
    with pytest.raises(PackStreamError):
        unpackb(b"\x82\xff\xfe")
    with pytest.raises(PackStreamError):
        unpackb(b"\x01\x02")


def test_unpacker_reads_consecutive_values() -> None:
    unpacker = Unpacker(packb(1) + packb("two") + packb([3]))
    assert [unpacker.unpack() for _ in range(3)] == [1, "two", [3]]
    assert unpacker.at_end()


# -- structure semantics ----------------------------------------------------------------------

offsets = st.integers(-18 * 3600, 18 * 3600).map(lambda s: dt.timezone(dt.timedelta(seconds=s)))
zones = st.sampled_from(["Europe/Stockholm", "America/New_York", "Asia/Kolkata", "UTC"]).map(
    ZoneInfo
)


def codec_round_trip(value: Any, codec: ValueCodec = BOLT5) -> Any:
    return unpackb(packb(value, codec.dehydrate), codec.hydrate)


@given(st.dates())
def test_date(value: dt.date) -> None:
    assert codec_round_trip(value) == value


@given(st.times())
def test_local_time(value: dt.time) -> None:
    assert codec_round_trip(value) == value


@given(st.times(), offsets)
def test_time_with_offset(value: dt.time, tz: dt.timezone) -> None:
    value = value.replace(tzinfo=tz)
    back = codec_round_trip(value)
    assert back == value and back.utcoffset() == value.utcoffset()


@given(st.datetimes())
def test_local_datetime(value: dt.datetime) -> None:
    assert codec_round_trip(value) == value
    assert codec_round_trip(value, BOLT44) == value


@given(st.datetimes(min_value=dt.datetime(2, 1, 1), max_value=dt.datetime(9998, 1, 1)), offsets)
def test_datetime_with_offset(value: dt.datetime, tz: dt.timezone) -> None:
    value = value.replace(tzinfo=tz)
    for codec, tag in ((BOLT5, 0x49), (BOLT44, 0x46)):
        assert packb(value, codec.dehydrate)[1] == tag
        back = codec_round_trip(value, codec)
        assert back == value and back.utcoffset() == value.utcoffset()


@given(st.datetimes(min_value=dt.datetime(2, 1, 1), max_value=dt.datetime(9998, 1, 1)), zones)
def test_datetime_with_zone_id(value: dt.datetime, tz: ZoneInfo) -> None:
    value = value.replace(tzinfo=tz)
    back = codec_round_trip(value)
    assert packb(value, BOLT5.dehydrate)[1] == 0x69
    assert back.tzinfo == tz
    assert back.astimezone(dt.UTC) == value.astimezone(dt.UTC)
    legacy = codec_round_trip(value, BOLT44)
    assert legacy.tzinfo == tz and legacy.replace(tzinfo=None) == value.replace(tzinfo=None)


def test_datetime_5x_sends_utc_seconds() -> None:
    value = dt.datetime(1970, 1, 1, 2, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert unpackb(packb(value, BOLT5.dehydrate)) == Structure(0x49, [0, 0, 7200])
    assert unpackb(packb(value, BOLT44.dehydrate)) == Structure(0x46, [7200, 0, 7200])


@given(
    st.integers(-(2**40), 2**40), st.integers(-(2**40), 2**40),
    st.integers(-(2**50), 2**50), st.integers(0, 999_999_999),
)
def test_duration(months: int, days: int, seconds: int, nanos: int) -> None:
    value = Duration(months, days, seconds, nanos)
    assert codec_round_trip(value) == value


def test_timedelta_is_sent_as_duration() -> None:
    assert codec_round_trip(dt.timedelta(days=2, seconds=5, microseconds=7)) == Duration(
        0, 2, 5, 7000
    )


@given(st.integers(0, 2**31), st.floats(allow_nan=False), st.floats(allow_nan=False),
       st.none() | st.floats(allow_nan=False))
def test_points(srid: int, x: float, y: float, z: float | None) -> None:
    value = Point(srid, x, y, z)
    assert codec_round_trip(value) == value


def test_unknown_structure_and_bad_fields_are_invalid_values() -> None:
    for struct_value in (
        Structure(0x50, [[1], [2], [1, 0]]),
        Structure(0x01, []),
        Structure(0x44, ["x"]),
        Structure(0x44, [10**9]),
        Structure(0x69, [0, 0, "Not/AZone"]),
        Structure(0x74, [-1]),
        Structure(0x45, [1, 2]),
    ):
        with pytest.raises(InvalidValue):
            unpackb(packb(struct_value), BOLT5.hydrate)


ALICE = GraphNode(1, ("Person",), {"name": "Alice"}, "4:db:1")
BOB = GraphNode(2, ("Person", "Admin"), {"name": "Bob"}, "4:db:2")
CAROL = GraphNode(3, (), {}, "4:db:3")
KNOWS = GraphRelationship(10, "KNOWS", 1, 2, {"since": 2020}, "5:db:10", "4:db:1", "4:db:2")
LIKES = GraphRelationship(11, "LIKES", 3, 2, {}, "5:db:11", "4:db:3", "4:db:2")


def test_node_and_relationship_bolt5() -> None:
    assert codec_round_trip(ALICE) == ALICE
    assert codec_round_trip(KNOWS) == KNOWS
    assert unpackb(packb(ALICE, BOLT5.dehydrate)).fields[3] == "4:db:1"


def test_node_without_element_id_gets_one_from_its_id() -> None:
    assert codec_round_trip(GraphNode(7, ("X",), {})) == GraphNode(7, ("X",), {}, "7")


def test_node_and_relationship_bolt44_have_no_element_ids() -> None:
    assert unpackb(packb(ALICE, BOLT44.dehydrate)) == Structure(
        0x4E, [1, ["Person"], {"name": "Alice"}]
    )
    assert len(unpackb(packb(KNOWS, BOLT44.dehydrate)).fields) == 5
    assert codec_round_trip(KNOWS, BOLT44) == GraphRelationship(10, "KNOWS", 1, 2, {"since": 2020})


def test_path_walks_relationships_in_both_directions() -> None:
    # Alice -KNOWS-> Bob <-LIKES- Carol: the second hop goes against LIKES.
    path = GraphPath((ALICE, BOB, CAROL), (KNOWS, LIKES))
    wire = unpackb(packb(path, BOLT5.dehydrate))
    assert wire.tag == 0x50
    assert wire.fields[2] == [1, 1, -2, 2]
    assert all(r.tag == 0x72 for r in wire.fields[1])
    assert codec_round_trip(path) == path


def test_path_revisiting_a_node_reuses_indices() -> None:
    back_knows = GraphRelationship(12, "KNOWS", 2, 1, {}, "5:db:12", "4:db:2", "4:db:1")
    path = GraphPath((ALICE, BOB, ALICE), (KNOWS, back_knows))
    wire = unpackb(packb(path, BOLT5.dehydrate))
    assert len(wire.fields[0]) == 2
    assert wire.fields[2] == [1, 1, 2, 0]
    assert codec_round_trip(path) == path


def test_unknown_python_types_are_rejected() -> None:
    with pytest.raises(PackStreamError):
        packb(object(), BOLT5.dehydrate)
    with pytest.raises(PackStreamError):
        packb({1, 2})


@given(
    st.sampled_from([0x4E, 0x52, 0x72, 0x50, 0x44, 0x54, 0x74, 0x49, 0x69, 0x46, 0x66, 0x64,
                     0x45, 0x58, 0x59]),
    st.lists(scalars | st.lists(scalars | st.builds(Structure, st.just(0x4E), st.lists(scalars)),
                                max_size=3), max_size=9),
)
@settings(max_examples=examples(600))
def test_known_tags_with_arbitrary_fields_only_raise_invalid_value(
    tag: int, fields: list[Any]
) -> None:
    with contextlib.suppress(InvalidValue):
        BOLT5.hydrate(Structure(tag, fields))
