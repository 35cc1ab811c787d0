"""Neo4j's typed JSON (`query_guard.frontends.json_values`): what `to_typed` writes, `from_typed`
reads back, for every value a parameter can hold; and durations in Neo4j's ISO form."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from query_guard.frontends.json_values import duration_text, from_typed, to_typed
from query_guard.values import Duration

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary(max_size=64)
    | st.dates()
    | st.datetimes()
    | st.datetimes(timezones=st.timezones(), allow_imaginary=False)
    | st.times()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(values)
def test_typed_json_round_trips_through_json_text(value: Any) -> None:
    typed = json.loads(json.dumps(to_typed(value)))
    assert from_typed(typed) == value


def test_typed_shapes() -> None:
    assert to_typed(1) == {"$type": "Integer", "_value": "1"}
    assert to_typed(dt.date(2024, 1, 2)) == {"$type": "Date", "_value": "2024-01-02"}
    offset = dt.datetime(2024, 1, 1, 21, 40, 32, tzinfo=dt.timezone(dt.timedelta(hours=-1)))
    assert to_typed(offset) == {"$type": "OffsetDateTime", "_value": "2024-01-01T21:40:32-01:00"}
    assert to_typed(float("nan"))["_value"] == "NaN"


@pytest.mark.parametrize("bad", [1, {"$type": "Integer"}, {"$type": "Lizard", "_value": "x"},
                                 {"$type": "Integer", "_value": 1}])  # fmt: skip
def test_untyped_parameters_are_refused(bad: Any) -> None:
    with pytest.raises(ValueError):
        from_typed(bad)


@pytest.mark.parametrize(("duration", "text"), [
    (Duration(), "PT0S"),
    (Duration(months=14, days=3), "P1Y2M3D"),
    (Duration(days=14, seconds=58320), "P14DT16H12M"),
    (Duration(seconds=1, nanoseconds=500_000_000), "PT1.5S"),
])  # fmt: skip
def test_durations_are_written_as_neo4j_writes_them(duration: Duration, text: str) -> None:
    assert duration_text(duration) == text


def test_deep_typed_values_are_refused_without_recursion() -> None:
    value: Any = {"$type": "Null", "_value": None}
    for i in range(5000):
        value = {"$type": "List" if i % 2 else "Map", "_value": [value] if i % 2 else {"k": value}}
    with pytest.raises(ValueError, match="nest more than 50"):
        from_typed(value)
    shallow: Any = {"$type": "Integer", "_value": "7"}
    for _ in range(50):
        shallow = {"$type": "List", "_value": [shallow]}
    assert str(from_typed(shallow)).count("[") == 50
