"""Gremlin Server's wire format (TinkerPop 3 driver protocol) for the Gremlin front.

A request frame is `<mime length byte><mime type><payload>`; the payload is GraphBinary v1
(`application/vnd.graphbinary-v1.0`) or GraphSON v3 (`application/vnd.gremlin-v3.0+json`).
Values are read and written by gremlinpython's own serializers (`GraphBinaryReader/Writer`,
`GraphSONReader/Writer`); this module only frames the request and response envelopes around
them, the way Gremlin Server does. Everything here is pure: bytes in, objects out.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import json
import struct
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gremlin_python import statics
from gremlin_python.process import traversal as traversal_module
from gremlin_python.process.traversal import (
    Binding,
    Bytecode,
    P,
    TextP,
    TraversalStrategy,
    Traverser,
)
from gremlin_python.structure.graph import Path
from gremlin_python.structure.io import graphbinaryV1, graphsonV3d0

from query_guard.wire.graphbinary_fast import RecentRequests, plain_request, write_value
from query_guard.wire.graphbinary_requests import Lambda, request_reader

GRAPHBINARY = "application/vnd.graphbinary-v1.0"
GRAPHSON3 = "application/vnd.gremlin-v3.0+json"
GRAPHSON = "application/json"  # Gremlin Server's HTTP default: GraphSON 3
MIME_TYPES = (GRAPHBINARY, GRAPHSON3, GRAPHSON)

# TinkerPop ResponseStatusCode values used by the front
SUCCESS, NO_CONTENT, PARTIAL_CONTENT = 200, 204, 206
UNAUTHORIZED, AUTHENTICATE = 401, 407
MALFORMED_REQUEST, INVALID_REQUEST_ARGUMENTS = 498, 499
SERVER_ERROR, SCRIPT_EVALUATION_ERROR = 500, 597
SERIALIZATION_ERROR = 599

# GraphSON enum types a request may carry (gremlinpython's reader knows only some of them)
_ENUMS = frozenset(
    {"Barrier", "Cardinality", "Column", "Direction", "DT", "GType", "Merge", "Operator",
     "Order", "Pick", "Pop", "Scope", "T"}
)  # fmt: skip
_INT32 = struct.Struct(">i")
_HEADER = struct.Struct(">BQQ")  # version byte, request id high and low 64 bits


class WireError(ValueError):
    """A frame that is not a Gremlin request (status 498 / 499)."""

    def __init__(self, message: str, request_id: uuid.UUID | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id


@dataclass
class Request:
    request_id: uuid.UUID
    op: str
    processor: str
    args: dict[str, Any] = field(default_factory=dict)
    mime: str = GRAPHBINARY


def split_frame(frame: bytes) -> tuple[str, bytes]:
    """The mime type and payload of a binary WebSocket frame."""
    if not frame:
        raise WireError("empty frame")
    size = frame[0]
    mime = frame[1 : 1 + size].decode("ascii", "replace")
    if len(frame) < 1 + size:
        raise WireError("frame shorter than its mime type")
    return mime, frame[1 + size :]


def decode_request(frame: bytes, recent: RecentRequests | None = None) -> Request:
    """`recent`: a connection's or front's memory of recent GraphBinary requests."""
    mime, payload = split_frame(frame)
    base = mime.split(";")[0].strip()
    if base == GRAPHBINARY:
        return _graphbinary_request(payload, recent)
    if base in (GRAPHSON3.split(";")[0], GRAPHSON):
        return decode_graphson_request(payload, mime)
    raise WireError(f"unsupported mime type {mime!r}; use {GRAPHBINARY} or {GRAPHSON3}")


def _graphbinary_request(payload: bytes, recent: RecentRequests | None = None) -> Request:
    read = recent.read if recent is not None else plain_request
    try:  # the common request (strings, numbers, maps, lists) without gremlinpython's reader
        return Request(*read(payload), GRAPHBINARY)
    except Exception:  # anything else, or malformed: read (and refused) as it always was
        pass
    reader = request_reader()
    buf = io.BytesIO(payload)
    request_id: uuid.UUID | None = None
    try:
        version, high, low = _HEADER.unpack(buf.read(_HEADER.size))
        if version != 0x81:
            raise WireError(f"unsupported GraphBinary request version {version:#x}")
        request_id = uuid.UUID(int=(high << 64) | low)
        op = _string(buf)
        processor = _string(buf)
        (count,) = _INT32.unpack(buf.read(4))
        if not 0 <= count <= 64:
            raise WireError(f"implausible argument count {count}", request_id)
        args = {}
        for _ in range(count):
            key = reader.to_object(buf)
            args[str(key)] = reader.to_object(buf)
    except WireError:
        raise
    except Exception as exc:  # gremlinpython raises anything on malformed bytes
        raise WireError(f"malformed GraphBinary request: {exc!r}", request_id) from exc
    return Request(request_id, op, processor, args, GRAPHBINARY)


def _string(buf: io.BytesIO) -> str:
    (size,) = _INT32.unpack(buf.read(4))
    if not 0 <= size <= 1 << 20:
        raise WireError(f"implausible string length {size}")
    return buf.read(size).decode("utf-8")


def decode_graphson_request(payload: bytes | str, mime: str = GRAPHSON3) -> Request:
    """A GraphSON 3 request message (also the body of the HTTP front's POST)."""
    try:
        message = json.loads(payload)
    except ValueError as exc:
        raise WireError(f"request is not JSON: {exc}") from exc
    if not isinstance(message, dict):
        raise WireError("request must be a JSON object")
    reader = graphsonV3d0.GraphSONReader()
    try:
        raw_id = message.get("requestId")
        request_id = uuid.UUID(str(reader.to_object(raw_id))) if raw_id else uuid.uuid4()
        raw_args = message.get("args", {})
        if not isinstance(raw_args, dict):
            raise WireError("args must be an object", request_id)
        args = {k: _graphson_arg(k, v, reader) for k, v in raw_args.items()}
    except WireError:
        raise
    except Exception as exc:
        raise WireError(f"malformed GraphSON request: {exc}") from exc
    return Request(
        request_id, str(message.get("op", "eval")), str(message.get("processor", "")), args, mime
    )


def _graphson_arg(key: str, value: Any, reader: graphsonV3d0.GraphSONReader) -> Any:
    """A request argument: gremlinpython's reader for the types it knows, and the request-only
    types (bytecode, predicates, lambdas, strategies) built here as the client built them."""
    if isinstance(value, list):
        return [_graphson_arg(key, v, reader) for v in value]
    if not isinstance(value, dict):
        return value
    kind, body = value.get("@type"), value.get("@value")
    if kind == "g:Bytecode" and isinstance(body, dict):
        return _graphson_bytecode(body, reader)
    if kind in ("g:P", "g:TextP") and isinstance(body, dict):
        return _graphson_predicate(P if kind == "g:P" else TextP, body, reader)
    if kind == "g:Binding" and isinstance(body, dict):
        return Binding(str(body.get("key")), _graphson_arg(key, body.get("value"), reader))
    if kind == "g:Lambda" and isinstance(body, dict):
        return Lambda(str(body.get("language")), str(body.get("script")), -1)
    if isinstance(kind, str) and kind.endswith("Strategy") and isinstance(body, dict):
        conf = body.get("conf", {})
        conf = {k: _graphson_arg(k, v, reader) for k, v in conf.items()}
        return TraversalStrategy(kind[2:], conf, body.get("fqcn"))
    if kind in ("g:List", "g:Set") and isinstance(body, list):
        items = [_graphson_arg(key, v, reader) for v in body]
        if kind == "g:Set":  # as GraphBinary's reader builds it: a set, when it can be one
            try:
                return set(items)
            except TypeError:
                return items
        return items
    if kind == "g:Map" and isinstance(body, list):
        items = [_graphson_arg(key, v, reader) for v in body]
        return dict(zip(items[::2], items[1::2], strict=False))
    if kind is None:
        return {k: _graphson_arg(k, v, reader) for k, v in value.items()}
    if isinstance(kind, str) and kind[2:] in _ENUMS and isinstance(body, str):
        cls = getattr(traversal_module, kind[2:])
        member = getattr(cls, body, None) or getattr(cls, body + "_", None)
        if member is not None:
            return member
    return reader.to_object(value)


def _graphson_predicate(
    kind: type[P] | type[TextP], body: dict[str, Any], reader: graphsonV3d0.GraphSONReader
) -> Any:
    operator = str(body.get("predicate"))
    value = _graphson_arg("", body.get("value"), reader)
    if operator in ("within", "without"):
        return kind(operator, list(value) if isinstance(value, list | set) else [value])
    if operator in ("between", "inside", "outside", "and", "or") and isinstance(value, list):
        return kind(operator, *value[:2])
    return kind(operator, value)


def _graphson_bytecode(d: dict[str, Any], reader: graphsonV3d0.GraphSONReader) -> Bytecode:
    bytecode = Bytecode()
    for kind, target in (("source", bytecode.source_instructions),
                         ("step", bytecode.step_instructions)):  # fmt: skip
        for instruction in d.get(kind, []):
            name, *args = instruction
            target.append([name, *(_graphson_arg("", a, reader) for a in args)])
    return bytecode


# ---------------------------------------------------------------- responses


def encode_response(
    mime: str,
    request_id: uuid.UUID | None,
    code: int,
    data: Any = None,
    message: str = "",
    attributes: dict[str, Any] | None = None,
) -> bytes:
    """One response message in the request's serialization (no mime prefix: the server sends
    responses without one)."""
    attributes = attributes or {}
    meta: dict[str, Any] = {}
    data = writable(data)
    if mime.split(";")[0] == GRAPHBINARY:
        return _graphbinary_response(request_id, code, data, message, attributes, meta)
    writer = graphsonV3d0.GraphSONWriter({Path: _PathWriter, statics.BigDecimal: _BigDecimalWriter})
    body = {
        "requestId": str(request_id) if request_id else None,
        "status": {"code": code, "message": message, "attributes": writer.to_dict(attributes)},
        "result": {"data": writer.to_dict(data), "meta": writer.to_dict(meta)},
    }
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


class HashableList(list):  # type: ignore[type-arg]
    """A list used as a map key (`groupCount().by(fold())`): gremlinpython's writers write a
    list but nothing at all for the tuple a hashable key would otherwise be."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))


def writable(value: Any) -> Any:
    """A result as gremlinpython's writers can write it, nothing dropped:

    * ints beyond Int32 as its `long` (Int64) or `bigint` (BigInteger) — a plain int is
      written as an Int32 and fails when wider;
    * tuples (map keys) as lists, frozensets as sets;
    * a `Decimal` as TinkerPop's BigDecimal;
    * a date or a time of day (no GraphBinary v1 / GraphSON 3 type holds one alone) as its
      ISO 8601 text, as `datetime.date.isoformat()` writes it.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if -(2**31) <= value < 2**31 or isinstance(value, statics.long | statics.bigint):
            return value
        return statics.long(value) if -(2**63) <= value < 2**63 else statics.bigint(value)
    if isinstance(value, list):
        return [writable(v) for v in value]
    if isinstance(value, tuple):
        return HashableList(writable(v) for v in value)
    if isinstance(value, set | frozenset):
        return {writable(v) for v in value}
    if isinstance(value, dict):
        return type(value)((writable(k), writable(v)) for k, v in value.items())
    if isinstance(value, Traverser):
        return Traverser(writable(value.object), value.bulk)
    if isinstance(value, Path):
        return Path(value.labels, [writable(v) for v in value.objects])
    if isinstance(value, Decimal):
        return _big_decimal(value)
    if isinstance(value, dt.date | dt.time) and not isinstance(value, dt.datetime):
        return value.isoformat()
    return value


def _big_decimal(value: Decimal) -> statics.BigDecimal:
    if not value.is_finite():
        raise TypeError(f"{value} has no BigDecimal form")
    sign, digits, exponent = value.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    return statics.BigDecimal(-int(exponent), unscaled)


class _DurationWriter(graphbinaryV1.DurationIO):
    """GraphBinary Duration with its days: gremlinpython's writes `timedelta.seconds`, the
    seconds within the last day, and so drops whole days."""

    @classmethod
    def dictify(
        cls,
        obj: dt.timedelta,
        writer: graphbinaryV1.GraphBinaryWriter,
        to_extend: bytearray,
        as_value: bool = False,
        nullable: bool = True,
    ) -> bytearray:
        cls.prefix_bytes(cls.graphbinary_type, as_value, nullable, to_extend)
        seconds = obj.days * 86_400 + obj.seconds
        graphbinaryV1.LongIO.dictify(seconds, writer, to_extend, True, False)
        graphbinaryV1.IntIO.dictify(obj.microseconds * 1000, writer, to_extend, True, False)
        return to_extend


class _StrictWriter(graphbinaryV1.GraphBinaryWriter):
    """gremlinpython's GraphBinary writer, refusing a type it has no serializer for: its own
    writes nothing for one, which leaves the client reading a broken frame."""

    def __init__(self) -> None:
        super().__init__({dt.timedelta: _DurationWriter})

    def to_dict(self, obj: Any, to_extend: bytearray | None = None) -> Any:
        if (
            obj is not None
            and type(obj) not in self.serializers
            and not any(isinstance(obj, kind) for kind in self.serializers)
        ):
            raise TypeError(f"GraphBinary has no type for {type(obj).__name__} {obj!r:.80}")
        return super().to_dict(obj, to_extend)


@functools.cache
def _strict_writer() -> _StrictWriter:
    """One writer per process: it holds only its table of serializers."""
    return _StrictWriter()


class _PathWriter:
    """GraphSON 3 `g:Path` (gremlinpython reads it, but has no writer for it)."""

    @classmethod
    def dictify(cls, path: Path, writer: graphsonV3d0.GraphSONWriter) -> dict[str, Any]:
        labels = [set(x) for x in path.labels]
        body = {"labels": writer.to_dict(labels), "objects": writer.to_dict(list(path.objects))}
        return {"@type": "g:Path", "@value": body}


class _BigDecimalWriter:
    """GraphSON 3 `gx:BigDecimal` (gremlinpython's writer reads a `.value` the type lacks)."""

    @classmethod
    def dictify(cls, n: statics.BigDecimal, writer: graphsonV3d0.GraphSONWriter) -> dict[str, Any]:
        return {"@type": "gx:BigDecimal", "@value": str(n.value)}


def _graphbinary_response(
    request_id: uuid.UUID | None,
    code: int,
    data: Any,
    message: str,
    attributes: dict[str, Any],
    meta: dict[str, Any],
) -> bytes:
    writer = _strict_writer()
    out = bytearray(b"\x81")
    if request_id is None:
        out += b"\x01"
    else:
        out += b"\x00" + request_id.bytes
    out += _INT32.pack(code)
    if message:
        encoded = message.encode("utf-8")
        out += b"\x00" + _INT32.pack(len(encoded)) + encoded
    else:
        out += b"\x01"
    for table in (attributes, meta):
        out += _INT32.pack(len(table))
        for k, v in table.items():
            write_value(out, k, writer.to_dict)
            write_value(out, v, writer.to_dict)
    write_value(out, data, writer.to_dict)
    return bytes(out)
