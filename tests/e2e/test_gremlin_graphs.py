"""One Gremlin front serves several graphs (issue 21): `[backend] gremlin_graphs` loads each
GraphSON file into its own embedded graph, a client picks one by its traversal source name
(gremlinpython's `DriverRemoteConnection(url, "gmodern")`, the request's aliases), the default
`g` stays the configured graph, each graph is guarded with its own catalog, and an unknown
source name is refused with Gremlin Server's status."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gremlin_python.driver.client import Client
from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.process.anonymous_traversal import traversal

from query_guard.config.load import parse_config
from query_guard.errors import ConfigError
from query_guard.runner import ProxyThread
from tests.corpora import DATA, corpus
from tests.protocol.test_gremlin_front_values import SERIALIZERS


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    crew = corpus("gremlin", "graphs") / "tinkerpop-crew.json"  # skips, with a message, if absent
    if not crew.is_file():
        pytest.skip("the TinkerPop crew graph (corpora/gremlin/graphs) is not here")
    data = tmp_path_factory.mktemp("graphs")
    graphs = {"gmodern": str(DATA / "tinkerpop-modern.json"), "gcrew": str(crew)}
    config = parse_config(
        {
            "server": {"bolt": "", "gremlin": "127.0.0.1:0", "data_dir": str(data)},
            "backend": {"gremlin_graphs": graphs},
            "guard": {"default_limit": 0},
            "audit": {"path": str(data / "audit.jsonl")},
        }
    )
    with ProxyThread(config) as p:
        yield f"ws://127.0.0.1:{p.server.gremlin.port}/gremlin", data / "audit.jsonl"


def _names(url: str, source: str, serializer: str = "graphbinary") -> list[Any]:
    conn = DriverRemoteConnection(url, source, message_serializer=SERIALIZERS[serializer]())
    try:
        g = traversal().with_remote(conn)
        return sorted(g.V().has_label("person").values("name").to_list())
    finally:
        conn.close()


@pytest.mark.parametrize("serializer", SERIALIZERS)
def test_each_source_name_reaches_its_own_graph(proxy: tuple[str, Path], serializer: str) -> None:
    url, _ = proxy
    assert _names(url, "gmodern", serializer) == ["josh", "marko", "peter", "vadas"]
    assert _names(url, "gcrew", serializer) == ["daniel", "marko", "matthias", "stephen"]


def test_g_stays_the_configured_graph(proxy: tuple[str, Path]) -> None:
    url, _ = proxy
    conn = DriverRemoteConnection(url, "g")
    try:  # the IT-support demo graph: no persons, cases
        g = traversal().with_remote(conn)
        assert g.V().has_label("person").count().next() == 0
        assert g.V().has_label("case").limit(1).count().next() == 1
    finally:
        conn.close()


def test_scripts_pick_the_graph_by_the_clients_source(proxy: tuple[str, Path]) -> None:
    url, _ = proxy
    client = Client(url, "gcrew")
    try:
        rows = client.submit("g.V().has('name', 'stephen').out('uses').values('name')")
        assert sorted(rows.all().result()) == ["gremlin", "tinkergraph"]
    finally:
        client.close()


def test_each_graph_is_guarded_with_its_own_catalog(proxy: tuple[str, Path]) -> None:
    url, audit = proxy
    client = Client(url, "gmodern")
    try:  # modern has person-created->software: the reversed direction is flipped
        result = client.submit("g.V().hasLabel('software').out('created').values('name')")
        rows = result.all().result()
        codes = result.status_attributes.get("findings", [])
    finally:
        client.close()
    assert sorted(rows) == ["josh", "josh", "marko", "peter"]  # run as in('created')
    assert "DIR.REVERSED" in {f["code"] for f in codes}
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    assert any(r.get("database") == "gmodern" for r in records)


@pytest.mark.parametrize("serializer", SERIALIZERS)
def test_an_unknown_source_name_is_refused(proxy: tuple[str, Path], serializer: str) -> None:
    url, _ = proxy
    with pytest.raises(GremlinServerError) as raised:
        _names(url, "gnope", serializer)
    message = str(raised.value)
    assert message.startswith("499") and "gnope" in message
    assert "gcrew, gmodern" in message


def test_a_source_name_must_be_an_identifier() -> None:
    with pytest.raises(ConfigError, match="gremlin_graphs"):
        parse_config({"backend": {"gremlin_graphs": {"g": "x.json"}}})
