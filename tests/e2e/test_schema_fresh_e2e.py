"""Proxy-answered schema procedures after writes (issue 21 item 1), end to end with the real
neo4j driver and LangChain's Neo4jGraph against `query-guard serve` on the embedded FalkorDB
with writes allowed: a label, type or key written through the proxy shows in `db.labels()`,
`apoc.meta.data()`, `db.schema.nodeTypeProperties()` … at once, and the guard's rules know it;
one written elsewhere shows once the catalog is older than `[compat] schema_max_age_seconds`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
from langchain_neo4j import Neo4jGraph

from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread

AUTH = ("neo4j", "x")


def _proxy(tmp: Path, **compat: Any) -> ProxyThread:
    table: dict[str, Any] = {
        "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp)},
        "audit": {"path": str(tmp / "audit.jsonl")},
        "guard": {"read_only": False},
        "compat": compat,
    }
    return ProxyThread(parse_config(table))


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyThread]:
    with _proxy(tmp_path_factory.mktemp("fresh")) as running:
        yield running


@pytest.fixture(scope="module")
def driver(proxy: ProxyThread) -> Iterator[neo4j.Driver]:
    with neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=AUTH) as drv:
        yield drv


def rows(driver: neo4j.Driver, query: str) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(query)
    return [r.data() for r in records]


def test_labels_types_and_keys_written_through_the_proxy_show_at_once(
    driver: neo4j.Driver,
) -> None:
    assert "Zebra" not in {r["label"] for r in rows(driver, "CALL db.labels()")}
    driver.execute_query("CREATE (:Zebra {stripes: 3})-[:GRAZES_ON {since: 2020}]->(:Grass)")
    assert {"Zebra", "Grass"} <= {r["label"] for r in rows(driver, "CALL db.labels()")}
    types = {r["relationshipType"] for r in rows(driver, "CALL db.relationshipTypes()")}
    assert "GRAZES_ON" in types
    meta = rows(driver, "CALL apoc.meta.data() YIELD label, property, type, elementType "
                        "RETURN label, property, type, elementType")  # fmt: skip
    assert {"label": "Zebra", "property": "stripes", "type": "INTEGER",
            "elementType": "node"} in meta  # fmt: skip
    assert any(m["label"] == "GRAZES_ON" and m["property"] == "since" for m in meta)
    node_props = rows(driver, "CALL db.schema.nodeTypeProperties()")
    assert any(r["nodeLabels"] == ["Zebra"] and r["propertyName"] == "stripes"
               for r in node_props)  # fmt: skip


def test_the_guard_rules_see_the_refreshed_catalog(driver: neo4j.Driver) -> None:
    driver.execute_query("CREATE (:Okapi {ossicones: 2})")
    rows(driver, "CALL db.labels()")  # the catalog is fresh before this answer
    _, summary, _ = driver.execute_query("MATCH (o:Okapi) RETURN o.ossicones AS n")
    said = " ".join(str(s.status_description) for s in summary.gql_status_objects)
    assert "SCH.UNKNOWN" not in said, said
    _, misspelt, _ = driver.execute_query("MATCH (o:Okapii) RETURN o LIMIT 1")
    hints = " ".join(str(s.status_description) for s in misspelt.gql_status_objects)
    assert "'Okapi'" in hints, hints  # the hint names the new label


def test_a_write_made_elsewhere_shows_when_the_catalog_is_old(
    tmp_path: Path,
) -> None:
    with _proxy(tmp_path, schema_max_age_seconds=0.5) as proxy:
        uri = f"bolt://{proxy.address}"
        with neo4j.GraphDatabase.driver(uri, auth=AUTH) as driver:
            assert "Tapir" not in {r["label"] for r in rows(driver, "CALL db.labels()")}
            backend = proxy.server.backend  # another client of the same database
            proxy.call(_run(backend, "CREATE (:Tapir {snout: 1})"))
            time.sleep(0.6)
            assert "Tapir" in {r["label"] for r in rows(driver, "CALL db.labels()")}


async def _run(backend: Any, query: str) -> None:
    stream = await backend.run(query, {}, None)
    await stream.fetch(-1)


def test_langchain_refresh_schema_after_a_write(proxy: ProxyThread) -> None:
    graph = Neo4jGraph(f"bolt://{proxy.address}", *AUTH, refresh_schema=True)
    try:
        assert "Llama" not in graph.structured_schema["node_props"]
        graph.query("CREATE (:Llama {wool: 'soft'})-[:HERDS]->(:Alpaca {name: 'a'})")
        graph.refresh_schema()
        schema = graph.structured_schema
        assert {"property": "wool", "type": "STRING"} in schema["node_props"]["Llama"]
        assert {"start": "Llama", "type": "HERDS", "end": "Alpaca"} in schema["relationships"]
    finally:
        graph.close()


def test_a_type_written_a_moment_ago_is_not_fixed_to_another(driver: neo4j.Driver) -> None:
    """The read right after a write comes before the background refresh: its new type must not
    be "fixed" to a declared one (REVIEWED_TWICE → REVIEWED would find nothing)."""
    driver.execute_query(
        "CREATE (:Person {name: 'Quill'})-[:REVIEWED_TWICE]->(:Movie {title: 'Quasar'})"
    )
    records, summary, _ = driver.execute_query(
        "MATCH (p:Person {name: 'Quill'})-[:REVIEWED_TWICE]->(m:Movie) RETURN m.title AS title"
    )
    assert [r["title"] for r in records] == ["Quasar"]
    said = " ".join(str(s.status_description) for s in summary.gql_status_objects)
    assert "SCH.UNKNOWN_REL_TYPE" not in said, said
