"""Temporal parameters pass the proxy's PackStream codec losslessly (issue 10 item 8): every
structure a client can send — dates, times, date-times with offsets and zone ids, at any year
and nanosecond, next to points, durations, byte arrays and nested lists / maps — decodes into a
value that encodes back to the very same bytes."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from query_guard.values import Temporal
from query_guard.wire.bolt_values import ValueCodec
from query_guard.wire.packstream import INT64_MAX, INT64_MIN, Structure, Unpacker, packb
from tests.budget import examples

BOLT5 = ValueCodec(element_ids=True, utc=True)
BOLT44 = ValueCodec(element_ids=False, utc=False)

int64 = st.integers(INT64_MIN, INT64_MAX)
nanos = st.integers(0, 999_999_999)
offsets = st.integers(-18 * 3600, 18 * 3600)
zone_ids = st.sampled_from(["Europe/Stockholm", "America/New_York", "Asia/Kathmandu", "UTC"])
floats = st.floats(allow_nan=False)  # NaN != NaN; its bytes are checked below on their own

temporals = st.one_of(
    st.builds(lambda d: Structure(0x44, [d]), int64),  # Date: days since the epoch
    st.builds(lambda n, o: Structure(0x54, [n, o]), int64, offsets),  # Time
    st.builds(lambda n: Structure(0x74, [n]), int64),  # LocalTime
    st.builds(lambda s, n: Structure(0x64, [s, n]), int64, nanos),  # LocalDateTime
    st.builds(lambda s, n, o: Structure(0x49, [s, n, o]), int64, nanos, offsets),  # DateTime
    st.builds(lambda s, n, z: Structure(0x69, [s, n, z]), int64, nanos, zone_ids),
)
others = st.one_of(
    st.builds(lambda m, d, s, n: Structure(0x45, [m, d, s, n]), int64, int64, int64, nanos),
    st.builds(lambda r, x, y: Structure(0x58, [r, x, y]), int64, floats, floats),
    st.builds(lambda r, x, y, z: Structure(0x59, [r, x, y, z]), int64, floats, floats, floats),
    st.binary(max_size=64),
    st.none() | st.booleans() | int64 | floats | st.text(max_size=20),
)
values = st.recursive(
    temporals | others,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def through_proxy(data: bytes, client: ValueCodec, upstream: ValueCodec) -> bytes:
    """`data` decoded as a client's parameter and encoded again for the upstream."""
    unpacker = Unpacker(data, client.hydrate_parameter)
    value = unpacker.unpack()
    assert unpacker.at_end()
    return packb(value, upstream.dehydrate)


@given(values)
@settings(max_examples=examples(400))
def test_every_value_a_bolt5_client_sends_is_re_encoded_byte_for_byte(value: Any) -> None:
    data = packb(value)
    assert through_proxy(data, BOLT5, BOLT5) == data


@given(temporals)
def test_temporal_parameters_are_kept_as_sent(structure: Structure) -> None:
    [decoded] = [Unpacker(packb(structure), BOLT5.hydrate_parameter).unpack()]
    assert decoded == Temporal(structure.tag, tuple(structure.fields))


@given(int64.filter(lambda s: abs(s) < 2**62), nanos, offsets)
def test_a_bolt_4_4_offset_date_time_is_converted_exactly(local: int, n: int, off: int) -> None:
    legacy = packb(Structure(0x46, [local, n, off]))
    utc = through_proxy(legacy, BOLT44, BOLT5)
    assert utc == packb(Structure(0x49, [local - off, n, off]))
    assert through_proxy(utc, BOLT5, BOLT44) == legacy


def test_a_bolt_4_4_zone_id_date_time_is_converted_with_the_zone_rules() -> None:
    # 2024-07-01T12:00:00.000000001 in Stockholm is 10:00 UTC (summer time, +02:00)
    local = 19905 * 86400 + 12 * 3600
    legacy = packb(Structure(0x66, [local, 1, "Europe/Stockholm"]))
    utc = through_proxy(legacy, BOLT44, BOLT5)
    assert utc == packb(Structure(0x69, [local - 7200, 1, "Europe/Stockholm"]))
    assert through_proxy(utc, BOLT5, BOLT44) == legacy


def test_nan_and_negative_zero_keep_their_bits() -> None:
    for value in (float("nan"), -0.0, [Structure(0x58, [7203, float("nan"), -0.0])]):
        data = packb(value)
        assert through_proxy(data, BOLT5, BOLT5) == data
