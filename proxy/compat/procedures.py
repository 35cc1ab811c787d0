"""System procedures the proxy answers from its schema catalog, with Neo4j's and APOC's output
columns and value shapes (Neo4j 5 / APOC 5 signatures).

Labels, relationship types and relationship patterns are listed in the catalog's order, the
database's schema order as discovery read it (`discovery.schema_order`: Neo4j and FalkorDB the
order they were created in, which APOC follows too and clients such as neo4j-graphrag compare
lists in; ArcadeDB the order its types' buckets were made in, its creation order too);
property keys, which the catalog holds as sets,
alphabetically.

Each procedure is a name, its output columns in signature order, and a function from the
catalog to rows (one dict per row). Graph-valued columns (`apoc.meta.graph`'s virtual nodes
and relationships, `db.schema.visualization`) are maps holding what the virtual entity's
properties hold (`name`, `count`; `type`, `count`), since a literal cannot be a node.
`SHOW INDEXES` / `SHOW CONSTRAINTS` list the indexes and constraints discovery read from the
database (`query_guard.schema.indexes`); `SHOW PROCEDURES` / `SHOW FUNCTIONS` the procedures and
functions the proxy answers, with Neo4j 5's columns (`query_guard.compat.routines`).
`apoc.schema.nodes()` / `apoc.schema.relationships()` list the same indexes (lookup indexes
left out, as APOC does) with `size` and `valuesSelectivity` 0, which the proxy does not know:
langchain and neo4j-graphrag follow a RANGE row whose index has entries by
`apoc.schema.properties.distinct`, which the proxy does not serve, and read the values from a
sample instead when it has none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from query_guard.compat.routines import (
    FUNCTION_ALL,
    FUNCTION_COLUMNS,
    PROCEDURE_ALL,
    PROCEDURE_COLUMNS,
    function_rows,
    procedure_row,
)
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.indexes import (
    CONSTRAINT_ALL,
    CONSTRAINT_COLUMNS,
    INDEX_ALL,
    INDEX_COLUMNS,
    constraint_details,
    index_details,
)

Row = dict[str, Any]

NEO4J_VERSION = "5.26.0"  # what dbms.components reports: libraries require ≥ 5.18

# APOC's type names (the catalog's) -> Neo4j's db.schema.*TypeProperties names
_SCHEMA_TYPE_NAMES = {
    "STRING": "String",
    "INTEGER": "Long",
    "FLOAT": "Double",
    "BOOLEAN": "Boolean",
    "LIST": "List",
    "MAP": "Map",
    "DATE": "Date",
    "DATE_TIME": "DateTime",
    "LOCAL_DATE_TIME": "LocalDateTime",
    "TIME": "Time",
    "LOCAL_TIME": "LocalTime",
    "DURATION": "Duration",
    "POINT": "Point",
}


@dataclass(frozen=True)
class Procedure:
    name: str  # as Neo4j spells it
    columns: tuple[str, ...]
    rows: Callable[[SchemaCatalog], list[Row]]
    description: str


# ---------------------------------------------------------------- catalog helpers


def _outgoing(cat: SchemaCatalog, label: str) -> dict[str, list[str]]:
    """Relationship type -> end labels, for edges leaving `label` (the catalog's order)."""
    out: dict[str, list[str]] = {}
    for rel in cat.relationships:
        if rel.start == label and rel.end not in out.setdefault(rel.type, []):
            out[rel.type].append(rel.end)
    return out


def _incoming(cat: SchemaCatalog, label: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for rel in cat.relationships:
        if rel.end == label and rel.start not in out.setdefault(rel.type, []):
            out[rel.type].append(rel.start)
    return out


def _node_props(cat: SchemaCatalog, label: str) -> list[tuple[str, str]]:
    return [(p, cat.property_type(label, p)) for p in sorted(cat.node_properties(label))]


def _rel_props(cat: SchemaCatalog, rel_type: str) -> list[tuple[str, str]]:
    props = sorted(cat.relationship_properties(rel_type))
    return [(p, cat.property_type(rel_type, p, relationship=True)) for p in props]


def _meta_row(label: str, prop: str, typ: str, element: str, **extra: Any) -> Row:
    row: Row = {
        "label": label,
        "property": prop,
        "count": 0,
        "unique": False,
        "index": False,
        "existence": False,
        "type": typ,
        "array": typ == "LIST",
        "sample": None,
        "left": 0,
        "right": 0,
        "other": [],
        "otherLabels": [],
        "elementType": element,
    }
    row.update(extra)
    return row


def _prop_info(typ: str) -> Row:
    return {"type": typ, "indexed": False, "unique": False, "existence": False,
            "array": typ == "LIST"}  # fmt: skip


# ---------------------------------------------------------------- the procedures


def _components(cat: SchemaCatalog) -> list[Row]:
    return [{"name": "Neo4j Kernel", "versions": [NEO4J_VERSION], "edition": "community"}]


def _labels(cat: SchemaCatalog) -> list[Row]:
    return [{"label": label} for label in cat.label_order]


def _rel_types(cat: SchemaCatalog) -> list[Row]:
    return [{"relationshipType": t} for t in cat.type_order]


def _property_keys(cat: SchemaCatalog) -> list[Row]:
    keys = cat.all_node_properties | cat.all_relationship_properties
    return [{"propertyKey": k} for k in sorted(keys)]


def _node_type_properties(cat: SchemaCatalog) -> list[Row]:
    rows = []
    for label in cat.label_order:
        node_type = ":`" + label.replace("`", "``") + "`"
        props = _node_props(cat, label) or [(None, None)]
        for prop, typ in props:
            rows.append({
                "nodeType": node_type,
                "nodeLabels": [label],
                "propertyName": prop,
                "propertyTypes": None if typ is None else [_SCHEMA_TYPE_NAMES.get(typ, "Any")],
                "mandatory": False,
            })  # fmt: skip
    return rows


def _rel_type_properties(cat: SchemaCatalog) -> list[Row]:
    rows = []
    for rel_type in cat.type_order:
        rel = ":`" + rel_type.replace("`", "``") + "`"
        for prop, typ in _rel_props(cat, rel_type) or [(None, None)]:
            rows.append({
                "relType": rel,
                "propertyName": prop,
                "propertyTypes": None if typ is None else [_SCHEMA_TYPE_NAMES.get(typ, "Any")],
                "mandatory": False,
            })  # fmt: skip
    return rows


def _visualization(cat: SchemaCatalog) -> list[Row]:
    nodes = [{"name": label, "indexes": [], "constraints": []} for label in cat.label_order]
    rels = [{"type": r.type, "start": r.start, "end": r.end} for r in cat.relationships]
    return [{"nodes": nodes, "relationships": rels}]


def _meta_data(cat: SchemaCatalog) -> list[Row]:
    """Per label: one row per property, one `RELATIONSHIP` row per outgoing type (`other` =
    end labels); per relationship type: one row per property (`elementType` relationship)."""
    rows = []
    for label in cat.label_order:
        for prop, typ in _node_props(cat, label):
            rows.append(_meta_row(label, prop, typ, "node"))
        for rel_type, ends in _outgoing(cat, label).items():
            count = cat.relationship_counts.get(rel_type, 0)
            rows.append(
                _meta_row(label, rel_type, "RELATIONSHIP", "node", count=count, array=True,
                          left=count, other=ends)
            )  # fmt: skip
    for rel_type in cat.type_order:
        for prop, typ in _rel_props(cat, rel_type):
            rows.append(_meta_row(rel_type, prop, typ, "relationship"))
    return rows


def _meta_schema(cat: SchemaCatalog) -> list[Row]:
    value: Row = {}
    for label in cat.label_order:
        rels: Row = {}
        for rel_type, starts in _incoming(cat, label).items():
            rels[rel_type] = _meta_rel(cat, rel_type, "in", starts)
        for rel_type, ends in _outgoing(cat, label).items():
            rels[rel_type] = _meta_rel(cat, rel_type, "out", ends)
        value[label] = {
            "type": "node",
            "count": cat.node_counts.get(label, 0),
            "labels": [],
            "properties": {p: _prop_info(t) for p, t in _node_props(cat, label)},
            "relationships": rels,
        }
    for rel_type in cat.type_order:
        value.setdefault(rel_type, {
            "type": "relationship",
            "count": cat.relationship_counts.get(rel_type, 0),
            "properties": {p: _prop_info(t) for p, t in _rel_props(cat, rel_type)},
        })  # fmt: skip
    return [{"value": value}]


def _meta_rel(cat: SchemaCatalog, rel_type: str, direction: str, labels: list[str]) -> Row:
    return {
        "direction": direction,
        "count": cat.relationship_counts.get(rel_type, 0),
        "labels": labels,
        "properties": {p: _prop_info(t) for p, t in _rel_props(cat, rel_type)},
    }


def _meta_graph(cat: SchemaCatalog) -> list[Row]:
    nodes = [{"name": n, "count": cat.node_counts.get(n, 0)} for n in cat.label_order]
    rels = [{"type": t, "count": cat.relationship_counts.get(t, 0)} for t in cat.type_order]
    return [{"nodes": nodes, "relationships": rels}]


def _meta_stats(cat: SchemaCatalog) -> list[Row]:
    labels = {label: cat.node_counts.get(label, 0) for label in cat.label_order}
    rel_counts = {t: cat.relationship_counts.get(t, 0) for t in cat.type_order}
    rel_types = {f"()-[:{t}]->()": n for t, n in rel_counts.items()}
    stats = {
        "labelCount": len(labels),
        "relTypeCount": len(rel_counts),
        "propertyKeyCount": len(_property_keys(cat)),
        "nodeCount": sum(labels.values()),
        "relCount": sum(rel_counts.values()),
    }
    return [{**stats, "labels": labels, "relTypes": rel_types, "relTypesCount": rel_counts,
             "stats": {**stats, "labels": labels, "relTypes": rel_types}}]  # fmt: skip


def _apoc_indexes(cat: SchemaCatalog, entity: str) -> list[Row]:
    """`apoc.schema.nodes()` / `.relationships()` rows of the indexes on `entity`s."""
    rows = []
    for index in cat.indexes:
        if index.get("entityType") != entity or index.get("type") == "LOOKUP":
            continue
        names = list(index.get("labelsOrTypes") or [])
        owner = names[0] if len(names) == 1 else names  # a list for a multi-label index
        properties = list(index.get("properties") or [])
        kind = str(index.get("type") or "RANGE")
        on = f":{owner}({', '.join(properties)})"
        rows.append({
            "name": index.get("name"), "label": owner,
            "type": kind if entity == "NODE" else owner,
            "properties": properties, "status": str(index.get("state") or "ONLINE"),
            "failure": "NO FAILURE", "populationProgress": 100.0, "size": 0,
            "valuesSelectivity": 0.0, "userDescription": f"INDEX ON {on}",
        })  # fmt: skip
    # APOC sorts apoc.schema.nodes' index rows by label (Java's String order, stable), and
    # leaves apoc.schema.relationships' in the database's order
    return sorted(rows, key=lambda r: str(r["label"])) if entity == "NODE" else rows


def _schema_nodes(cat: SchemaCatalog) -> list[Row]:
    return _apoc_indexes(cat, "NODE")


def _schema_relationships(cat: SchemaCatalog) -> list[Row]:
    return _apoc_indexes(cat, "RELATIONSHIP")


def _indexes(cat: SchemaCatalog) -> list[Row]:
    return [index_details(dict(r)) for r in cat.indexes]


def _constraints(cat: SchemaCatalog) -> list[Row]:
    return [constraint_details(dict(r)) for r in cat.constraints]


def _served_procedures(cat: SchemaCatalog) -> list[Row]:
    return [
        procedure_row(p.name, p.description, p.columns)
        for p in sorted(PROCEDURES.values(), key=lambda p: p.name)
    ]


def _served_functions(cat: SchemaCatalog) -> list[Row]:
    return function_rows()


_META_DATA_COLUMNS = (
    "label", "property", "count", "unique", "index", "existence", "type", "array", "sample",
    "left", "right", "other", "otherLabels", "elementType",
)  # fmt: skip


PROCEDURES: Mapping[str, Procedure] = {
    p.name.lower(): p
    for p in (
        Procedure("dbms.components", ("name", "versions", "edition"), _components,
              "the database's name, versions and edition"),
        Procedure("db.labels", ("label",), _labels, "the node labels"),
        Procedure("db.relationshipTypes", ("relationshipType",), _rel_types,
              "the relationship types"),
        Procedure("db.propertyKeys", ("propertyKey",), _property_keys, "the property keys"),
        Procedure("db.schema.visualization", ("nodes", "relationships"), _visualization,
              "the schema as labels and relationship endpoints"),
        Procedure("db.schema.nodeTypeProperties",
              ("nodeType", "nodeLabels", "propertyName", "propertyTypes", "mandatory"),
              _node_type_properties, "node properties and their types"),
        Procedure("db.schema.relTypeProperties",
              ("relType", "propertyName", "propertyTypes", "mandatory"),
              _rel_type_properties, "relationship properties and their types"),
        Procedure("apoc.meta.data", _META_DATA_COLUMNS, _meta_data, "the schema as a table"),
        Procedure("apoc.meta.schema", ("value",), _meta_schema, "the schema as one map"),
        Procedure("apoc.meta.graph", ("nodes", "relationships"), _meta_graph,
              "labels and relationship types with counts"),
        Procedure("apoc.meta.subGraph", ("nodes", "relationships"), _meta_graph,
              "labels and relationship types with counts"),
        Procedure("apoc.meta.stats",
              ("labelCount", "relTypeCount", "propertyKeyCount", "nodeCount", "relCount",
               "labels", "relTypes", "relTypesCount", "stats"),
              _meta_stats, "counts of labels, types and entities"),
        Procedure("apoc.schema.nodes",
              ("name", "label", "properties", "status", "type", "failure",
               "populationProgress", "size", "valuesSelectivity", "userDescription"),
              _schema_nodes, "node indexes"),
        Procedure("apoc.schema.relationships", ("name", "type", "properties", "status"),
              _schema_relationships, "relationship indexes"),
    )
}  # fmt: skip


@dataclass(frozen=True)
class ShowCommand:
    """A SHOW the proxy answers: the columns it lists without YIELD, every column it has (what
    `YIELD *` lists and a YIELD may name), and its rows."""

    columns: tuple[str, ...]
    every: tuple[str, ...]
    rows: Callable[[SchemaCatalog], list[Row]]


# `SHOW <target>` -> its columns and rows
SHOW_COMMANDS: Mapping[str, ShowCommand] = {
    "CONSTRAINTS": ShowCommand(CONSTRAINT_COLUMNS, CONSTRAINT_ALL, _constraints),
    "INDEXES": ShowCommand(INDEX_COLUMNS, INDEX_ALL, _indexes),
    "PROCEDURES": ShowCommand(PROCEDURE_COLUMNS, PROCEDURE_ALL, _served_procedures),
    "FUNCTIONS": ShowCommand(FUNCTION_COLUMNS, FUNCTION_ALL, _served_functions),
}  # fmt: skip

SERVED_PROCEDURES: frozenset[str] = frozenset(PROCEDURES)
