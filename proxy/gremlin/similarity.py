"""The `[gremlin.similarity]` and `[gremlin.schema]` tables, validated into frozen settings.

Similarity configuration is per deployment (DESIGN §5)::

    [gremlin.similarity]
    score_property = "similarityScore"      # P2: the score on a similarity edge ("" = no P2)
    threshold = 0.8                          # P2 fix: the θ inserted as has(score, P.gte(θ))
    window_property = "createdAt"            # P1: the time property of a case ("" = no P1)
    window = ["2024-01-01", "2024-06-30"]    # P1 fix: the window inserted as P.between(lo, hi)
    case_label = "case"                      # P3/P4: the label of an anchor vertex
    # similarity edge label -> the within-case edge that reaches its content vertex (Φ)
    edges = { similarReason = "hasReason", similarSymptoms = "exhibits" }

    [gremlin.schema]
    # directed edge declarations [from-label, edge-label, to-label] (overrides the catalog)
    edges = [["case", "hasReason", "reason"], ["case", "exhibits", "symptom"]]

`gremlin_settings(ctx.gremlin)` returns `GremlinSettings`; a bad value raises `ConfigError`
naming the key (`gremlin.similarity.window`). Other keys of `[gremlin]` belong to other
subsystems and are ignored here.
"""

from __future__ import annotations

import datetime as _dt
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from proxy.errors import ConfigError
from proxy.gremlin.printer import quote
from proxy.schema import SchemaCatalog

WindowBound = str | int | float | _dt.date | _dt.datetime

_SIMILARITY_KEYS = frozenset(
    {"score_property", "threshold", "window_property", "window", "case_label", "edges"}
)
_SCHEMA_KEYS = frozenset({"edges"})


@dataclass(frozen=True, slots=True)
class SimilaritySettings:
    """How similarity edges are stored; `edges` maps similarity label -> content edge (Φ)."""

    edges: tuple[tuple[str, str], ...]
    score_property: str = ""
    threshold: float | None = None
    window_property: str = ""
    window: tuple[WindowBound, WindowBound] | None = None
    case_label: str = "case"

    @property
    def labels(self) -> frozenset[str]:
        return frozenset(label for label, _ in self.edges)

    def content_edge(self, label: str) -> str | None:
        """Φ(label): the within-case edge that reaches the vertices `label` connects."""
        return next((phi for sim, phi in self.edges if sim == label), None)

    def window_predicate(self) -> str | None:
        """`P.between(lo, hi)` as Gremlin text, or None without a configured window."""
        if self.window is None:
            return None
        lo, hi = self.window
        return f"P.between({gremlin_value(lo)}, {gremlin_value(hi)})"


@dataclass(frozen=True, slots=True)
class GremlinSchema:
    """Directed edge declarations `(from_label, edge_label, to_label)`."""

    edges: tuple[tuple[str, str, str], ...] = ()

    def catalog(self) -> SchemaCatalog | None:
        return _catalog(self.edges) if self.edges else None


@dataclass(frozen=True, slots=True)
class GremlinSettings:
    similarity: SimilaritySettings | None = None
    schema: GremlinSchema = GremlinSchema()


def gremlin_settings(raw: Mapping[str, Any]) -> GremlinSettings:
    """Validate the `[gremlin]` table's `similarity` and `schema` sub-tables."""
    sim = raw.get("similarity")
    schema = raw.get("schema")
    return GremlinSettings(
        similarity=None if sim is None else _similarity(_table("gremlin.similarity", sim)),
        schema=GremlinSchema() if schema is None else _schema(_table("gremlin.schema", schema)),
    )


def gremlin_value(value: WindowBound) -> str:
    """A configured bound as a Gremlin literal (dates become `datetime('…')`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.UTC)
        return f"datetime({quote(value.isoformat().replace('+00:00', 'Z'))})"
    if isinstance(value, _dt.date):
        return f"datetime({quote(value.isoformat() + 'T00:00:00Z')})"
    if isinstance(value, str):
        return quote(value)
    return repr(value)


@functools.lru_cache(maxsize=32)
def _catalog(edges: tuple[tuple[str, str, str], ...]) -> SchemaCatalog:
    """Built once per distinct declaration list (catalogs are immutable)."""
    rels = [{"start": a, "type": t, "end": b} for a, t, b in edges]
    return SchemaCatalog.from_dict({"nodes": {}, "relationships": rels})


# ---------------------------------------------------------------- validation


def _table(key: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(key, "must be a table")
    return value


def _unknown(section: str, table: Mapping[str, Any], known: frozenset[str]) -> None:
    for key in table:
        if key not in known:
            raise ConfigError(
                f"{section}.{key}", f"unknown key; known keys: {', '.join(sorted(known))}"
            )


def _string(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(key, f"must be a string, got {value!r}")
    return value


def _similarity(table: Mapping[str, Any]) -> SimilaritySettings:
    section = "gremlin.similarity"
    _unknown(section, table, _SIMILARITY_KEYS)
    edges = table.get("edges")
    if not isinstance(edges, Mapping) or not edges:
        raise ConfigError(
            f"{section}.edges",
            "must be a non-empty table of similarity label -> content edge, "
            'e.g. { similarReason = "hasReason" }',
        )
    pairs = tuple((str(k), _string(f"{section}.edges.{k}", v)) for k, v in edges.items())
    threshold = table.get("threshold")
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int | float)
    ):
        raise ConfigError(f"{section}.threshold", f"must be a number, got {threshold!r}")
    return SimilaritySettings(
        edges=pairs,
        score_property=_string(f"{section}.score_property", table.get("score_property", "")),
        threshold=None if threshold is None else float(threshold),
        window_property=_string(f"{section}.window_property", table.get("window_property", "")),
        window=_window(f"{section}.window", table.get("window")),
        case_label=_string(f"{section}.case_label", table.get("case_label", "case")),
    )


def _window(key: str, value: Any) -> tuple[WindowBound, WindowBound] | None:
    if value is None:
        return None
    bound_types = (str, int, float, _dt.date, _dt.datetime)
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(b, bound_types) and not isinstance(b, bool) for b in value)
    ):
        raise ConfigError(
            key, f"must be a list [lo, hi] of two strings, numbers or dates, got {value!r}"
        )
    lo, hi = value
    try:
        if lo > hi:
            raise ConfigError(key, f"lower bound {lo!r} is after upper bound {hi!r}")
    except TypeError as exc:
        raise ConfigError(key, f"bounds {lo!r} and {hi!r} are not comparable") from exc
    return (lo, hi)


def _schema(table: Mapping[str, Any]) -> GremlinSchema:
    _unknown("gremlin.schema", table, _SCHEMA_KEYS)
    edges = table.get("edges", [])
    key = "gremlin.schema.edges"
    if not isinstance(edges, list):
        raise ConfigError(key, "must be a list of [from-label, edge-label, to-label] triples")
    out: list[tuple[str, str, str]] = []
    for i, triple in enumerate(edges):
        if (
            not isinstance(triple, list | tuple)
            or len(triple) != 3
            or not all(isinstance(x, str) and x for x in triple)
        ):
            raise ConfigError(
                f"{key}[{i}]", f"must be [from-label, edge-label, to-label], got {triple!r}"
            )
        out.append((triple[0], triple[1], triple[2]))
    return GremlinSchema(tuple(out))
