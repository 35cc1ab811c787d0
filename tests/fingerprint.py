"""A database's content in a few comparable values, read straight from the backend (never
through the proxy): node count per label, relationship count per type, and one hash over every
node's labels and properties and every relationship's type, properties and endpoints. Two equal
fingerprints mean no write got through; `diff` says what changed."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import neo4j

NODES = "MATCH (n) RETURN labels(n) AS labels, properties(n) AS props"
RELATIONSHIPS = (
    "MATCH (a)-[r]->(b) RETURN type(r) AS type, properties(r) AS props, "
    "labels(a) AS a_labels, properties(a) AS a_props, labels(b) AS b_labels, "
    "properties(b) AS b_props"
)


@dataclass(frozen=True)
class Fingerprint:
    labels: tuple[tuple[str, int], ...]  # (label, nodes), sorted; "" counts unlabelled nodes
    types: tuple[tuple[str, int], ...]  # (relationship type, count), sorted
    digest: str  # sha256 over the sorted canonical rows
    graphs: tuple[str, ...] = ()  # the other graphs/databases on the server, when known

    def diff(self, after: Fingerprint) -> str:
        """What changed from `self` to `after`, in words ("" when nothing did)."""
        parts = []
        for what, old, new in (
            ("labels", dict(self.labels), dict(after.labels)),
            ("types", dict(self.types), dict(after.types)),
        ):
            changed = {k: (old.get(k, 0), new.get(k, 0)) for k in old.keys() | new.keys()}
            moved = {k: v for k, v in sorted(changed.items()) if v[0] != v[1]}
            if moved:
                shown = ", ".join(f"{k}: {a}->{b}" for k, (a, b) in moved.items())
                parts.append(f"{what} {shown}")
        if self.graphs != after.graphs:
            parts.append(f"graphs {list(self.graphs)} -> {list(after.graphs)}")
        if not parts and self.digest != after.digest:
            parts.append("property values changed")
        return "; ".join(parts)


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr, ensure_ascii=True)


def fingerprint(
    nodes: Iterable[Sequence[Any]],
    relationships: Iterable[Sequence[Any]],
    graphs: Iterable[str] = (),
) -> Fingerprint:
    """From the rows of `NODES` and `RELATIONSHIPS` (any row type indexable like a list)."""
    labels: Counter[str] = Counter()
    types: Counter[str] = Counter()
    rows = []
    for node_labels, props in nodes:
        for label in node_labels or [""]:
            labels[label] += 1
        rows.append(_canon(["N", sorted(node_labels), props]))
    for rel_type, props, a_labels, a_props, b_labels, b_props in relationships:
        types[rel_type] += 1
        ends = [sorted(a_labels), a_props, sorted(b_labels), b_props]
        rows.append(_canon(["R", rel_type, props, *ends]))
    digest = hashlib.sha256("\n".join(sorted(rows)).encode("utf-8")).hexdigest()
    return Fingerprint(
        tuple(sorted(labels.items())), tuple(sorted(types.items())), digest, tuple(sorted(graphs))
    )


def bolt_fingerprint(driver: neo4j.Driver, database: str) -> Fingerprint:
    """The fingerprint of `database` over a direct Bolt connection (e.g. ArcadeDB's own)."""
    with driver.session(database=database) as session:
        nodes = [record.values() for record in session.run(NODES)]
        relationships = [record.values() for record in session.run(RELATIONSHIPS)]
    return fingerprint(nodes, relationships)


async def falkordb_fingerprint(backend: Any, graph: str) -> Fingerprint:
    """The fingerprint of `graph` through a started `FalkorDBBackend` (direct RESP), with the
    list of every graph on that server (a write may create another one), asked with the
    FalkorDB client."""
    from falkordb.asyncio import FalkorDB

    from query_guard.backend import collect
    from query_guard.backends.falkordb import parse_url

    nodes = await collect(await backend.execute(NODES, None, graph, read_only=True))
    relationships = await collect(await backend.execute(RELATIONSHIPS, None, graph, read_only=True))
    host, port, _graph, user, password = parse_url(backend.url)
    server = FalkorDB(host=host, port=port, username=user or None, password=password or None)
    try:
        graphs = sorted(await server.list_graphs())
    finally:
        await server.aclose()
    return fingerprint(nodes, relationships, graphs)
