"""The schema catalog the rules consult: labels, their properties, relationship endpoints and
measured reciprocity (DESIGN §3). Loaded from schema JSON, a triples string or the CypherBench
schema format; discovery from a live database lives in `query_guard.schema.discovery`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from query_guard.errors import SchemaFormatError

DEFAULT_RECIPROCITY_THRESHOLD = 0.9

_TRIPLE = re.compile(r"\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*,\s*([^,()]+?)\s*\)")


@dataclass(frozen=True, slots=True)
class RelationshipSchema:
    start: str
    type: str
    end: str
    reciprocity: float = 0.0
    properties: tuple[str, ...] = ()


@dataclass(frozen=True)
class SchemaCatalog:
    """Immutable view of one graph's schema; cheap lookups for the rules."""

    nodes: Mapping[str, frozenset[str]]
    relationships: tuple[RelationshipSchema, ...]
    reciprocity_threshold: float = DEFAULT_RECIPROCITY_THRESHOLD
    # label / relationship type -> property -> value type (APOC's names: STRING, INTEGER, …)
    node_property_types: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    relationship_property_types: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # label -> nodes carrying it, relationship type -> edges (as last discovered)
    node_counts: Mapping[str, int] = field(default_factory=dict)
    relationship_counts: Mapping[str, int] = field(default_factory=dict)
    # the database's indexes and constraints as SHOW INDEXES / SHOW CONSTRAINTS rows
    # (proxy.compat.indexes), as last discovered
    indexes: tuple[Mapping[str, Any], ...] = ()
    constraints: tuple[Mapping[str, Any], ...] = ()
    _by_type: dict[str, tuple[RelationshipSchema, ...]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        by_type: dict[str, list[RelationshipSchema]] = {}
        for rel in self.relationships:
            by_type.setdefault(rel.type, []).append(rel)
        object.__setattr__(self, "_by_type", {k: tuple(v) for k, v in by_type.items()})

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], reciprocity_threshold: float = DEFAULT_RECIPROCITY_THRESHOLD
    ) -> SchemaCatalog:
        """The DESIGN §3 JSON shape (as written by `query-guard schema`)."""
        if not isinstance(data, Mapping):
            raise SchemaFormatError("schema must be a JSON object with 'nodes' and 'relationships'")
        raw_nodes = data.get("nodes", {})
        raw_rels = data.get("relationships", [])
        if not isinstance(raw_nodes, Mapping) or not isinstance(raw_rels, list):
            raise SchemaFormatError(
                "schema 'nodes' must be an object of label -> [property, …] and "
                "'relationships' a list of {start, type, end}"
            )
        nodes = {str(label): frozenset(map(str, props or ())) for label, props in raw_nodes.items()}
        rels = []
        for i, rel in enumerate(raw_rels):
            try:
                rels.append(
                    RelationshipSchema(
                        str(rel["start"]),
                        str(rel["type"]),
                        str(rel["end"]),
                        float(rel.get("reciprocity", 0.0) or 0.0),
                        tuple(map(str, rel.get("properties", ()) or ())),
                    )
                )
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise SchemaFormatError(
                    f"schema relationships[{i}] needs 'start', 'type' and 'end': {exc}"
                ) from exc
        for rel in rels:
            nodes.setdefault(rel.start, frozenset())
            nodes.setdefault(rel.end, frozenset())
        types = _section(data, "property_types")
        counts = _section(data, "counts")
        return cls(
            nodes,
            tuple(rels),
            reciprocity_threshold,
            node_property_types=_nested_str(types.get("nodes"), "property_types.nodes"),
            relationship_property_types=_nested_str(
                types.get("relationships"), "property_types.relationships"
            ),
            node_counts=_counts(counts.get("nodes"), "counts.nodes"),
            relationship_counts=_counts(counts.get("relationships"), "counts.relationships"),
            indexes=_rows(data.get("indexes"), "indexes"),
            constraints=_rows(data.get("constraints"), "constraints"),
        )

    @classmethod
    def from_triples(cls, text: str, **kw: Any) -> SchemaCatalog:
        """`"(Person, WORKS_AT, Organization), (Person, KNOWS, Person)"`."""
        triples = _TRIPLE.findall(text)
        if not triples and text.strip():
            raise SchemaFormatError(
                "schema triples must look like '(Person, WORKS_AT, Organization), …'"
            )
        rels = [{"start": _bare(a), "type": _bare(t), "end": _bare(b)} for a, t, b in triples]
        return cls.from_dict({"nodes": {}, "relationships": rels}, **kw)

    @classmethod
    def from_cypherbench(cls, data: Mapping[str, Any], **kw: Any) -> SchemaCatalog:
        """CypherBench's `{entities: [{label, properties}], relations: [{label, subj_label, …}]}`.

        Every CypherBench entity also carries `name` (the benchmark's convention)."""
        try:
            nodes = {
                e["label"]: sorted({*e.get("properties", {}), "name"}) for e in data["entities"]
            }
            rels = [
                {
                    "start": r["subj_label"],
                    "type": r["label"],
                    "end": r["obj_label"],
                    "properties": sorted(r.get("properties", {}) or {}),
                }
                for r in data["relations"]
            ]
        except (KeyError, TypeError) as exc:
            raise SchemaFormatError(f"not a CypherBench schema: missing {exc}") from exc
        return cls.from_dict({"nodes": nodes, "relationships": rels}, **kw)

    @classmethod
    def from_structured_schema(cls, data: Mapping[str, Any], **kw: Any) -> SchemaCatalog:
        """The `structured_schema` of neo4j-graphrag / LangChain's Neo4jGraph:
        `{node_props: {Label: [{property, type}]}, rel_props: {…}, relationships: [{start,
        type, end}]}`."""
        try:
            nodes = {
                label: [p["property"] for p in props]
                for label, props in (data.get("node_props") or {}).items()
            }
            rel_props = {
                t: [p["property"] for p in props]
                for t, props in (data.get("rel_props") or {}).items()
            }
            rels = [
                {
                    "start": r["start"],
                    "type": r["type"],
                    "end": r["end"],
                    "properties": rel_props.get(r["type"], []),
                }
                for r in data["relationships"]
            ]
        except (KeyError, TypeError) as exc:
            raise SchemaFormatError(f"not a structured schema: missing {exc}") from exc
        return cls.from_dict({"nodes": nodes, "relationships": rels}, **kw)

    @classmethod
    def load(cls, path: str | Path, **kw: Any) -> SchemaCatalog:
        """A schema file: DESIGN §3 JSON, CypherBench JSON, a Neo4j structured schema (JSON),
        or a text file of triples."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SchemaFormatError(f"cannot read schema file {path}: {exc}") from exc
        if not text.lstrip().startswith("{"):
            return cls.from_triples(text, **kw)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaFormatError(f"{path}: invalid JSON: {exc}") from exc
        if isinstance(data, dict) and "entities" in data:
            return cls.from_cypherbench(data, **kw)
        if isinstance(data, dict) and "node_props" in data:
            return cls.from_structured_schema(data, **kw)
        return cls.from_dict(data, **kw)

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": {label: sorted(props) for label, props in sorted(self.nodes.items())},
            "relationships": [
                {
                    "start": r.start,
                    "type": r.type,
                    "end": r.end,
                    "reciprocity": r.reciprocity,
                    **({"properties": list(r.properties)} if r.properties else {}),
                }
                for r in sorted(self.relationships, key=lambda r: (r.type, r.start, r.end))
            ],
            **self._extras(),
        }

    def _extras(self) -> dict[str, Any]:
        """Property types, counts, indexes and constraints, only when known (older schema
        files have none of them)."""
        out: dict[str, Any] = {}
        if self.node_property_types or self.relationship_property_types:
            out["property_types"] = {
                "nodes": _sorted_nested(self.node_property_types),
                "relationships": _sorted_nested(self.relationship_property_types),
            }
        if self.node_counts or self.relationship_counts:
            out["counts"] = {
                "nodes": dict(sorted(self.node_counts.items())),
                "relationships": dict(sorted(self.relationship_counts.items())),
            }
        if self.indexes:
            out["indexes"] = [dict(r) for r in self.indexes]
        if self.constraints:
            out["constraints"] = [dict(r) for r in self.constraints]
        return out

    # ------------------------------------------------------------------ lookups

    @property
    def labels(self) -> frozenset[str]:
        return frozenset(self.nodes)

    @property
    def label_order(self) -> tuple[str, ...]:
        """The labels in the schema's order: the database's (discovery) or the file's."""
        return tuple(self.nodes)

    @property
    def type_order(self) -> tuple[str, ...]:
        """The relationship types in the schema's order (of their first relationship)."""
        return tuple(self._by_type)

    @property
    def relationship_types(self) -> frozenset[str]:
        return frozenset(self._by_type)

    def has_type(self, rel_type: str) -> bool:
        return rel_type in self._by_type

    def declarations(self, rel_type: str) -> tuple[RelationshipSchema, ...]:
        return self._by_type.get(rel_type, ())

    def fits(self, start: Iterable[str] | None, rel_type: str, end: Iterable[str] | None) -> bool:
        """Is `(start)-[:rel_type]->(end)` declared? None / empty label sets are wildcards;
        a multi-label set fits when any of its labels does."""
        starts = set(start) if start else None
        ends = set(end) if end else None
        return any(
            (starts is None or d.start in starts) and (ends is None or d.end in ends)
            for d in self._by_type.get(rel_type, ())
        )

    def types_between(self, a: Iterable[str] | None, b: Iterable[str] | None) -> list[str]:
        """Declared types between the two label sets in either direction, schema order."""
        seen: dict[str, None] = {}
        for rel in self.relationships:
            if self.fits(a, rel.type, b) or self.fits(b, rel.type, a):
                seen.setdefault(rel.type, None)
        return list(seen)

    def is_reciprocal(self, rel_type: str, label: str | None = None) -> bool:
        """A same-label type whose measured reciprocity reaches the threshold."""
        return any(
            d.start == d.end
            and (label is None or d.start == label)
            and d.reciprocity >= self.reciprocity_threshold
            for d in self._by_type.get(rel_type, ())
        )

    def property_type(self, owner: str, key: str, relationship: bool = False) -> str:
        """The discovered value type of `owner.key` (APOC's names), "ANY" when unknown."""
        table = self.relationship_property_types if relationship else self.node_property_types
        return table.get(owner, {}).get(key, "ANY")

    def node_properties(self, label: str) -> frozenset[str]:
        return self.nodes.get(label, frozenset())

    def relationship_properties(self, rel_type: str) -> frozenset[str]:
        return frozenset(p for d in self._by_type.get(rel_type, ()) for p in d.properties)

    @property
    def all_node_properties(self) -> frozenset[str]:
        return frozenset(p for props in self.nodes.values() for p in props)

    @property
    def all_relationship_properties(self) -> frozenset[str]:
        return frozenset(p for r in self.relationships for p in r.properties)


def _bare(name: str) -> str:
    name = name.strip()
    if name.startswith(":"):
        name = name[1:]
    if len(name) >= 2 and name[0] == name[-1] == "`":
        name = name[1:-1]
    return name


def _section(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, Mapping):
        raise SchemaFormatError(f"schema '{key}' must be an object of nodes / relationships")
    return value


def _nested_str(value: Any, where: str) -> dict[str, dict[str, str]]:
    if not value:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(v, Mapping) for v in value.values()):
        raise SchemaFormatError(f"schema '{where}' must map names to {{property: type}}")
    return {str(k): {str(p): str(t) for p, t in v.items()} for k, v in value.items()}


def _counts(value: Any, where: str) -> dict[str, int]:
    if not value:
        return {}
    try:
        return {str(k): int(v) for k, v in dict(value).items()}
    except (TypeError, ValueError) as exc:
        raise SchemaFormatError(f"schema '{where}' must map names to integers: {exc}") from exc


def _rows(value: Any, where: str) -> tuple[Mapping[str, Any], ...]:
    if not value:
        return ()
    if not isinstance(value, list) or not all(isinstance(r, Mapping) for r in value):
        raise SchemaFormatError(f"schema '{where}' must be a list of objects (SHOW {where} rows)")
    return tuple(dict(r) for r in value)


def _sorted_nested(table: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    return {k: dict(sorted(v.items())) for k, v in sorted(table.items())}
