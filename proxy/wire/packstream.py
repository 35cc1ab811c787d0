"""PackStream v1, the binary value format inside Bolt messages (written from the Bolt spec).

`pack` appends one value to a bytearray; `Unpacker` reads values back. Both are type-neutral:
structures travel as `Structure(tag, fields)` and the caller supplies the hooks that map them to
and from domain types (see `query_guard.wire.bolt_values`), because the mapping depends on the
negotiated Bolt version.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
MAX_SIZE = 2**32 - 1  # sizes of strings, bytes, lists and maps are unsigned 32-bit
MAX_STRUCT_FIELDS = 15
MAX_DEPTH = 200  # nesting bound, so hostile input cannot exhaust the Python stack

_F64 = struct.Struct(">d")
_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")


class PackStreamError(ValueError):
    """Bytes that are not PackStream, or a value PackStream cannot carry."""


class InvalidValue(PackStreamError):
    """Well-formed PackStream holding a value the receiver cannot represent (e.g. year 0)."""


class TooManyValues(InvalidValue):
    """More values than the unpacker's budget: a few bytes of empty maps or lists would
    otherwise expand into a Python object each (~100 bytes per byte received)."""


@dataclass(slots=True)
class Structure:
    """A tagged tuple of fields: the wire form of nodes, temporal values, messages, ..."""

    tag: int
    fields: list[Any]

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Structure)
            and self.tag == other.tag
            and list(self.fields) == list(other.fields)
        )


class Packed(bytes):
    """A value already in PackStream form, appended as it is (cached constant fragments of
    hot messages: the outcome status of a summary, the extra map of an upstream RUN)."""

    __slots__ = ()

    @classmethod
    def of(cls, value: Any, dehydrate: Dehydrate | None = None) -> Packed:
        return cls(packb(value, dehydrate))


Dehydrate = Callable[[Any], Structure]
Hydrate = Callable[[Structure], Any]


def _header(out: bytearray, size: int, tiny: int, m8: int | None, m16: int, m32: int) -> None:
    if size < 0x10:
        out.append(tiny + size)
    elif m8 is not None and size < 0x100:
        out.append(m8)
        out.append(size)
    elif size < 0x10000:
        out.append(m16)
        out += _U16.pack(size)
    elif size <= MAX_SIZE:
        out.append(m32)
        out += _U32.pack(size)
    else:
        raise PackStreamError(f"collection of {size} items is too large for PackStream")


def pack_int(out: bytearray, value: int) -> None:
    if -0x10 <= value < 0x80:
        out.append(value & 0xFF)
    elif -0x80 <= value < 0x80:
        out.append(0xC8)
        out += _I8.pack(value)
    elif -0x8000 <= value < 0x8000:
        out.append(0xC9)
        out += _I16.pack(value)
    elif -0x80000000 <= value < 0x80000000:
        out.append(0xCA)
        out += _I32.pack(value)
    elif INT64_MIN <= value <= INT64_MAX:
        out.append(0xCB)
        out += _I64.pack(value)
    else:
        raise PackStreamError(f"integer {value} does not fit in 64 bits")


def pack_str(out: bytearray, value: str) -> None:
    data = value.encode("utf-8")
    size = len(data)
    if size < 0x10:
        out.append(0x80 + size)
    else:
        _header(out, size, 0x80, 0xD0, 0xD1, 0xD2)
    out += data


def pack(out: bytearray, value: Any, dehydrate: Dehydrate | None = None, depth: int = 0) -> None:
    """Append the PackStream encoding of `value` to `out`.

    Types without a native PackStream form go through `dehydrate`, which returns a Structure.
    """
    if depth > MAX_DEPTH:
        raise PackStreamError("value nested too deeply")
    kind = type(value)
    if value is None:
        out.append(0xC0)
    elif kind is bool:
        out.append(0xC3 if value else 0xC2)
    elif kind is int:
        pack_int(out, value)
    elif kind is str:
        pack_str(out, value)
    elif kind is float:
        out.append(0xC1)
        out += _F64.pack(value)
    elif kind is list or kind is tuple:
        _header(out, len(value), 0x90, 0xD4, 0xD5, 0xD6)
        for item in value:
            pack(out, item, dehydrate, depth + 1)
    elif kind is dict:
        _header(out, len(value), 0xA0, 0xD8, 0xD9, 0xDA)
        for key, item in value.items():
            if type(key) is not str:
                raise PackStreamError(f"map keys must be strings, not {type(key).__name__}")
            pack_str(out, key)
            pack(out, item, dehydrate, depth + 1)
    elif kind is Packed:
        out += value
    elif kind is Structure:
        _pack_structure(out, value, dehydrate, depth)
    elif kind is bytes or kind is bytearray or kind is memoryview:
        size = len(value)
        if size < 0x100:
            out.append(0xCC)
            out.append(size)
        elif size < 0x10000:
            out.append(0xCD)
            out += _U16.pack(size)
        elif size <= MAX_SIZE:
            out.append(0xCE)
            out += _U32.pack(size)
        else:
            raise PackStreamError("byte array too large for PackStream")
        out += value
    else:
        _pack_other(out, value, dehydrate, depth)


def _pack_structure(
    out: bytearray, value: Structure, dehydrate: Dehydrate | None, depth: int
) -> None:
    if len(value.fields) > MAX_STRUCT_FIELDS:
        raise PackStreamError(f"structure with {len(value.fields)} fields (max 15)")
    if not 0 <= value.tag <= 0x7F:
        raise PackStreamError(f"structure tag {value.tag:#x} out of range")
    out.append(0xB0 + len(value.fields))
    out.append(value.tag)
    for item in value.fields:
        pack(out, item, dehydrate, depth + 1)


def _pack_other(out: bytearray, value: Any, dehydrate: Dehydrate | None, depth: int) -> None:
    # Subclasses (IntEnum, OrderedDict, str enums, ...) reach here; pack them as their base.
    if isinstance(value, bool):
        out.append(0xC3 if value else 0xC2)
    elif isinstance(value, int):
        pack_int(out, int(value))
    elif isinstance(value, float):
        out.append(0xC1)
        out += _F64.pack(float(value))
    elif isinstance(value, str):
        pack_str(out, value)  # encode() sees the underlying text, not an enum repr
    elif isinstance(value, (list, tuple)):
        pack(out, list(value), dehydrate, depth)
    elif isinstance(value, dict):
        pack(out, dict(value), dehydrate, depth)
    elif dehydrate is not None:
        pack(out, dehydrate(value), dehydrate, depth)
    else:
        raise PackStreamError(f"cannot pack a value of type {type(value).__name__}")


def packb(value: Any, dehydrate: Dehydrate | None = None) -> bytes:
    out = bytearray()
    pack(out, value, dehydrate)
    return bytes(out)


class Unpacker:
    """Reads PackStream values from `data`; structures are handed to `hydrate`."""

    __slots__ = ("budget", "data", "hydrate", "limit", "pos")

    def __init__(
        self, data: bytes, hydrate: Hydrate | None = None, pos: int = 0, budget: int = 0
    ) -> None:
        self.data = data
        self.hydrate = hydrate
        self.pos = pos
        # values (of any kind, containers included) left to read; 0 at the start: no bound
        self.limit = budget
        self.budget = budget if budget > 0 else -1

    def _spend(self, n: int) -> None:
        """Account for `n` values about to be read (checked before any is built)."""
        if self.budget >= 0:
            self.budget -= n
            if self.budget < 0:
                raise TooManyValues(f"the message holds more than {self.limit} values")

    def at_end(self) -> bool:
        return self.pos >= len(self.data)

    def _take(self, n: int) -> bytes:
        start = self.pos
        end = start + n
        if end > len(self.data):
            raise PackStreamError("truncated PackStream value")
        self.pos = end
        return self.data[start:end]

    def _byte(self) -> int:
        pos = self.pos
        if pos >= len(self.data):
            raise PackStreamError("truncated PackStream value")
        self.pos = pos + 1
        return self.data[pos]

    def _unpack_from(self, fmt: struct.Struct) -> Any:
        pos = self.pos
        if pos + fmt.size > len(self.data):
            raise PackStreamError("truncated PackStream value")
        self.pos = pos + fmt.size
        return fmt.unpack_from(self.data, pos)[0]

    def structure_header(self) -> tuple[int, int]:
        """(field count, tag) of the structure starting here."""
        marker = self._byte()
        if marker >> 4 != 0xB:
            raise PackStreamError(f"expected a structure, found marker {marker:#04x}")
        return marker & 0x0F, self._byte()

    def unpack(self, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise PackStreamError("value nested too deeply")
        data, pos = self.data, self.pos
        if pos >= len(data):
            raise PackStreamError("truncated PackStream value")
        marker = data[pos]
        pos += 1
        if marker < 0x80:
            self.pos = pos
            return marker
        high = marker >> 4
        if high == 0x8 or marker == 0xD0:  # strings up to 255 bytes: read here, no calls
            if high == 0x8:
                end = pos + (marker & 0x0F)
            elif pos < len(data):
                end = pos + 1 + data[pos]
                pos += 1
            else:
                raise PackStreamError("truncated PackStream value")
            if end > len(data):
                raise PackStreamError("truncated PackStream value")
            self.pos = end
            try:
                return str(data[pos:end], "utf-8")
            except UnicodeDecodeError as exc:
                raise PackStreamError("string is not valid UTF-8") from exc
        self.pos = pos
        if marker >= 0xF0:
            return marker - 0x100
        if high == 0x9:
            return self._list(marker & 0x0F, depth)
        if high == 0xA:
            return self._map(marker & 0x0F, depth)
        if high == 0xB:
            return self._structure(marker & 0x0F, depth)
        return self._unpack_marker(marker, depth)

    def _unpack_marker(self, marker: int, depth: int) -> Any:
        # Markers 0xC0..0xDF: one byte says the type and the width of what follows.
        if marker == 0xC0:
            return None
        if marker == 0xC1:
            return self._unpack_from(_F64)
        if marker == 0xC2:
            return False
        if marker == 0xC3:
            return True
        fixed = _FIXED.get(marker)
        if fixed is not None:
            return self._unpack_from(fixed)
        sized = _SIZED.get(marker)
        if sized is None:
            raise PackStreamError(f"unknown PackStream marker {marker:#04x}")
        kind, width = sized
        size = self._byte() if width is None else self._unpack_from(width)
        if kind == "bytes":
            return bytes(self._take(size))
        if kind == "str":
            return self._str(size)
        if kind == "list":
            return self._list(size, depth)
        return self._map(size, depth)

    def _str(self, size: int) -> str:
        try:
            return str(self._take(size), "utf-8")
        except UnicodeDecodeError as exc:
            raise PackStreamError("string is not valid UTF-8") from exc

    def _list(self, size: int, depth: int) -> list[Any]:
        if self.budget >= 0:
            self._spend(size)
        return [self.unpack(depth + 1) for _ in range(size)]

    def _map(self, size: int, depth: int) -> dict[str, Any]:
        if self.budget >= 0:
            self._spend(2 * size)
        out: dict[str, Any] = {}
        data = self.data
        for _ in range(size):
            pos = self.pos
            marker = data[pos] if pos < len(data) else 0
            if 0x80 <= marker < 0x90:  # a key of up to 15 bytes (nearly all): read here
                end = pos + 1 + (marker & 0x0F)
                if end > len(data):
                    raise PackStreamError("truncated PackStream value")
                try:
                    key = str(data[pos + 1 : end], "utf-8")
                except UnicodeDecodeError as exc:
                    raise PackStreamError("string is not valid UTF-8") from exc
                self.pos = end
            else:
                key = self.unpack(depth + 1)
                if type(key) is not str:
                    raise PackStreamError("map key is not a string")
            out[key] = self.unpack(depth + 1)  # a repeated key: the last value wins
        return out

    def _structure(self, size: int, depth: int) -> Any:
        if self.budget >= 0:
            self._spend(size)
        tag = self._byte()
        value = Structure(tag, [self.unpack(depth + 1) for _ in range(size)])
        return value if self.hydrate is None else self.hydrate(value)


_FIXED: dict[int, struct.Struct] = {0xC8: _I8, 0xC9: _I16, 0xCA: _I32, 0xCB: _I64}
_SIZED: dict[int, tuple[str, struct.Struct | None]] = {
    0xCC: ("bytes", None),
    0xCD: ("bytes", _U16),
    0xCE: ("bytes", _U32),
    0xD0: ("str", None),
    0xD1: ("str", _U16),
    0xD2: ("str", _U32),
    0xD4: ("list", None),
    0xD5: ("list", _U16),
    0xD6: ("list", _U32),
    0xD8: ("map", None),
    0xD9: ("map", _U16),
    0xDA: ("map", _U32),
}


def unpackb(data: bytes, hydrate: Hydrate | None = None) -> Any:
    """Exactly one value from `data` (trailing bytes are an error)."""
    unpacker = Unpacker(data, hydrate)
    value = unpacker.unpack()
    if not unpacker.at_end():
        raise PackStreamError("trailing bytes after PackStream value")
    return value
