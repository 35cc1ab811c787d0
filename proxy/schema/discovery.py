"""Schema discovery from a live database (DESIGN §3): labels with their property keys,
relationship endpoint triples, and the measured reciprocity of same-label types.

Only Cypher that Neo4j and FalkorDB both run is used, and every query that touches data is
bounded by a sample LIMIT, so discovery costs about the same on a big graph as on a small one.
"""

from __future__ import annotations

import datetime
import json
from itertools import product
from typing import IO, Any

from query_guard.backend import Backend, collect
from query_guard.schema.indexes import discover_indexes
from query_guard.values import Duration, Point

DEFAULT_SAMPLE = 1000
VALUES_PER_KEY = 5  # entities whose value of a key is typed
DEFAULT_RECIPROCITY_THRESHOLD = 0.9


def quote_name(name: str) -> str:
    """A label / type name as a Cypher identifier (backticks, doubled inside)."""
    return "`" + name.replace("`", "``") + "`"


async def _column(backend: Backend, query: str) -> list[Any]:
    return [row[0] for row in await collect(await backend.run(query, {}))]


async def _property_types(
    backend: Backend, pattern: str, var: str, sample: int
) -> dict[str, str]:
    """Property key -> value type (APOC's names) over a bounded sample of `var`.

    The keys come from the whole sample; each key's type from the values of a few entities
    that carry it (`VALUES_PER_KEY`), so a large value (an embedding) is read a few times, not
    once per sampled entity. The values are typed here, from the neutral result model, rather
    than with the backend's own type function: FalkorDB's `typeof()` and Neo4j's `valueType()`
    differ in name and availability. A key seen with several types gets the first one seen in
    the sample (apoc.meta.data reports one type per property, and clients such as
    neo4j-graphrag build queries by that type); a key only ever null is "ANY"."""
    query = (
        f"MATCH {pattern} WITH {var} LIMIT {sample} UNWIND keys({var}) AS k "
        f"WITH k, collect({var})[..{VALUES_PER_KEY}] AS carriers "
        "UNWIND carriers AS e RETURN k, properties(e)"
    )
    seen: dict[str, str] = {}
    for key, props in await collect(await backend.run(query, {})):
        kind = value_type((props or {}).get(key))
        if seen.get(key, "NULL") == "NULL":
            seen[key] = kind
    return {key: "ANY" if kind == "NULL" else kind for key, kind in sorted(seen.items())}


def value_type(value: Any) -> str:
    """APOC's type name for one value of the neutral result model (apoc.meta.data `type`)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "INTEGER"
    if isinstance(value, float):
        return "FLOAT"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, list | tuple):
        return "LIST"
    if isinstance(value, dict):
        return "MAP"
    if isinstance(value, datetime.datetime):
        return "DATE_TIME" if value.tzinfo else "LOCAL_DATE_TIME"
    if isinstance(value, datetime.date):
        return "DATE"
    if isinstance(value, datetime.time):
        return "TIME" if value.tzinfo else "LOCAL_TIME"
    if isinstance(value, Duration):
        return "DURATION"
    if isinstance(value, Point):
        return "POINT"
    return "ANY"


async def _count(backend: Backend, query: str) -> int:
    rows = await _column(backend, query)
    return int(rows[0] or 0) if rows else 0


async def _endpoints(backend: Backend, rel_type: str, sample: int) -> set[tuple[str, str]]:
    """(start label, end label) pairs seen on a sample of one type's edges.

    One query per type (rather than one DISTINCT over all edges) so that a rare type is not
    crowded out of the sample by a frequent one.
    """
    query = (
        f"MATCH (a)-[r:{quote_name(rel_type)}]->(b) WITH a, b LIMIT {sample} "
        "RETURN DISTINCT labels(a), labels(b)"
    )
    pairs: set[tuple[str, str]] = set()
    for starts, ends in await collect(await backend.run(query, {})):
        # A multi-label node stands for each of its labels; unlabelled nodes name nothing.
        pairs.update(product(starts or (), ends or ()))
    return pairs


async def measure_reciprocity(backend: Backend, label: str, rel_type: str, sample: int) -> float:
    """Fraction of sampled edges (a:L)-[:T]->(b:L) for which (b)-[:T]->(a) also exists.

    Self-loops are left out: an edge that is its own reverse says nothing about whether the
    type is stored in both directions. No sampled edge → 0.0.
    """
    lab, typ = quote_name(label), quote_name(rel_type)
    query = (
        f"MATCH (a:{lab})-[r:{typ}]->(b:{lab}) WHERE a <> b "
        f"WITH a, r, b LIMIT {sample} "
        f"OPTIONAL MATCH (b)-[back:{typ}]->(a) "
        "WITH r, count(back) AS backs "
        "RETURN count(r) AS edges, sum(CASE WHEN backs > 0 THEN 1 ELSE 0 END) AS mutual"
    )
    rows = await collect(await backend.run(query, {}))
    edges, mutual = (rows[0] if rows else (0, 0)) or (0, 0)
    return round(mutual / edges, 4) if edges else 0.0


async def discover_schema(
    backend: Backend,
    sample: int = DEFAULT_SAMPLE,
    reciprocity_threshold: float = DEFAULT_RECIPROCITY_THRESHOLD,
) -> dict[str, Any]:
    """The DESIGN §3 schema of the graph behind `backend`.

    `{"nodes": {label: [key, …]}, "relationships": [{"start", "type", "end", "reciprocity",
    "properties"}], "reciprocity_threshold": t, "property_types": {"nodes": {label: {key:
    type}}, "relationships": {type: {key: type}}}, "counts": {"nodes": {label: n},
    "relationships": {type: n}}, "indexes": [SHOW INDEXES row, …], "constraints": [SHOW
    CONSTRAINTS row, …]}` — everything after `relationships` is an extra the catalog
    reads (schema files without them still load). Labels, relationship types and the
    relationships keep the database's order (db.labels / db.relationshipTypes).
    """
    sample = max(1, int(sample))
    server = str(getattr(backend, "server", "") or "")  # a Bolt upstream's agent
    labels = schema_order(await _column(backend, "CALL db.labels()"), server)
    types = schema_order(await _column(backend, "CALL db.relationshipTypes()"), server)
    if "ArcadeDB" in server:
        labels = await _bucket_order(backend, labels, "(e:{})")
        types = await _bucket_order(backend, types, "()-[e:{}]->()")
    position = {label: i for i, label in enumerate(labels)}
    node_types = {
        label: await _property_types(backend, f"(n:{quote_name(label)})", "n", sample)
        for label in labels
    }
    node_counts = {
        label: await _count(backend, f"MATCH (n:{quote_name(label)}) RETURN count(n)")
        for label in labels
    }
    rel_types: dict[str, dict[str, str]] = {}
    rel_counts: dict[str, int] = {}
    relationships = []
    for rel_type in types:
        pairs = await _endpoints(backend, rel_type, sample)
        if not pairs:
            continue  # a type name left behind by deleted edges
        pattern = f"()-[r:{quote_name(rel_type)}]->()"
        rel_types[rel_type] = await _property_types(backend, pattern, "r", sample)
        rel_counts[rel_type] = await _count(backend, f"MATCH {pattern} RETURN count(r)")
        keys = sorted(rel_types[rel_type])
        for start, end in sorted(pairs, key=lambda pair: _in_order(pair, position)):
            reciprocity = (
                await measure_reciprocity(backend, start, rel_type, sample) if start == end else 0.0
            )
            relationships.append(
                {
                    "start": start,
                    "type": rel_type,
                    "end": end,
                    "reciprocity": reciprocity,
                    "properties": keys,
                }
            )
    return {
        "nodes": {label: sorted(props) for label, props in node_types.items()},
        "relationships": relationships,
        "reciprocity_threshold": reciprocity_threshold,
        "property_types": {"nodes": node_types, "relationships": rel_types},
        "counts": {"nodes": node_counts, "relationships": rel_counts},
        **await discover_indexes(backend),
    }


def schema_order(names: list[Any], server: str = "") -> list[str]:
    """Labels or relationship types in the database's schema order, which the catalog keeps.
    Neo4j and FalkorDB list them in `db.labels()` / `db.relationshipTypes()` as they were
    created (by token id; APOC's apoc.meta.* follow it and clients compare lists in it).
    ArcadeDB lists no creation order: its `db.labels()` lists its type map in hash order, and
    its schema (`SELECT FROM schema:types`) orders types by name, case-insensitively; that is
    the order an ArcadeDB server (its Bolt agent names it) starts from, before
    `_bucket_order` recovers the creation order from its record ids."""
    found = list(dict.fromkeys(str(name) for name in names))
    if "ArcadeDB" in server:
        return sorted(found, key=lambda name: (name.casefold(), name))
    return found


async def _bucket_order(backend: Backend, names: list[str], pattern: str) -> list[str]:
    """ArcadeDB's types in the order their buckets were made, which is the order the types
    were created while none was dropped: a record's id is `#bucket:position`, and each type
    gets its buckets, numbered on from the last, when it is created. A type without a record
    (or an id of another form) keeps its place after those with one, in `names`' order."""
    found: dict[str, int] = {}
    for name in names:
        query = f"MATCH {pattern.format(quote_name(name))} RETURN elementId(e) LIMIT 1"
        ids = await _column(backend, query)
        bucket = str(ids[0]).lstrip("#").partition(":")[0] if ids else ""
        if bucket.isdigit():
            found[name] = int(bucket)
    place = {name: i for i, name in enumerate(names)}
    return sorted(names, key=lambda name: (name not in found, found.get(name, place[name])))


def _in_order(pair: tuple[str, str], position: dict[str, int]) -> tuple[int, str, int, str]:
    """A (start, end) label pair's place: the database's label order, then the name (a label
    db.labels did not list, seen on an edge, goes last)."""
    start, end = pair
    last = len(position)
    return position.get(start, last), start, position.get(end, last), end


def write_schema_json(schema: dict[str, Any], fp: IO[str]) -> None:
    """Write `schema` as stable JSON: sorted keys, labels, properties and triples."""
    stable = dict(schema)
    stable["nodes"] = {
        label: sorted(props) for label, props in sorted(schema.get("nodes", {}).items())
    }
    stable["relationships"] = sorted(
        (
            {**rel, "properties": sorted(rel["properties"])} if "properties" in rel else dict(rel)
            for rel in schema.get("relationships", [])
        ),
        key=lambda rel: (rel["start"], rel["type"], rel["end"]),
    )
    json.dump(stable, fp, indent=2, sort_keys=True, ensure_ascii=False)
    fp.write("\n")
