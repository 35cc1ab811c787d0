"""GraphBinary v1 for the values most requests and results are made of, without
gremlinpython's generic reader and writer (their per-value dispatch through class methods
and a `BytesIO` cost more than a cached query's whole guard).

`read_value` reads null, String, Int, Long, Double, Boolean, List and Map and raises
`Unhandled` at any other type code (the caller then reads the whole payload with gremlinpython's
reader); `write_value` writes None, str, bool, Int32 ints, lists, dicts and Traversers
itself and hands anything else to the given gremlinpython writer. Both give the bytes and
objects gremlinpython's own do (`tests/unit/test_graphbinary_fast.py` compares them).
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from gremlin_python.process.traversal import Traverser

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")
_REQUEST_HEADER = struct.Struct(">BQQ")  # version byte, request id high and low 64 bits
NULL, INT, LONG, STRING, DOUBLE, LIST, MAP, BOOLEAN = 0xFE, 1, 2, 3, 7, 9, 10, 0x27
_NULL_BYTES = bytes([NULL, 0x01])


class Unhandled(Exception):
    """A type code this module does not read."""


def read_value(data: bytes, at: int) -> tuple[Any, int]:
    """The fully qualified value at `data[at:]` and the offset after it."""
    code = data[at]
    if code == NULL:
        return None, at + 2
    if data[at + 1] == 0x01:  # a typed null
        if code not in _READ:
            raise Unhandled(code)
        return None, at + 2
    at += 2
    if code == STRING:
        (size,) = _I32.unpack_from(data, at)
        end = at + 4 + size
        if size < 0 or end > len(data):
            raise ValueError("string runs past the end of the request")
        return data[at + 4 : end].decode("utf-8"), end
    if code == MAP:
        (size,) = _I32.unpack_from(data, at)
        at += 4
        out: dict[Any, Any] = {}
        for _ in range(size):
            key, at = read_value(data, at)
            if isinstance(key, dict | list):  # gremlinpython's HashableDict.of: not here
                raise Unhandled(code)
            out[key], at = read_value(data, at)
        return out, at
    if code == LIST:
        (size,) = _I32.unpack_from(data, at)
        at += 4
        items = []
        for _ in range(size):
            item, at = read_value(data, at)
            items.append(item)
        return items, at
    if code == INT:
        return _I32.unpack_from(data, at)[0], at + 4
    if code == LONG:
        return _I64.unpack_from(data, at)[0], at + 8
    if code == DOUBLE:
        return _F64.unpack_from(data, at)[0], at + 8
    if code == BOOLEAN:
        return data[at] == 0x01, at + 1
    raise Unhandled(code)


_READ = frozenset({STRING, MAP, LIST, INT, LONG, DOUBLE, BOOLEAN})


def write_value(out: bytearray, value: Any, fallback: Callable[[Any, bytearray], Any]) -> None:
    """Append `value`, fully qualified, as gremlinpython's writer would (`fallback` is its
    `to_dict`, for the types this function does not write itself)."""
    kind = type(value)
    if kind is str:
        data = value.encode("utf-8")
        out += b"\x03\x00"
        out += _I32.pack(len(data))
        out += data
    elif value is None:
        out += _NULL_BYTES
    elif kind is list:
        out += b"\x09\x00"
        out += _I32.pack(len(value))
        for item in value:
            write_value(out, item, fallback)
    elif kind is Traverser:
        out += b"\x21\x00"
        out += _I64.pack(value.bulk)
        write_value(out, value.object, fallback)
    elif kind is bool:
        out += b"\x27\x00\x01" if value else b"\x27\x00\x00"
    elif kind is int and -(2**31) <= value < 2**31:
        out += b"\x01\x00"
        out += _I32.pack(value)
    elif kind is dict:
        out += b"\x0a\x00"
        out += _I32.pack(len(value))
        for key, item in value.items():
            write_value(out, key, fallback)
            write_value(out, item, fallback)
    else:
        fallback(value, out)


def plain_request(payload: bytes) -> tuple[uuid.UUID, str, str, dict[str, Any]]:
    """Request id, op, processor and arguments of a GraphBinary request payload whose
    arguments are all values `read_value` reads (else `Unhandled`, or any error on malformed
    bytes: the caller reads it with gremlinpython's reader, which says what is wrong)."""
    version, high, low = _REQUEST_HEADER.unpack_from(payload, 0)
    if version != 0x81:
        raise Unhandled(version)
    at, texts = _REQUEST_HEADER.size, []
    for _ in range(2):  # op, processor
        (size,) = _I32.unpack_from(payload, at)
        if not 0 <= size <= 1 << 20 or at + 4 + size > len(payload):
            raise Unhandled(size)
        texts.append(payload[at + 4 : at + 4 + size].decode("utf-8"))
        at += 4 + size
    (count,) = _I32.unpack_from(payload, at)
    if not 0 <= count <= 64:
        raise Unhandled(count)
    at += 4
    args = {}
    for _ in range(count):
        key, at = read_value(payload, at)
        args[str(key)], at = read_value(payload, at)
    return uuid.UUID(int=(high << 64) | low), texts[0], texts[1], args


_SCALARS = (str, int, float, bool, type(None))


class RecentRequests:
    """`plain_request` that remembers the arguments of recent short payloads: a client sends
    the same request again and again byte for byte but for its request id, and reading the
    arguments again cost more than the rest of the frame's way to the runner. Only arguments
    of scalars and maps of scalars are kept (each read gets its own maps, so a caller that
    changes them changes nothing kept), never those of an `authentication` request (its
    credentials); `LIMIT` payloads at most, then it starts over."""

    LIMIT = 512
    MAX_BYTES = 4096

    def __init__(self) -> None:
        self._args: dict[bytes, tuple[str, str, dict[str, Any]]] = {}

    def read(self, payload: bytes) -> tuple[uuid.UUID, str, str, dict[str, Any]]:
        short = len(payload) <= self.MAX_BYTES
        if short and payload[:1] == b"\x81":
            hit = self._args.get(payload[_REQUEST_HEADER.size :])
            if hit is not None:
                _, high, low = _REQUEST_HEADER.unpack_from(payload, 0)
                op, processor, args = hit
                return uuid.UUID(int=(high << 64) | low), op, processor, _fresh(args)
        request_id, op, processor, args = plain_request(payload)
        if short and op != "authentication" and _flat(args):  # credentials are not kept
            if len(self._args) >= self.LIMIT:
                self._args.clear()
            self._args[payload[_REQUEST_HEADER.size :]] = (op, processor, _fresh(args))
        return request_id, op, processor, args


def _flat(args: dict[str, Any]) -> bool:
    return all(
        isinstance(v, _SCALARS)
        or (type(v) is dict and all(isinstance(x, _SCALARS) for x in v.values()))
        for v in args.values()
    )


def _fresh(args: dict[str, Any]) -> dict[str, Any]:
    return {k: dict(v) if type(v) is dict else v for k, v in args.items()}
