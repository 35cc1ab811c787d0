"""Bolt messages and their transport framing (chunks).

A message is one PackStream structure whose tag is the message signature. On the wire it is
split into chunks of at most 65535 bytes, each prefixed by its 2-byte size, and ends with an
empty chunk (0x0000). An empty chunk between messages is a keep-alive NOOP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from query_guard.wire.bolt_values import ValueCodec
from query_guard.wire.packstream import (
    InvalidValue,
    Packed,
    PackStreamError,
    TooManyValues,
    Unpacker,
    pack,
    pack_str,
    packb,
)

MAX_CHUNK = 0xFFFF
MESSAGE_SIZE = "LIM.MESSAGE_SIZE"  # the finding code of a message over its value budget
DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024

# Requests (client -> server)
HELLO, GOODBYE, RESET = 0x01, 0x02, 0x0F
RUN, BEGIN, COMMIT, ROLLBACK = 0x10, 0x11, 0x12, 0x13
DISCARD, PULL = 0x2F, 0x3F
TELEMETRY, ROUTE, LOGON, LOGOFF = 0x54, 0x66, 0x6A, 0x6B
# Responses (server -> client)
SUCCESS, RECORD, IGNORED, FAILURE = 0x70, 0x71, 0x7E, 0x7F

REQUEST_NAMES = {
    HELLO: "HELLO",
    GOODBYE: "GOODBYE",
    RESET: "RESET",
    RUN: "RUN",
    BEGIN: "BEGIN",
    COMMIT: "COMMIT",
    ROLLBACK: "ROLLBACK",
    DISCARD: "DISCARD",
    PULL: "PULL",
    TELEMETRY: "TELEMETRY",
    ROUTE: "ROUTE",
    LOGON: "LOGON",
    LOGOFF: "LOGOFF",
}

# Field shapes per request: each field's Python type after decoding.
_SHAPES: dict[int, tuple[type, ...]] = {
    HELLO: (dict,),
    GOODBYE: (),
    RESET: (),
    RUN: (str, dict, dict),
    BEGIN: (dict,),
    COMMIT: (),
    ROLLBACK: (),
    DISCARD: (dict,),
    PULL: (dict,),
    TELEMETRY: (int,),
    ROUTE: (dict, list, object),
    LOGON: (dict,),
    LOGOFF: (),
}


class FramingError(Exception):
    """The byte stream is not Bolt (bad chunking, oversized message): close the connection."""


@dataclass(slots=True)
class Request:
    """One decoded client message; `error` is set when its values could not be represented."""

    tag: int
    fields: list[Any]
    error: str | None = None

    @property
    def name(self) -> str:
        name = REQUEST_NAMES.get(self.tag)
        return name if name is not None else f"0x{self.tag:02X}"


def decode_request(data: bytes, codec: ValueCodec, max_values: int = 0) -> Request:
    """Parse one message. Raises FramingError for bytes that are not a Bolt request.

    A well-formed message carrying a value we cannot represent (an unknown time zone, year 0)
    comes back with `error` set, so the server can answer FAILURE and keep the connection;
    so does one holding more than `max_values` PackStream values (0: no bound), refused
    before they are built (`LIM.MESSAGE_SIZE`).
    """
    if len(data) >= 2 and data[0] >> 4 == 0xB:  # the structure header, read here
        size, tag = data[0] & 0x0F, data[1]
        unpacker = Unpacker(data, codec.hydrate_parameter, 2, max_values)
    else:
        unpacker = Unpacker(data, codec.hydrate_parameter, budget=max_values)
        try:
            size, tag = unpacker.structure_header()
        except PackStreamError as exc:
            raise FramingError(f"message is not a structure: {exc}") from None
    shape = _SHAPES.get(tag)
    if shape is None:
        raise FramingError(f"unknown message signature 0x{tag:02X}")
    error: str | None = None
    fields: list[Any] = []
    try:
        for _ in range(size):
            fields.append(unpacker.unpack(1))
    except TooManyValues as exc:
        fields = []  # drop what was built so far at once
        error = (
            f"{MESSAGE_SIZE}: {exc} ([limits] max_message_elements); "
            "send fewer or smaller parameters"
        )
    except InvalidValue as exc:
        error = str(exc)
    except PackStreamError as exc:
        raise FramingError(f"malformed {REQUEST_NAMES[tag]}: {exc}") from None
    if error is None:
        if not unpacker.at_end():
            raise FramingError(f"trailing bytes after {REQUEST_NAMES[tag]}")
        if tag == ROUTE and len(fields) == 3 and isinstance(fields[2], str | None):
            fields[2] = {"db": fields[2]} if fields[2] else {}  # Bolt 4.3 form: db name
        if len(fields) != len(shape) or not all(map(isinstance, fields, shape)):
            error = f"{REQUEST_NAMES[tag]} has unexpected fields"
    return Request(tag, fields, error)


# Short requests without values to hydrate recur verbatim (PULL {n: 1000}, TELEMETRY 2, ...):
# their decoded form is shared. Handlers only read these fields.
_CACHEABLE = frozenset({PULL, DISCARD, TELEMETRY, COMMIT, ROLLBACK, RESET, GOODBYE, LOGOFF})
_CACHE_LIMIT = 512
_decoded: dict[bytes, Request] = {}


def decode_request_cached(data: bytes, codec: ValueCodec, max_values: int = 0) -> Request:
    """`decode_request`, remembering short value-only requests by their bytes."""
    hit = _decoded.get(data)
    if hit is not None:
        return hit
    request = decode_request(data, codec, max_values)
    if (
        len(data) <= 32
        and request.tag in _CACHEABLE
        and request.error is None
        and len(_decoded) < _CACHE_LIMIT
    ):
        _decoded[data] = request
    return request


def encode_message(out: bytearray, tag: int, fields: list[Any], codec: ValueCodec) -> None:
    """Append one chunked message to `out`."""
    body = bytearray()
    body.append(0xB0 + len(fields))
    body.append(tag)
    for value in fields:
        pack(body, value, codec.dehydrate)
    frame(out, body)


def frame(out: bytearray, body: bytes | bytearray) -> None:
    """Append `body` as chunks plus the end-of-message marker."""
    size = len(body)
    if size <= MAX_CHUNK:
        out += size.to_bytes(2, "big")
        out += body
    else:
        view = memoryview(body)
        for start in range(0, size, MAX_CHUNK):
            part = view[start : start + MAX_CHUNK]
            out += len(part).to_bytes(2, "big")
            out += part
    out += b"\x00\x00"


def success(metadata: dict[str, Any], codec: ValueCodec) -> bytes:
    """SUCCESS {metadata}, framed. Every query's path writes two: their keys come from a
    small set (`_KEYS`, encoded once) and most values are text, small integers, `Packed`
    fragments or short lists of those, written here without a call of `pack` each."""
    size = len(metadata)
    if size >= 0x10:
        out = bytearray()
        encode_message(out, SUCCESS, [metadata], codec)
        return bytes(out)
    body = bytearray(b"\xb1\x70")
    body.append(0xA0 + size)
    for key, value in metadata.items():
        encoded = _KEYS.get(key)
        if encoded is None:
            if type(key) is not str:
                raise PackStreamError(f"map keys must be strings, not {type(key).__name__}")
            pack_str(body, key)
        else:
            body += encoded
        kind = type(value)
        if kind is str:
            pack_str(body, value)
        elif kind is int and -0x10 <= value < 0x80:
            body.append(value & 0xFF)
        elif kind is Packed:
            body += value
        elif kind is list and len(value) < 0x10:  # fields, statuses: text or Packed items
            body.append(0x90 + len(value))
            for item in value:
                if type(item) is str:
                    pack_str(body, item)
                elif type(item) is Packed:
                    body += item
                else:
                    pack(body, item, codec.dehydrate, 2)
        else:
            pack(body, value, codec.dehydrate, 1)
    out = bytearray()
    frame(out, body)
    return bytes(out)


_KEYS = {
    key: packb(key)
    for key in ("fields", "t_first", "qid", "type", "t_last", "db", "qg_id", "statuses",
                "notifications", "stats", "plan", "bookmark", "has_more", "server",
                "connection_id", "hints")
}  # fmt: skip


def failure(metadata: dict[str, Any], codec: ValueCodec) -> bytes:
    out = bytearray()
    encode_message(out, FAILURE, [metadata], codec)
    return bytes(out)


IGNORED_MESSAGE = b"\x00\x02\xb0\x7e\x00\x00"
SUCCESS_EMPTY = b"\x00\x03\xb1\x70\xa0\x00\x00"  # SUCCESS {}


def encode_records(out: bytearray, rows: list[list[Any]], codec: ValueCodec) -> None:
    """Append one RECORD message per row (the hot path of result streaming)."""
    dehydrate = codec.dehydrate
    body = bytearray()
    for row in rows:
        body.clear()
        body += b"\xb1\x71"
        pack(body, row, dehydrate)
        frame(out, body)


class Dechunker:
    """Incremental reassembly of messages from chunks, with a bound on message size."""

    __slots__ = ("_buf", "_max", "_msg")

    def __init__(self, max_message: int = DEFAULT_MAX_MESSAGE) -> None:
        self._buf = bytearray()
        self._msg = bytearray()
        self._max = max_message

    def feed(self, data: bytes) -> list[bytes]:
        """Complete messages found after adding `data` (NOOP chunks are dropped)."""
        buf = self._buf
        buf += data
        messages: list[bytes] = []
        pos, end = 0, len(buf)
        while end - pos >= 2:
            size = (buf[pos] << 8) | buf[pos + 1]
            if size == 0:
                pos += 2
                if self._msg:
                    messages.append(bytes(self._msg))
                    self._msg.clear()
                continue
            # Checked before the chunk body arrives, so an oversized message never buffers.
            if len(self._msg) + size > self._max:
                raise FramingError(f"message larger than {self._max} bytes")
            if end - pos - 2 < size:
                break
            self._msg += buf[pos + 2 : pos + 2 + size]
            pos += 2 + size
        del buf[:pos]
        return messages

    @property
    def buffered(self) -> int:
        return len(self._buf) + len(self._msg)
