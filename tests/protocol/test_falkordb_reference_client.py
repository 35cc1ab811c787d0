"""Our FalkorDB backend (own RESP client and decoder) against the reference: the official
`falkordb` Python client, on the same server and the same read queries. Both decodings are
mapped to the neutral model and must agree value for value."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from falkordb import FalkorDB
from falkordb.edge import Edge
from falkordb.node import Node
from falkordb.path import Path as FalkorPath

from query_guard.backend import collect
from query_guard.backends.embedded import EmbeddedFalkorDB
from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.values import GraphNode, GraphPath, GraphRelationship
from tests.e2e.test_e2e_falkordb import READ_QUERIES, canon_rows


def neutral(value: Any) -> Any:
    """The falkordb client's value in the neutral model (ids, labels/type, properties)."""
    if isinstance(value, Node):
        return GraphNode(value.id, tuple(value.labels or ()), neutral(value.properties))
    if isinstance(value, Edge):
        start = value.src_node.id if isinstance(value.src_node, Node) else value.src_node
        end = value.dest_node.id if isinstance(value.dest_node, Node) else value.dest_node
        return GraphRelationship(value.id, value.relation, start, end, neutral(value.properties))
    if isinstance(value, FalkorPath):
        return GraphPath(
            tuple(neutral(n) for n in value.nodes()), tuple(neutral(e) for e in value.edges())
        )
    if isinstance(value, dict):
        return {k: neutral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [neutral(v) for v in value]
    return value


def _ours(url: str) -> dict[str, list[Any]]:
    async def run() -> dict[str, list[Any]]:
        backend = FalkorDBBackend(url)
        await backend.start()
        try:
            return {q: await collect(await backend.run(q, p)) for q, p in READ_QUERIES}
        finally:
            await backend.close()

    return asyncio.run(run())


@pytest.fixture(scope="module")
def both(falkordb_server: EmbeddedFalkorDB) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    graph = FalkorDB(host=falkordb_server.host, port=falkordb_server.port).select_graph("movies")
    reference = {q: graph.ro_query(q, p).result_set for q, p in READ_QUERIES}
    return _ours(falkordb_server.url), reference


@pytest.mark.parametrize(("query", "params"), READ_QUERIES)
def test_backend_decodes_like_the_official_client(
    both: tuple[dict[str, list[Any]], dict[str, Any]], query: str, params: dict[str, Any]
) -> None:
    ours, reference = both
    expected = canon_rows(query, [[neutral(v) for v in row] for row in reference[query]])
    assert expected, f"the reference returned nothing for {query}"
    assert canon_rows(query, ours[query]) == expected
