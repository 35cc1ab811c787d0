"""JSON a client sends (HTTP bodies, `/mcp` bodies, MCP stdio lines), read with a nesting bound.

`json.loads` recurses once per nested array or object and raises `RecursionError` somewhere
near a thousand levels; what reads the value afterwards (the typed-JSON decoder, the guard,
`json.dumps` in the audit log) recurses too. So every JSON text a front accepts goes through
`parse_json`: text that is not UTF-8, not JSON, or nested more than `MAX_DEPTH` arrays/objects
deep is a `JsonBodyError` (the fronts answer 400 or a JSON-RPC parse error), never a crash.
The depth is measured without recursion. Parameter values have their own, tighter bound
(`[limits] max_parameter_depth`, checked by the runner); this one only keeps the process safe.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 100  # arrays/objects inside each other; typed JSON spends two per value


class JsonBodyError(ValueError):
    """Not UTF-8, not JSON, or nested too deeply; the message says which."""


def parse_json(raw: bytes | str, *, encoding: str = "utf-8") -> Any:
    """The value of a JSON text (bytes decoded with `encoding`)."""
    if isinstance(raw, bytes | bytearray):
        try:
            text = bytes(raw).decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise JsonBodyError(f"the body is not valid {encoding} text: {exc}") from exc
    else:
        text = raw
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise JsonBodyError(too_deep()) from exc
    except ValueError as exc:
        raise JsonBodyError(f"the body is not JSON: {exc}") from exc
    if nesting_exceeds(value, MAX_DEPTH):
        raise JsonBodyError(too_deep())
    return value


def too_deep() -> str:
    return f"the JSON nests more than {MAX_DEPTH} arrays/objects deep"


def nesting_exceeds(value: Any, limit: int) -> bool:
    """Does `value` nest more than `limit` lists/dicts inside each other? (iterative)"""
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False
