"""graphersal's JSON rendering of results (`.to_json()`), read back into Python values.

graphersal's Python binding cannot return a map whose keys are not strings (`group().by(
out().count())`); its JSON rendering can: such a map is `{"@type": "g:Map", "@value": [k1,
v1, k2, v2, …]}`, a vertex `{"id", "label", "properties"}`, an edge the same plus `inV`/`outV`
(ids) and `inVLabel`/`outVLabel`. `from_json` turns that into the values `execute` would have
returned (`JsonVertex`/`JsonEdge` standing for graphersal's elements).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The engine's error for a result map with non-string keys.
NON_STRING_KEYS = "ScriptMap"


@dataclass(frozen=True, slots=True)
class JsonVertex:
    id: Any
    label: str


@dataclass(frozen=True, slots=True)
class JsonEdge:
    id: Any
    label: str
    out_v: JsonVertex
    in_v: JsonVertex


def from_json(value: Any) -> Any:
    if isinstance(value, list):
        return [from_json(v) for v in value]
    if not isinstance(value, dict):
        return value
    if value.get("@type") == "g:Map" and isinstance(value.get("@value"), list):
        flat = [from_json(v) for v in value["@value"]]
        return {_hashable(k): v for k, v in zip(flat[::2], flat[1::2], strict=False)}
    if set(value) >= {"id", "label", "properties"}:
        if "inV" in value and "outV" in value:
            out_v = JsonVertex(value["outV"], str(value.get("outVLabel", "")))
            in_v = JsonVertex(value["inV"], str(value.get("inVLabel", "")))
            return JsonEdge(value["id"], str(value["label"]), out_v, in_v)
        return JsonVertex(value["id"], str(value["label"]))
    return {k: from_json(v) for k, v in value.items()}


def _hashable(key: Any) -> Any:
    if isinstance(key, list):
        return tuple(_hashable(k) for k in key)
    if isinstance(key, dict):
        return tuple(sorted(((k, _hashable(v)) for k, v in key.items()), key=repr))
    return key
