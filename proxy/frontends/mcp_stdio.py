"""`query-guard mcp`: the MCP server on standard input/output, alive whatever bytes arrive.

The SDK's stdio transport reads standard input as UTF-8 text: in mcp 1.x one line that is not
UTF-8 ends the process (the decoding error escapes its reader task), and a line that is not
JSON is dropped without an answer. So the SDK gets our own streams (its `stdio_server` takes
them in both majors): standard input is read as bytes, one line at a time (at most
`MAX_LINE` bytes), and only lines that are UTF-8 JSON-RPC messages within the JSON nesting
bound reach the SDK. Any other line is answered on standard output with a JSON-RPC error —
-32700 (parse error: not UTF-8, not JSON, too deep) or -32600 (invalid request: no JSON-RPC
message, or too long) — and the next line is served. Standard output is written one whole line
at a time, by the SDK's writer and these answers alike.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

import anyio
import anyio.to_thread

from query_guard.frontends.json_bodies import JsonBodyError, parse_json
from query_guard.frontends.mcp_sdk import run_stdio

MAX_LINE = 16 * 1024 * 1024  # bytes in one message line
PARSE_ERROR, INVALID_REQUEST = -32700, -32600


async def serve(server: Any) -> None:
    """Serve `server` (the SDK's object, `build_mcp`) on this process's stdin/stdout until
    standard input ends."""
    out = LineWriter(sys.stdout.buffer)
    await run_stdio(server, MessageLines(sys.stdin.buffer, out), out)


class LineWriter:
    """Text to a binary stream as UTF-8, one `write` (a whole line) at a time."""

    def __init__(self, buffer: BinaryIO) -> None:
        self._buffer = buffer
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        data = text.encode("utf-8")
        async with self._lock:
            await anyio.to_thread.run_sync(self._buffer.write, data)

    async def flush(self) -> None:
        async with self._lock:
            await anyio.to_thread.run_sync(self._buffer.flush)


class MessageLines:
    """The JSON-RPC message lines of a binary stream (as text, for the SDK's reader); every
    other line is answered with a JSON-RPC error on `out` and skipped."""

    def __init__(self, buffer: BinaryIO, out: LineWriter) -> None:
        self._buffer = buffer
        self._out = out

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while True:
            line = await self._read()
            if not line:
                return  # end of input
            if len(line) > MAX_LINE and not line.endswith(b"\n"):
                await self._skip_rest(line)
                await self._answer(None, INVALID_REQUEST,
                                   f"Invalid Request: a line is longer than {MAX_LINE} bytes")
                continue
            if not line.strip():
                continue
            problem = line_problem(line)
            if problem is not None:
                await self._answer(*problem)
                continue
            yield line.decode("utf-8")

    async def _read(self) -> bytes:
        return await anyio.to_thread.run_sync(self._buffer.readline, MAX_LINE + 1)

    async def _skip_rest(self, line: bytes) -> None:
        while line and not line.endswith(b"\n"):
            line = await self._read()

    async def _answer(self, ident: Any, code: int, message: str) -> None:
        error = {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
        await self._out.write(json.dumps(error) + "\n")
        await self._out.flush()


def line_problem(line: bytes) -> tuple[Any, int, str] | None:
    """(id, code, message) of the error answering `line`, None when it is a JSON-RPC message
    (as far as its shape goes: the SDK validates the rest and answers itself)."""
    try:
        value = parse_json(line)
    except JsonBodyError as exc:
        return None, PARSE_ERROR, f"Parse error: {exc}"
    if not isinstance(value, dict):
        return None, INVALID_REQUEST, "Invalid Request: a message must be one JSON object"
    ident = value.get("id")
    if not isinstance(ident, str | int) or isinstance(ident, bool):
        ident = None
    if value.get("jsonrpc") != "2.0" or not ("method" in value or "id" in value):
        return ident, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"
    return None
