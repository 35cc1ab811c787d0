"""The Gremlin front's own GraphBinary reading and writing of plain values
(`query_guard.wire.graphbinary_fast`) gives what gremlinpython's reader and writer give."""

from __future__ import annotations

import io
import uuid
from typing import Any

import pytest
from gremlin_python.driver.request import RequestMessage
from gremlin_python.driver.serializer import GraphBinarySerializersV1
from gremlin_python.process.traversal import Traverser
from gremlin_python.statics import long
from gremlin_python.structure.graph import Vertex
from gremlin_python.structure.io.graphbinaryV1 import GraphBinaryReader, GraphBinaryWriter

from query_guard.wire import gremlin as wire
from query_guard.wire.graphbinary_fast import (
    RecentRequests,
    Unhandled,
    plain_request,
    read_value,
    write_value,
)

VALUES: list[Any] = [
    None, "", "text", "ünïcödé ✓", 0, -1, 2**31 - 1, -(2**31), 1.5, True, False,
    [], ["a", 1, None], {}, {"k": "v", "n": 3, "l": [1, 2], "m": {"x": None}},
    [Traverser("a", 3), Traverser(7, 1)],
]  # fmt: skip


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_writes_what_gremlinpython_writes(value: Any) -> None:
    ours, theirs = bytearray(), bytearray()
    writer = GraphBinaryWriter()
    write_value(ours, value, writer.to_dict)
    writer.to_dict(value, theirs)
    assert ours == theirs


def test_hands_other_types_to_the_writer() -> None:
    ours, theirs = bytearray(), bytearray()
    writer = GraphBinaryWriter()
    value = [Vertex("v1", "person"), long(2**40), {"when": uuid.UUID(int=5)}]
    write_value(ours, value, writer.to_dict)
    writer.to_dict(value, theirs)
    assert ours == theirs


@pytest.mark.parametrize("value", VALUES[:-1], ids=repr)
def test_reads_what_gremlinpython_reads(value: Any) -> None:
    data = bytearray()
    GraphBinaryWriter().to_dict(value, data)
    read, end = read_value(bytes(data), 0)
    assert read == GraphBinaryReader().to_object(io.BytesIO(data))
    assert type(read) is type(value) and end == len(data)


def test_other_types_are_left_to_gremlinpython() -> None:
    data = bytearray()
    GraphBinaryWriter().to_dict(uuid.UUID(int=1), data)
    with pytest.raises(Unhandled):
        read_value(bytes(data), 0)


def _request(args: dict[str, Any], op: str = "eval", request_id: int = 42) -> bytes:
    message = RequestMessage("", op, args)
    return bytes(
        GraphBinarySerializersV1().serialize_message(str(uuid.UUID(int=request_id)), message)
    )


def test_a_client_request_reads_alike() -> None:
    args = {"gremlin": "g.V(x).out()", "bindings": {"x": "case-2", "n": 3},
            "aliases": {"g": "g"}, "batchSize": 64}  # fmt: skip
    frame = _request(args)
    request_id, op, processor, read = plain_request(wire.split_frame(frame)[1])
    assert (request_id, op, processor, read) == (uuid.UUID(int=42), "eval", "", args)
    assert wire.decode_request(frame) == wire.Request(uuid.UUID(int=42), "eval", "", args)


def test_a_request_with_other_types_still_reads() -> None:
    args = {"gremlin": "g.V(x)", "bindings": {"x": uuid.UUID(int=7)}}
    frame = _request(args)
    with pytest.raises(Unhandled):
        plain_request(wire.split_frame(frame)[1])
    assert wire.decode_request(frame).args == args


def test_a_repeated_request_reads_alike_with_its_own_id_and_maps() -> None:
    args = {"gremlin": "g.V(x).out()", "bindings": {"x": "case-2", "n": 3},
            "aliases": {"g": "g"}, "batchSize": 64}  # fmt: skip
    recent = RecentRequests()
    first = wire.decode_request(_request(args, request_id=1), recent)
    first.args["bindings"]["x"] = "changed by its reader"
    again = wire.decode_request(_request(args, request_id=2), recent)
    assert again == wire.Request(uuid.UUID(int=2), "eval", "", args)
    assert recent._args  # kept: the second read came from memory
    other = dict(args, gremlin="g.E()")
    assert wire.decode_request(_request(other, request_id=3), recent).args == other


def test_credentials_are_not_remembered() -> None:
    recent = RecentRequests()
    args = {"sasl": "AHVzZXIAc2VjcmV0", "saslMechanism": "PLAIN"}
    read = wire.decode_request(_request(args, op="authentication"), recent)
    assert read.args == args and not recent._args
