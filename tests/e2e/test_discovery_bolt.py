"""Schema discovery over Bolt, against a real ArcadeDB holding the movie graph: the same
Cypher that works on FalkorDB gives the same catalog (labels, endpoints, reciprocity)."""

from __future__ import annotations

import asyncio
from typing import Any

from query_guard.backends.bolt_relay import BoltRelayBackend
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.discovery import discover_schema

MOVIE_TYPES = {"ACTED_IN", "DIRECTED", "PRODUCED", "WROTE", "REVIEWED", "FOLLOWS"}


def _discover(server: Any) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        backend = BoltRelayBackend(server.url, auth=server.auth, database=server.database)
        await backend.start()
        try:
            return await discover_schema(backend)
        finally:
            await backend.close()

    return asyncio.run(run())


def test_bolt_discovery_on_arcadedb_matches_the_movie_graph(arcadedb_server: Any) -> None:
    data = _discover(arcadedb_server)
    catalog = SchemaCatalog.from_dict(data)
    assert {"Person", "Movie"} <= catalog.labels
    assert catalog.relationship_types == MOVIE_TYPES
    assert catalog.fits({"Person"}, "ACTED_IN", {"Movie"})
    assert not catalog.fits({"Movie"}, "ACTED_IN", {"Person"})
    assert catalog.fits({"Person"}, "FOLLOWS", {"Person"})
    assert not catalog.is_reciprocal("FOLLOWS")  # FOLLOWS is one-way in the movie graph
    assert {"name", "born"} <= catalog.node_properties("Person")
    assert "roles" in catalog.relationship_properties("ACTED_IN")
