"""Every value the embedded engine returns reaches a gremlinpython client, with GraphBinary and
GraphSON alike (issue 21): values round-trip through gremlinpython's own deserializers, and a
graph holding dates, times, durations and vectors answers through the front."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path as FilePath
from typing import Any

import graphersal as gs
import pytest
from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.driver.serializer import GraphBinarySerializersV1, GraphSONSerializersV3d0
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.statics import BigDecimal

from query_guard.backends.graphersal import SNAPSHOT, to_gremlin
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from query_guard.wire import gremlin as wire

SERIALIZERS = {"graphbinary": GraphBinarySerializersV1, "graphson": GraphSONSerializersV3d0}
MIMES = {"graphbinary": wire.GRAPHBINARY, "graphson": wire.GRAPHSON3}


def _client_side(data: Any, serializer: str) -> Any:
    frame = wire.encode_response(MIMES[serializer], uuid.uuid4(), wire.SUCCESS, [data])
    return SERIALIZERS[serializer]().deserialize_message(frame)["result"]["data"][0]


# ---------------------------------------------------------------- encoding, unit


@pytest.mark.parametrize("serializer", SERIALIZERS)
def test_durations_keep_their_days(serializer: str) -> None:
    span = dt.timedelta(days=3, seconds=7, microseconds=500)
    assert _client_side(span, serializer) == span


@pytest.mark.parametrize("serializer", SERIALIZERS)
def test_dates_and_times_of_day_arrive_as_iso_text(serializer: str) -> None:
    offset = dt.timezone(dt.timedelta(hours=2))
    sent = [dt.date(2023, 1, 2), dt.time(12, 30), dt.time(12, 30, tzinfo=offset)]
    assert _client_side(sent, serializer) == ["2023-01-02", "12:30:00", "12:30:00+02:00"]


@pytest.mark.parametrize("serializer", SERIALIZERS)
def test_decimals_arrive_as_big_decimals(serializer: str) -> None:
    got = _client_side(Decimal("-12.50"), serializer)
    assert isinstance(got, BigDecimal) and got.value == Decimal("-12.50")


@pytest.mark.parametrize("serializer", SERIALIZERS)
def test_frozensets_arrive_as_sets(serializer: str) -> None:
    assert _client_side({"k": frozenset({1, 2**40})}, serializer) == {"k": {1, 2**40}}


@pytest.mark.parametrize("serializer", SERIALIZERS)
def test_engine_vectors_and_month_durations(serializer: str) -> None:
    engine = gs.Graph().execute(
        'g.inject(1).constant([vector([1.0, 2.5]), duration("P1M2D")]).to_list()'
    )
    assert _client_side(to_gremlin(engine), serializer) == [[[1.0, 2.5], "P1M2D"]]


def test_a_type_graphbinary_cannot_write_is_refused_not_sent_broken() -> None:
    with pytest.raises(TypeError, match="GraphBinary has no type for object"):
        wire.encode_response(wire.GRAPHBINARY, uuid.uuid4(), wire.SUCCESS, [object()])


# ---------------------------------------------------------------- through the front


@pytest.fixture(scope="module")
def typed_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A front on a graph whose vertex holds a date, a time, durations and a vector."""
    data = tmp_path_factory.mktemp("typed")
    graph = gs.Graph()
    graph.execute(
        'g.addV("thing").property("name", "t").property("day", date("2023-01-02"))'
        '.property("at", time("12:30:00")).property("span", duration("P1DT2S"))'
        '.property("months", duration("P1M")).property("emb", vector([1.0, 2.5])).iterate()',
        policy=gs.AccessPolicy.allow_all(),
    )
    (data / "graphersal").mkdir()
    graph.save(str(data / "graphersal" / SNAPSHOT))
    with ProxyThread(front_config(data)) as proxy:
        yield f"ws://127.0.0.1:{proxy.server.gremlin.port}/gremlin"


def front_config(data: FilePath, **backend: Any) -> Any:
    return parse_config(
        {
            "server": {"bolt": "", "gremlin": "127.0.0.1:0", "data_dir": str(data)},
            "backend": backend,
            "guard": {"default_limit": 0},
            "rules": {"gremlin_scans": {"block": False}},
            "audit": {"path": str(data / "audit.jsonl")},
        }
    )


@pytest.mark.parametrize("serializer", SERIALIZERS)
def test_typed_properties_reach_the_client(typed_url: str, serializer: str) -> None:
    conn = DriverRemoteConnection(typed_url, "g", message_serializer=SERIALIZERS[serializer]())
    try:
        g = traversal().with_remote(conn)
        props = g.V().has("name", "t").value_map().next()
        span = g.V().has("name", "t").values("span").next()
    finally:
        conn.close()
    assert props == {
        "name": ["t"], "day": ["2023-01-02"], "at": ["12:30:00"],
        "span": [dt.timedelta(days=1, seconds=2)], "months": ["P1M"], "emb": [[1.0, 2.5]],
    }  # fmt: skip
    assert span == dt.timedelta(days=1, seconds=2)
