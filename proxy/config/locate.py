"""Where a key sits in a TOML text, so that configuration errors can name the file line.

`tomllib` gives values, not positions. `key_lines(text)` scans text that `tomllib` accepted and
maps every key path to the line it is written on::

    [gremlin.similarity]                      ("gremlin",) and ("gremlin", "similarity") -> 1
    edges = { a = "b" }                       (..., "edges") and (..., "edges", "a") -> 2
    window = [                                (..., "window") -> 3
        "2024-01-01",                         (..., "window", 0) -> 4

Headers (dotted, quoted, `[[array of tables]]`), dotted keys, inline tables and multi-line
arrays are followed; strings (multi-line too) and comments are skipped. `locate(text, path)`
answers the line of the longest written prefix of `path` (a key left out of the file points at
its table's header), or None.
"""

from __future__ import annotations

import contextlib
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence

KeyPath = tuple[str | int, ...]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
# a scalar value: number, bool, date/time (a space may separate a date from its time)
_SCALAR = re.compile(r"[^,\]}\s#]+(?: [0-9][^,\]}\s#]*)?")
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.S)
_SIMPLE_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


class _Stop(ValueError):
    """The text is not TOML this scanner follows; keep what was found so far."""


def locate(text: str, path: Sequence[str | int]) -> int | None:
    """The 1-based line of `path` in `text`, or of its longest prefix written there."""
    lines = key_lines(text)
    key = tuple(path)
    while key:
        if key in lines:
            return lines[key]
        key = key[:-1]
    return None


def key_lines(text: str) -> dict[KeyPath, int]:
    """Every key path written in `text` (tables, keys, array items) -> its 1-based line."""
    scan = _Scanner(text)
    with contextlib.suppress(_Stop, IndexError):  # keep what was found before the surprise
        scan.document()
    return scan.found


class _Scanner:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.found: dict[KeyPath, int] = {}
        self.arrays: dict[KeyPath, int] = {}  # [[array of tables]] seen so far

    def line(self, at: int) -> int:
        return bisect_right(self.starts, at)

    def note(self, path: KeyPath, at: int) -> None:
        self.found.setdefault(path, self.line(at))

    def document(self) -> None:
        table: KeyPath = ()
        while True:
            self.skip(newlines=True)
            if self.i >= len(self.s):
                return
            if self.s[self.i] == "[":
                table = self.header()
            else:
                self.keyval(table)

    def skip(self, newlines: bool) -> None:
        """Past blanks (and line ends when `newlines`) and comments."""
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c in " \t\r" or (newlines and c == "\n"):
                self.i += 1
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
            else:
                return

    def expect(self, token: str) -> None:
        self.skip(newlines=False)
        if not self.s.startswith(token, self.i):
            raise _Stop(token)
        self.i += len(token)

    def header(self) -> KeyPath:
        at = self.i
        double = self.s.startswith("[[", at)
        self.i += 2 if double else 1
        path: KeyPath = tuple(self.key())
        self.expect("]]" if double else "]")
        for k in range(1, len(path) + 1):
            self.note(path[:k], at)
        if double:
            index = self.arrays.get(path, -1) + 1
            self.arrays[path] = index
            path = (*path, index)
            self.note(path, at)
        return path

    def keyval(self, table: KeyPath) -> None:
        at = self.i
        full = (*table, *self.key())
        for k in range(len(table) + 1, len(full) + 1):
            self.note(full[:k], at)
        self.expect("=")
        self.value(full)

    def key(self) -> list[str]:
        parts: list[str] = []
        while True:
            self.skip(newlines=False)
            c = self.s[self.i]
            if c in "\"'":
                parts.append(self.string())
            else:
                m = _BARE.match(self.s, self.i)
                if m is None:
                    raise _Stop("key")
                parts.append(m.group())
                self.i = m.end()
            self.skip(newlines=False)
            if self.s.startswith(".", self.i):
                self.i += 1
                continue
            return parts

    def value(self, path: KeyPath) -> None:
        self.skip(newlines=False)
        c = self.s[self.i]
        if c == "{":
            self.i += 1
            self.items("}", lambda: self.keyval(path))
        elif c == "[":
            self.i += 1
            index = [0]

            def item() -> None:
                here = (*path, index[0])
                self.note(here, self.i)
                self.value(here)
                index[0] += 1

            self.items("]", item)
        elif c in "\"'":
            self.string()
        else:
            m = _SCALAR.match(self.s, self.i)
            if m is None:
                raise _Stop("value")
            self.i = m.end()

    def items(self, close: str, one: Callable[[], None]) -> None:
        """Comma-separated items up to `close` (arrays may span lines and hold comments)."""
        newlines = close == "]"
        while True:
            self.skip(newlines)
            if self.s[self.i] == close:
                self.i += 1
                return
            one()
            self.skip(newlines)
            if self.s[self.i] == ",":
                self.i += 1

    def string(self) -> str:
        """A basic, literal or multi-line string at `i`; returns its value (keys need it)."""
        s, start = self.s, self.i
        quote = s[start]
        if s.startswith(quote * 3, start):
            j = start + 3
            while not s.startswith(quote * 3, j):
                j += 2 if quote == '"' and s[j] == "\\" else 1
                if j >= len(s):
                    raise _Stop("string")
            j += 3
            while j < len(s) and s[j] == quote:  # up to two quotes may end the content
                j += 1
            self.i = j
            return s[start + 3 : j - 3]
        j = start + 1
        while s[j] != quote:
            if s[j] == "\n":
                raise _Stop("string")
            j += 2 if quote == '"' and s[j] == "\\" else 1
        self.i = j + 1
        body = s[start + 1 : j]
        return _unescape(body) if quote == '"' else body


def _unescape(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        e = m.group(1)
        if e[0] in "uU":
            return chr(int(e[1:], 16))
        return _SIMPLE_ESCAPES.get(e, e)

    return _ESCAPE.sub(one, body)
