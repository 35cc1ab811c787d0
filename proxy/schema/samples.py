"""Sample values for the grounding context (`GET /v1/context?samples=3`, MCP `get_context`):
up to n distinct values per (label, property), read from the backend with read-only
statements the proxy writes itself (names backtick-quoted, a name holding a backtick skipped,
no value spliced into the text), strings cut to `MAX_CHARS`, vectors and other long lists
left out — an LLM copies literal values exactly when it has seen a few.
"""

from __future__ import annotations

import logging
from typing import Any

from query_guard.backend import BackendError
from query_guard.schema.catalog import SchemaCatalog

log = logging.getLogger(__name__)

MAX_SAMPLES = 10
MAX_CHARS = 60
MAX_PAIRS = 200  # (label, property) pairs read at most: a wide schema stays one quick round
MAX_LIST = 8


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def sample_query(label: str, prop: str, n: int) -> str:
    node, key = _quoted(label), _quoted(prop)
    return (
        f"MATCH (x:{node}) WHERE x.{key} IS NOT NULL "
        f"WITH DISTINCT x.{key} AS value RETURN value LIMIT {int(n)}"
    )


async def sample_values(
    backend: Any, schema: SchemaCatalog | None, n: int, database: str | None = None
) -> dict[str, dict[str, list[Any]]]:
    """{label: {property: [value, …]}}, at most `n` (≤ `MAX_SAMPLES`) values each; a pair the
    backend cannot answer is left out (logged)."""
    n = max(0, min(n, MAX_SAMPLES))
    if schema is None or n == 0 or backend is None:
        return {}
    out: dict[str, dict[str, list[Any]]] = {}
    pairs = [
        (label, prop)
        for label, props in schema.to_dict()["nodes"].items()
        for prop in props
        if "`" not in label + prop  # not every database reads `` inside a quoted name
    ]
    for label, prop in pairs[:MAX_PAIRS]:
        try:
            stream = await backend.run(sample_query(label, prop, n), {}, database)
            rows = await stream.fetch(n)
        except BackendError as exc:
            log.info("no samples for %s.%s: %s", label, prop, exc)
            continue
        values = [shown for row in rows if (shown := _shown(row[0])) is not None]
        if values:
            out.setdefault(label, {})[prop] = values
    return out


def _shown(value: Any) -> Any:
    """A value as the context shows it: strings cut, long lists (embeddings) left out."""
    if isinstance(value, str):
        return value if len(value) <= MAX_CHARS else value[: MAX_CHARS - 1] + "…"
    if isinstance(value, list):
        return None if len(value) > MAX_LIST else [_shown(v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return _shown(str(value))


def samples_text(samples: dict[str, dict[str, list[Any]]]) -> str:
    """The samples as lines of the grounding context ('' when there are none)."""
    lines = [
        f"- {label}.{prop}: " + ", ".join(_literal(v) for v in values)
        for label, props in sorted(samples.items())
        for prop, values in sorted(props.items())
    ]
    return "Sample values (as stored):\n" + "\n".join(lines) if lines else ""


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return str(value)
