"""The pure-Python RESP2 reply parser query-guard had before hiredis, kept as a baseline of
`benchmarks/resp_client.py` (it was faster than redis-py only on one-value replies). The
connections and the pool are the proxy's own (`query_guard.wire.resp`); only the parser differs,
so the benchmark compares parsing. Bulk strings come back as `str` (UTF-8, bad bytes replaced).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from query_guard.wire.resp import ReplyReader, RespError, RespPool, RespProtocolError

CRLF = b"\r\n"
_DOLLAR, _STAR, _COLON, _PLUS, _MINUS = 36, 42, 58, 43, 45  # reply type bytes


class RespParser:
    """Incremental RESP2 reply parser: `feed(data)` returns the replies completed by `data`.

    Data is split into lines once (one C call, the fast part); the array being filled and
    its unfinished parents are kept between calls, and only an unfinished last element is
    held back, so a reply spread over many reads is parsed once, in linear time.
    """

    __slots__ = ("_cur", "_held", "_held_size", "_left", "_need", "_parents")

    def __init__(self) -> None:
        self._held: list[bytes] = []  # unparsed bytes: the start of an unfinished element
        self._held_size = self._need = 0  # parse again once `_need` bytes are held
        self._cur: list[Any] | None = None  # the array being filled, and its missing items
        self._left = 0
        self._parents: list[tuple[list[Any], int]] = []

    def feed(self, data: bytes) -> list[Any]:
        if self._held:
            self._held.append(data)
            self._held_size += len(data)
            if self._held_size < self._need:
                return []
            data = b"".join(self._held)
            self._held = []
        # (Pausing the garbage collector would parse big replies ~30% faster, but the proxy
        # may be embedded in an application whose interpreter state is not ours to change.)
        return self._parse(data)

    def _parse(self, data: bytes) -> list[Any]:
        lines = data.split(CRLF)
        tail = lines.pop()  # not ended by CRLF yet: unfinished, or empty
        count = len(lines)
        cur, left, parents = self._cur, self._left, self._parents
        replies: list[Any] = []
        i = 0
        while i < count:
            line = lines[i]
            i += 1
            kind = line[0]
            value: Any
            if kind == _COLON:
                value = int(line[1:])
            elif kind == _STAR:
                length = int(line[1:])
                if length > 0:
                    if cur is not None:
                        parents.append((cur, left))
                    cur, left = [], length
                    continue
                value = [] if length == 0 else None
            elif kind == _DOLLAR:
                length = int(line[1:])
                if length < 0:
                    value = None
                elif i < count and len(lines[i]) == length:
                    value = lines[i].decode("utf-8", "replace")
                    i += 1
                else:  # the string holds CRLFs, or is still arriving
                    end, size = i, -2
                    while end < count and size < length:
                        size += 2 + len(lines[end])
                        end += 1
                    if size < length:
                        self._cur, self._left = cur, left
                        self._hold(lines, i - 1, tail, len(line) + length + 4)
                        return replies
                    if size != length:
                        raise RespProtocolError("bulk string longer than announced")
                    value = CRLF.join(lines[i:end]).decode("utf-8", "replace")
                    i = end
            elif kind == _PLUS:
                value = line[1:].decode("utf-8", "replace")
            elif kind == _MINUS:
                value = RespError(line[1:].decode("utf-8", "replace"))
            else:
                raise RespProtocolError(f"unexpected RESP type byte {kind!r}")
            while cur is not None:  # the value is an array item, maybe the array's last
                cur.append(value)
                left -= 1
                if left:
                    break
                value = cur
                cur, left = parents.pop() if parents else (None, 0)
            else:
                replies.append(value)
        self._cur, self._left = cur, left
        if tail:
            self._hold(lines, count, tail, len(tail) + 1)
        return replies

    def _hold(self, lines: list[bytes], start: int, tail: bytes, need: int) -> None:
        """Keep `lines[start:]` and `tail` (an unfinished element) until `need` bytes are in."""
        rest = CRLF.join([*lines[start:], tail]) if start < len(lines) else tail
        self._held, self._held_size, self._need = [rest], len(rest), need


class PurePythonReader:
    """`RespParser` behind hiredis.Reader's `feed` / `gets` interface."""

    def __init__(self) -> None:
        self._parser = RespParser()
        self._replies: deque[Any] = deque()

    def feed(self, data: bytes, /) -> None:
        try:
            self._replies.extend(self._parser.feed(data))
        except (ValueError, IndexError) as exc:
            raise RespProtocolError(str(exc)) from exc

    def gets(self) -> Any:
        return self._replies.popleft() if self._replies else False


def pure_python_reader() -> ReplyReader:
    return PurePythonReader()


def pool(host: str, port: int, **options: Any) -> RespPool:
    """The proxy's pool with this parser."""
    return RespPool(host, port, reader=pure_python_reader, **options)
