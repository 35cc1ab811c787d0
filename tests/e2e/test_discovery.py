"""Schema discovery against a real FalkorDB: the movie graph, and reciprocity measured on a
small social graph built for it."""

from __future__ import annotations

import asyncio
import io
import json
import random
from typing import Any

import pytest
import redis

from query_guard.backends.bolt_relay import BoltRelayBackend
from query_guard.backends.factory import backend_for_uri, discover_from_uri
from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.discovery import discover_schema, write_schema_json

MOVIE_TRIPLES = {
    ("Person", "ACTED_IN", "Movie"),
    ("Person", "DIRECTED", "Movie"),
    ("Person", "PRODUCED", "Movie"),
    ("Person", "WROTE", "Movie"),
    ("Person", "REVIEWED", "Movie"),
    ("Person", "FOLLOWS", "Person"),
}


def discover(url: str, **kw: Any) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        backend = FalkorDBBackend(url)
        try:
            return await discover_schema(backend, **kw)
        finally:
            await backend.close()

    return asyncio.run(main())


def build(url_graph: tuple[str, str], port: int, *queries: str) -> str:
    name, url = url_graph
    with redis.Redis(port=port) as client:
        for query in queries:
            client.execute_command("GRAPH.QUERY", name, query)
    return url


def triples(schema: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(r["start"], r["type"], r["end"]): r for r in schema["relationships"]}


def test_movie_graph_schema(movies_url: str) -> None:
    schema = asyncio.run(discover_from_uri(movies_url))
    assert schema["nodes"] == {
        "Movie": ["released", "tagline", "title"],
        "Person": ["born", "name"],
    }
    found = triples(schema)
    assert set(found) == MOVIE_TRIPLES  # every type, each in its stored direction only
    assert all(r["reciprocity"] == 0.0 for r in found.values())
    assert found[("Person", "ACTED_IN", "Movie")]["properties"] == ["roles"]
    assert found[("Person", "REVIEWED", "Movie")]["properties"] == ["rating", "summary"]
    catalog = SchemaCatalog.from_dict(schema)
    assert len(catalog.relationships) == 6


def test_reciprocity_of_mutual_and_one_way_types(falkordb_server: Any, fresh_graph: tuple) -> None:
    url = build(
        fresh_graph,
        falkordb_server.port,
        # 10 pairs that know each other both ways, 1 one-way acquaintance: 20 of 21 edges.
        "UNWIND range(1, 10) AS i CREATE (a:User {id: i})-[:KNOWS]->(b:User {id: 100 + i}), "
        "(b)-[:KNOWS]->(a)",
        "CREATE (:User {id: 50})-[:KNOWS {since: 2020}]->(:User {id: 51})",
        # FOLLOWS only one way; a self-loop must not count as reciprocated.
        "MATCH (a:User), (b:User) WHERE b.id = a.id + 100 CREATE (a)-[:FOLLOWS]->(b)",
        "MATCH (a:User {id: 1}) CREATE (a)-[:FOLLOWS]->(a)",
        # Cross-label edges both ways are still not reciprocity (different endpoint labels).
        "CREATE (c:Club)-[:HAS]->(u:User {id: 200}), (u)-[:HAS]->(c)",
    )
    found = triples(discover(url))
    assert found[("User", "KNOWS", "User")]["reciprocity"] == pytest.approx(20 / 21, abs=1e-3)
    assert found[("User", "KNOWS", "User")]["properties"] == ["since"]
    assert found[("User", "FOLLOWS", "User")]["reciprocity"] == 0.0
    assert found[("Club", "HAS", "User")]["reciprocity"] == 0.0
    assert found[("User", "HAS", "Club")]["reciprocity"] == 0.0
    catalog = SchemaCatalog.from_dict(discover(url))
    assert len(catalog.relationships) == 4


def test_samples_bound_the_probes(falkordb_server: Any, fresh_graph: tuple) -> None:
    url = build(
        fresh_graph,
        falkordb_server.port,
        "UNWIND range(1, 50) AS i CREATE (a:P {i: i})-[:R]->(b:P {j: i}), (b)-[:R]->(a)",
    )
    schema = discover(url, sample=3)
    (rel,) = schema["relationships"]
    assert rel["reciprocity"] == 1.0
    assert schema["nodes"]["P"] in (["i"], ["j"], ["i", "j"])


def test_multi_label_nodes_count_for_each_label(falkordb_server: Any, fresh_graph: tuple) -> None:
    url = build(fresh_graph, falkordb_server.port, "CREATE (:A:B {x: 1})-[:R]->(:C)")
    schema = discover(url)
    assert set(triples(schema)) == {("A", "R", "C"), ("B", "R", "C")}
    assert schema["nodes"] == {"A": ["x"], "B": ["x"], "C": []}


def test_empty_graph(falkordb_server: Any, fresh_graph: tuple) -> None:
    url = build(fresh_graph, falkordb_server.port, "RETURN 1")
    assert discover(url)["nodes"] == {} and discover(url)["relationships"] == []


def test_schema_json_is_sorted_and_stable(movies_url: str) -> None:
    schema = asyncio.run(discover_from_uri(movies_url))
    first = io.StringIO()
    write_schema_json(schema, first)
    shuffled = dict(schema)
    shuffled["relationships"] = random.Random(7).sample(schema["relationships"], 6)
    shuffled["nodes"] = {k: list(reversed(v)) for k, v in reversed(schema["nodes"].items())}
    second = io.StringIO()
    write_schema_json(shuffled, second)
    assert first.getvalue() == second.getvalue()
    assert first.getvalue().endswith("}\n")
    assert json.loads(first.getvalue())["nodes"]["Person"] == ["born", "name"]


def test_backend_for_uri() -> None:
    falkor = backend_for_uri("falkordb://db.example:7000/social")
    assert isinstance(falkor, FalkorDBBackend) and falkor.graph == "social"
    bolt = backend_for_uri("neo4j+s://alice:s%3Acret@db.example:7687/sales")
    assert isinstance(bolt, BoltRelayBackend)
    assert (bolt.uri, bolt.auth, bolt.database) == (
        "neo4j+s://db.example:7687", ("alice", "s:cret"), "sales"
    )  # fmt: skip
    plain = backend_for_uri("bolt://localhost")
    assert isinstance(plain, BoltRelayBackend) and plain.auth is None and plain.database is None
    with pytest.raises(ValueError):
        backend_for_uri("http://localhost:7474")
