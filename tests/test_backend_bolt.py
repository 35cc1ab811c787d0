"""BoltBackend's mapping of driver values, summaries and errors into the neutral model.

No Neo4j server is available to the tests (FalkorDB's Bolt listener hangs on every second
connection), so graph values are built with the driver's own hydrator, the code that builds
them from Bolt messages; the unreachable-server path uses the real driver.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, time

import pytest
from neo4j import exceptions as neo4j_errors
from neo4j import spatial as neo4j_spatial
from neo4j import time as neo4j_time
from neo4j._codec.hydration.bolt.v1.hydration_handler import _GraphHydrator

from proxy.backends.base import (
    BackendError,
    BackendUnavailable,
    Duration,
    GraphNode,
    GraphPath,
    GraphRelationship,
    Point,
)
from proxy.backends.bolt import BoltBackend, map_error, to_driver, to_neutral
from proxy.backends.embedded import free_port


def test_graph_values() -> None:
    hydrator = _GraphHydrator()
    keanu = hydrator.hydrate_node(1, ["Person", "Actor"], {"name": "Keanu"}, "4:db:1")
    matrix = hydrator.hydrate_node(7, ["Movie"], {"released": 1999}, "4:db:7")
    acted = hydrator.hydrate_relationship(
        3, 1, 7, "ACTED_IN", {"roles": ["Neo"]}, "5:db:3", "4:db:1", "4:db:7"
    )
    path = hydrator.hydrate_path([keanu, matrix], [acted], [1, 1])

    node = to_neutral(keanu)
    assert node == GraphNode(1, ("Actor", "Person"), {"name": "Keanu"}, "4:db:1")
    rel = to_neutral(acted)
    assert rel == GraphRelationship(
        3, "ACTED_IN", 1, 7, {"roles": ["Neo"]}, "5:db:3", "4:db:1", "4:db:7"
    )
    mapped = to_neutral({"p": [path]})
    assert isinstance(mapped["p"][0], GraphPath)
    assert [n.id for n in mapped["p"][0].nodes] == [1, 7]
    assert mapped["p"][0].relationships == (rel,)


def test_temporal_spatial_and_plain_values() -> None:
    assert to_neutral(neo4j_time.Date(2024, 1, 2)) == date(2024, 1, 2)
    assert to_neutral(neo4j_time.Time(3, 4, 5)) == time(3, 4, 5)
    zoned = to_neutral(neo4j_time.DateTime(2024, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert zoned == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    duration = neo4j_time.Duration(months=14, days=3, seconds=7, nanoseconds=5)
    assert to_neutral(duration) == Duration(14, 3, 7, 5)
    assert to_neutral(neo4j_spatial.WGS84Point((13.4, 52.5))) == Point(4326, 13.4, 52.5)
    assert to_neutral(neo4j_spatial.CartesianPoint((1, 2, 3))) == Point(9157, 1, 2, 3)
    assert to_neutral((1, "x", None, True, 2.5, bytearray(b"ab"))) == [
        1,
        "x",
        None,
        True,
        2.5,
        b"ab",
    ]


def test_parameters_for_the_driver() -> None:
    params = to_driver({"p": Point(4326, 13.4, 52.5), "d": [Duration(1, 2, 3, 4)], "x": 1})
    assert isinstance(params["p"], neo4j_spatial.WGS84Point) and params["p"].srid == 4326
    assert params["d"][0] == neo4j_time.Duration(months=1, days=2, seconds=3, nanoseconds=4)
    assert params["x"] == 1
    with pytest.raises(BackendError):
        to_driver({"n": GraphNode(1, (), {})})


def test_errors_keep_the_server_code() -> None:
    syntax = neo4j_errors.Neo4jError._hydrate_neo4j(
        code="Neo.ClientError.Statement.SyntaxError", message="Invalid input 'RETRN'"
    )
    mapped = map_error(syntax)
    assert (mapped.code, mapped.message) == (
        "Neo.ClientError.Statement.SyntaxError", "Invalid input 'RETRN'"
    )  # fmt: skip
    assert isinstance(map_error(neo4j_errors.ServiceUnavailable("gone")), BackendUnavailable)
    assert isinstance(map_error(neo4j_errors.SessionExpired("expired")), BackendUnavailable)


def test_unreachable_upstream_is_unavailable() -> None:
    async def main() -> None:
        backend = BoltBackend(f"bolt://127.0.0.1:{free_port()}", ("neo4j", "pw"))
        try:
            await backend.start()
        finally:
            await backend.close()

    with pytest.raises(BackendUnavailable):
        asyncio.run(main())
