"""TinkerPop's Gherkin feature notation, decoded for the feature suite run through the Gremlin
front (tests/e2e/test_tinkerpop_front.py, benchmarks/tinkerpop_front.py).

The feature files write values as `d[1].l` (a long), `v[marko]` (a vertex by name), `v[marko].id`,
`e[marko-knows->vadas]`, `vp[name->marko]`, `p[…]` (a path), `l[…]`, `s[…]`, `m[{json}]`,
`t[label]`, `D[OUT]`, `dt[…]`, `uuid[…]`, `str[…]`, `null`. Elements are named by the graph's
own data (the GraphSON file the scenario's graph is loaded from). Expected values and actual
results are both reduced to one canonical, hashable form (`Canon`) and compared as the step
says: numbers by value whatever their width (`d[1].i` equals 1.0), elements by id, paths,
lists, sets and maps by their contents.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import uuid
from collections import Counter
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from gremlin_python.process.traversal import Direction, T, Traverser
from gremlin_python.structure.graph import Edge, Property, Vertex, VertexProperty
from gremlin_python.structure.graph import Path as GPath

Canon = tuple[Any, ...]


@dataclass(frozen=True)
class GraphIndex:
    """Vertices by name and edges by `out-label->in` of one TinkerPop test graph."""

    vertices: dict[str, tuple[Any, str]]  # name -> (id, label)
    edges: dict[str, tuple[Any, str]]  # "marko-knows->vadas" -> (id, label)

    @classmethod
    def load(cls, path: Path) -> GraphIndex:
        vertices: dict[str, tuple[Any, str]] = {}
        names: dict[Any, str] = {}
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        for v in lines:
            vid = _typed(v["id"])
            name = _typed(v.get("properties", {}).get("name", [{}])[0].get("value"))
            names[vid] = str(name)
            vertices[str(name)] = (vid, v["label"])
        edges: dict[str, tuple[Any, str]] = {}
        for v in lines:
            for label, out in (v.get("outE") or {}).items():
                for e in out:
                    key = f"{names[_typed(v['id'])]}-{label}->{names[_typed(e['inV'])]}"
                    edges[key] = (_typed(e["id"]), label)
        return cls(vertices, edges)


def _typed(value: Any) -> Any:
    return value["@value"] if isinstance(value, dict) and "@value" in value else value


# ---------------------------------------------------------------- notation -> Python values


def split_items(body: str) -> list[str]:
    """`a,l[b,c],d` -> ["a", "l[b,c]", "d"] (commas inside brackets or braces stay)."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    return [x for x in items]


_NUMBER_SUFFIXES = frozenset("bsilfdmn")


def to_value(text: Any, graph: GraphIndex) -> Any:
    """A parameter in the notation as the value a gremlinpython client would send."""
    if not isinstance(text, str):
        if isinstance(text, dict):
            return {_hashable(to_value(k, graph)): to_value(v, graph) for k, v in text.items()}
        if isinstance(text, list):
            return [to_value(v, graph) for v in text]
        return text
    kind, _, body = text.partition("[")
    if not body.endswith("]") and "]." not in body:
        return {"null": None, "true": True, "false": False}.get(text, text)
    inner, _, suffix = body.rpartition("]")
    if kind == "d":
        return _number(inner, suffix.lstrip("."))
    if kind in ("v", "e"):
        ident, label = (graph.vertices if kind == "v" else graph.edges)[inner]
        if suffix == ".id":
            return ident
        if suffix == ".sid":
            return str(ident)
        if kind == "v":
            return Vertex(ident, label)
        out, _, rest = inner.partition("-")
        _, _, into = rest.partition("->")
        ov, iv = graph.vertices[out], graph.vertices[into]
        return Edge(ident, Vertex(*ov), label, Vertex(*iv))
    if kind == "vp":
        key, _, value = inner.partition("->")
        return VertexProperty(None, key, to_value(value, graph), None)
    if kind in ("l", "s", "p"):
        items = [to_value(x, graph) for x in split_items(inner)] if inner else []
        if kind == "p":
            return GPath([set() for _ in items], items)
        return items if kind == "l" else SetOf(items)
    if kind == "m":
        # a map nested in a map's string value arrives with its quotes still escaped
        return to_value(json.loads(inner.replace('\\"', '"')), graph)
    if kind == "t":
        return getattr(T, inner, None) or getattr(T, inner + "_")
    if kind == "D":
        return getattr(Direction, inner)
    if kind == "str":
        return inner
    if kind == "dt":
        return dt.datetime.fromisoformat(inner.replace("Z", "+00:00"))
    if kind == "uuid":
        return uuid.UUID(inner)
    return text


class SetOf(list):  # type: ignore[type-arg]
    """An expected set (`s[…]`) — kept as a list so unhashable members fit."""


def _number(inner: str, suffix: str) -> Any:
    if inner in ("NaN", "Infinity", "-Infinity"):
        return float(inner.replace("Infinity", "inf"))
    if suffix in ("f", "d", "m") or "." in inner or "e" in inner.lower():
        return float(inner)
    return int(inner)


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted(((repr(k), v) for k, v in value.items()), key=repr))
    return value


# ---------------------------------------------------------------- canonical comparison


def canon(value: Any) -> Canon:
    """The comparable form of an expected value or an actual result."""
    if isinstance(value, Traverser):
        return canon(value.object)
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        f = float(value)
        return ("num", "nan") if math.isnan(f) else ("num", round(f, 9))
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, Vertex) and not isinstance(value, VertexProperty):
        return ("v", str(value.id))
    if isinstance(value, Edge):
        return ("e", str(value.id))
    if isinstance(value, VertexProperty):
        return ("vp", value.label, canon(value.value))
    if isinstance(value, Property):
        return ("prop", value.key, canon(value.value))
    if isinstance(value, GPath):
        return ("path", tuple(canon(o) for o in value.objects))
    if isinstance(value, SetOf | set | frozenset):
        return ("set", tuple(sorted((canon(v) for v in value), key=repr)))
    if isinstance(value, list | tuple):
        return ("list", tuple(canon(v) for v in value))
    if isinstance(value, dict):
        pairs = ((canon(_unkey(k)), canon(v)) for k, v in value.items())
        return ("map", tuple(sorted(pairs, key=repr)))
    if isinstance(value, Enum):
        return ("token", type(value).__name__, value.name.rstrip("_"))
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return ("datetime", moment.timestamp())
    if isinstance(value, uuid.UUID):
        return ("uuid", str(value))
    return ("other", repr(value))


def _unkey(key: Any) -> Any:
    """gremlinpython turns unhashable map keys (lists, maps) into tuples / frozen forms."""
    if isinstance(key, tuple):
        return list(key)
    return key


def expected_rows(rows: list[str], graph: GraphIndex) -> list[Canon]:
    """The rows of a result table (the first row is its header)."""
    return [canon(to_value(r, graph)) for r in rows[1:]]


def check(step: str, rows: list[str], actual: list[Any], graph: GraphIndex) -> str | None:
    """None when `actual` satisfies the expectation `step`, else what differs."""
    got = [canon(a) for a in actual]
    if step == "the result should be empty":
        return None if not got else f"expected nothing, got {len(got)} results"
    if step.startswith("the result should have a count of "):
        n = int(step.rsplit(" ", 1)[1])
        return None if len(got) == n else f"expected {n} results, got {len(got)}"
    want = expected_rows(rows, graph)
    if step == "the result should be unordered":
        ok = Counter(map(repr, got)) == Counter(map(repr, want))
    elif step == "the result should be ordered":
        ok = got == want
    elif step == "the result should be of":
        ok = bool(got) and all(g in want for g in got)
    else:
        return f"unsupported expectation {step!r}"
    return None if ok else f"expected {want!r:.600}\n     got {got!r:.600}"
