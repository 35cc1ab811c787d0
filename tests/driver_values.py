"""The neo4j driver's result values in the neutral model, so that tests can compare what a
client received through the proxy with what it received straight from a database."""

from __future__ import annotations

import warnings
from typing import Any

from neo4j import graph as neo4j_graph
from neo4j import spatial as neo4j_spatial
from neo4j import time as neo4j_time

from query_guard.values import Duration, GraphNode, GraphPath, GraphRelationship, Point


def _int_id(entity: neo4j_graph.Entity) -> int:
    """The integer id of a Neo4j-shaped element id (`4:db:12`), else the server's own id."""
    parts = entity.element_id.split(":")
    if len(parts) == 3 and parts[0].isdigit() and parts[2].lstrip("-").isdigit():
        return int(parts[2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return int(entity.id)


def _node(node: neo4j_graph.Node) -> GraphNode:
    props = {k: to_neutral(v) for k, v in node.items()}
    return GraphNode(_int_id(node), tuple(sorted(node.labels)), props, node.element_id)


def _relationship(rel: neo4j_graph.Relationship) -> GraphRelationship:
    start, end = rel.start_node, rel.end_node
    assert start is not None and end is not None  # the driver always hydrates both ends
    return GraphRelationship(
        _int_id(rel),
        rel.type,
        _int_id(start),
        _int_id(end),
        {k: to_neutral(v) for k, v in rel.items()},
        rel.element_id,
        start.element_id,
        end.element_id,
    )


def to_neutral(value: Any) -> Any:
    """A driver value (graph, spatial, temporal, containers) as a neutral-model value."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [to_neutral(v) for v in value]
    if isinstance(value, dict):
        return {k: to_neutral(v) for k, v in value.items()}
    if isinstance(value, neo4j_graph.Node):
        return _node(value)
    if isinstance(value, neo4j_graph.Relationship):
        return _relationship(value)
    if isinstance(value, neo4j_graph.Path):
        return GraphPath(
            tuple(_node(n) for n in value.nodes),
            tuple(_relationship(r) for r in value.relationships),
        )
    if isinstance(value, neo4j_spatial.Point):
        return Point(int(value.srid or 0), value[0], value[1], value[2] if len(value) > 2 else None)
    if isinstance(value, neo4j_time.Duration):
        return Duration(value.months, value.days, value.seconds, value.nanoseconds)
    if isinstance(value, neo4j_time.DateTime | neo4j_time.Date | neo4j_time.Time):
        return value.to_native()
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, tuple):  # after Point and Duration, which are tuples too
        return [to_neutral(v) for v in value]
    return value
