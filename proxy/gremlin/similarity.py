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
naming the key (`gremlin.similarity.window`); the tables' schema is
`query_guard.config.schema.GremlinTable` (strict: unknown keys and sub-tables are errors).
"""

from __future__ import annotations

import copy
import datetime as _dt
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from query_guard.config.describe import describe, dotted
from query_guard.config.schema import GremlinTable, SimilarityTable
from query_guard.errors import ConfigError
from query_guard.gremlin.printer import quote
from query_guard.schema.catalog import SchemaCatalog

WindowBound = str | int | float | _dt.date | _dt.datetime


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
    """Validate the `[gremlin]` table (`GremlinTable`: `similarity` and `schema`). Every rule
    asks for every query, always with the guard's own table: the settings (frozen) of a table
    seen before are reused while it still equals the copy taken when it was validated."""
    entry = _entry(id(raw))
    if entry and entry[0] is raw and entry[1] == raw:
        return entry[2]  # type: ignore[no-any-return]
    settings = _validate(raw)
    # the entry keeps `raw` alive, so no other table can have its id while it is cached
    entry[:] = [raw, copy.deepcopy(raw), settings]
    return settings


@functools.lru_cache(maxsize=32)
def _entry(_table_id: int) -> list[Any]:
    """The slot of the table with this id: [table, a deep copy taken when it was validated,
    its settings], empty until `gremlin_settings` fills it."""
    return []


def _validate(raw: Mapping[str, Any]) -> GremlinSettings:
    try:
        table = GremlinTable.model_validate(dict(raw))
    except ValidationError as exc:
        path, problem = describe(exc, GremlinTable, ("gremlin",))
        raise ConfigError(dotted(path), problem) from None
    sim, schema = table.similarity, table.edge_schema
    return GremlinSettings(
        similarity=None if sim is None else _similarity(sim),
        schema=GremlinSchema()
        if schema is None
        else GremlinSchema(tuple((a, t, b) for a, t, b in schema.edges)),
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


def _similarity(table: SimilarityTable) -> SimilaritySettings:
    window = table.window
    return SimilaritySettings(
        edges=tuple(table.edges.items()),
        score_property=table.score_property,
        threshold=table.threshold,
        window_property=table.window_property,
        window=None if window is None else (window[0], window[1]),
        case_label=table.case_label,
    )
