"""Python values as Cypher literal text that Neo4j, FalkorDB and ArcadeDB all evaluate."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def identifier(name: str) -> str:
    """`name` as a variable, property key or map key, always backticked: the columns of
    system procedures (`type`, `count`, `index`, `unique`) are keywords in some dialects."""
    if not name:
        raise ValueError("Cypher has no empty name")
    return "`" + name.replace("`", "``") + "`"


def literal(value: Any) -> str:
    """A Cypher literal for None, bool, int, float, str, lists and string-keyed maps."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"no Cypher literal for {value!r}")
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, Mapping):
        entries = (f"{identifier(str(k))}: {literal(v)}" for k, v in value.items())
        return "{" + ", ".join(entries) + "}"
    raise TypeError(f"no Cypher literal for {type(value).__name__}")
