"""Bolt version negotiation, server side (sans I/O).

The client sends the magic preamble 0x6060B017 and four 4-byte proposals
[reserved, range, minor, major], each covering major.minor down to major.(minor - range).
Classic handshake: the server answers the chosen version (or 0x00000000 and closes).
Handshake manifest v1: a proposal of exactly 0x000001FF means the client speaks manifest v1;
the server then answers 0x000001FF, a varint count, its own ranges and a varint capability
mask, and the client replies with the version it picked (4 bytes) and its capabilities (varint).
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAGIC = b"\x60\x60\xb0\x17"
MANIFEST_V1 = b"\x00\x00\x01\xff"
NO_VERSION = b"\x00\x00\x00\x00"
REQUEST_SIZE = 20
MAX_VARINT_BYTES = 10

Version = tuple[int, int]  # (major, minor); the one alias the Bolt modules share

# Highest first: what this server implements (Bolt 5.0-5.8 and 4.4).
SUPPORTED_VERSIONS: tuple[Version, ...] = (*((5, m) for m in range(8, -1, -1)), (4, 4))
SERVER_CAPABILITIES = 0  # manifest v1 defines no capability bits we offer yet


class HandshakeError(Exception):
    """Not a Bolt client, or no common version: send `reply` (if any), then close."""

    def __init__(self, message: str, reply: bytes = b"") -> None:
        super().__init__(message)
        self.reply = reply


def encode_varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def decode_varint(data: bytes | bytearray, pos: int = 0) -> tuple[int, int] | None:
    """(value, position after it), or None when more bytes are needed."""
    value = shift = 0
    for i in range(pos, min(len(data), pos + MAX_VARINT_BYTES)):
        byte = data[i]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, i + 1
        shift += 7
    if len(data) - pos >= MAX_VARINT_BYTES:
        raise HandshakeError("varint too long")
    return None


def parse_proposals(request: bytes) -> list[tuple[int, int, int]]:
    """The four (major, minor, range) proposals of a 20-byte handshake request."""
    if len(request) != REQUEST_SIZE or request[:4] != MAGIC:
        raise HandshakeError("not a Bolt handshake (bad magic preamble)")
    slots = [request[i : i + 4] for i in range(4, REQUEST_SIZE, 4)]
    return [(s[3], s[2], s[1]) for s in slots]


def choose_version(
    proposals: list[tuple[int, int, int]], supported: tuple[Version, ...] = SUPPORTED_VERSIONS
) -> Version | None:
    """Classic negotiation: the client's first proposal we can serve, at its highest minor."""
    for major, minor, span in proposals:
        for our_major, our_minor in supported:  # highest first
            if our_major == major and minor - span <= our_minor <= minor:
                return our_major, our_minor
    return None


def offered_ranges(supported: tuple[Version, ...] = SUPPORTED_VERSIONS) -> list[bytes]:
    """Our versions as manifest offerings, one [0, range, minor, major] per contiguous run."""
    runs: list[list[int]] = []  # [major, top minor, bottom minor]
    for major, minor in sorted(set(supported), reverse=True):
        if runs and runs[-1][0] == major and runs[-1][2] == minor + 1:
            runs[-1][2] = minor
        else:
            runs.append([major, minor, minor])
    return [bytes((0, top - bottom, top, major)) for major, top, bottom in runs]


def manifest_response(supported: tuple[Version, ...] = SUPPORTED_VERSIONS) -> bytes:
    ranges = offered_ranges(supported)
    return (
        MANIFEST_V1
        + encode_varint(len(ranges))
        + b"".join(ranges)
        + encode_varint(SERVER_CAPABILITIES)
    )


@dataclass
class ServerHandshake:
    """Feed bytes in; collect bytes to send; `version` is set once negotiation is done."""

    supported: tuple[Version, ...] = SUPPORTED_VERSIONS
    version: Version | None = None
    manifest: bool = False
    client_capabilities: int = 0
    _buf: bytearray = field(default_factory=bytearray)
    _awaiting_choice: bool = False

    def feed(self, data: bytes) -> tuple[bytes, bytes]:
        """(bytes to send, bytes left over after the handshake). Raises HandshakeError."""
        self._buf += data
        if not self._awaiting_choice:
            if len(self._buf) < 4 and MAGIC.startswith(bytes(self._buf)):
                return b"", b""
            if self._buf[:4] != MAGIC:
                raise HandshakeError("not a Bolt handshake (bad magic preamble)")
            if len(self._buf) < REQUEST_SIZE:
                return b"", b""
            request, rest = bytes(self._buf[:REQUEST_SIZE]), bytes(self._buf[REQUEST_SIZE:])
            self._buf = bytearray(rest)
            proposals = parse_proposals(request)
            if any(request[i : i + 4] == MANIFEST_V1 for i in range(4, REQUEST_SIZE, 4)):
                self.manifest = True
                self._awaiting_choice = True
                reply = manifest_response(self.supported)
                more, leftover = self._read_choice()
                return reply + more, leftover
            chosen = choose_version(proposals, self.supported)
            if chosen is None:
                raise HandshakeError(
                    f"no common Bolt version (client offered {_describe(proposals)})",
                    reply=NO_VERSION,
                )
            self.version = chosen
            return bytes((0, 0, chosen[1], chosen[0])), bytes(self._buf)
        return self._read_choice()

    def _read_choice(self) -> tuple[bytes, bytes]:
        if len(self._buf) < 5:
            return b"", b""
        caps = decode_varint(self._buf, 4)
        if caps is None:
            return b"", b""
        self.client_capabilities, end = caps
        major, minor = self._buf[3], self._buf[2]
        if (major, minor) not in self.supported:
            raise HandshakeError(f"client chose Bolt {major}.{minor}, which was not offered")
        self.version = (major, minor)
        self._awaiting_choice = False
        return b"", bytes(self._buf[end:])


def _describe(proposals: list[tuple[int, int, int]]) -> str:
    return (
        ", ".join(
            f"{ma}.{mi}" if not r else f"{ma}.{mi - r}-{ma}.{mi}" for ma, mi, r in proposals if ma
        )
        or "nothing"
    )


# -- client side (the upstream relay) -----------------------------------------------------

# What the relay offers an upstream server: Bolt 5.0-5.8 as one range, then 4.4.
CLIENT_PROPOSALS: tuple[tuple[int, int, int], ...] = ((5, 8, 8), (4, 4, 0))


def client_request(proposals: tuple[tuple[int, int, int], ...] = CLIENT_PROPOSALS) -> bytes:
    """The 20-byte classic handshake a client sends: magic + four (major, minor, range)."""
    slots = [bytes((0, span, minor, major)) for major, minor, span in proposals[:4]]
    return MAGIC + b"".join(slots) + bytes(4 * (4 - len(slots)))


def client_choice(
    reply: bytes, proposals: tuple[tuple[int, int, int], ...] = CLIENT_PROPOSALS
) -> Version:
    """The version a server chose (its 4-byte answer). Raises HandshakeError when it chose
    none or one that was not offered."""
    if len(reply) != 4 or reply == NO_VERSION:
        raise HandshakeError("the server supports none of the offered Bolt versions")
    version = (reply[3], reply[2])
    if not any(
        major == version[0] and minor - span <= version[1] <= minor
        for major, minor, span in proposals
    ):
        raise HandshakeError(f"the server chose Bolt {version[0]}.{version[1]}, not offered")
    return version
