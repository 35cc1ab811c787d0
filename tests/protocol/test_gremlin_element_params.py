"""Elements and paths a client puts into a request are read as Gremlin Server reads them
(issue 21): an Edge or a Vertex stands for its id — in bytecode, as a `Binding`, in a script's
bindings — and a Path for its objects, with GraphBinary and GraphSON alike."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from gremlin_python.driver.client import Client
from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import Bindings, P
from gremlin_python.structure.graph import Edge, Path, Vertex

from query_guard.runner import ProxyThread
from tests.corpora import DATA
from tests.protocol.test_gremlin_front_values import SERIALIZERS, front_config

E7 = Edge(7, Vertex(1, "person"), "knows", Vertex(2, "person"))
E11 = Edge(11, Vertex(4, "person"), "created", Vertex(3, "software"))


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("modern")
    with ProxyThread(front_config(data, gremlin_data=[str(DATA / "tinkerpop-modern.json")])) as p:
        yield f"ws://127.0.0.1:{p.server.gremlin.port}/gremlin"


@pytest.fixture(params=list(SERIALIZERS))
def g(request: pytest.FixtureRequest, url: str) -> Iterator[Any]:
    conn = DriverRemoteConnection(url, "g", message_serializer=SERIALIZERS[request.param]())
    yield traversal().with_remote(conn)
    conn.close()


def test_edges_in_bytecode_stand_for_their_ids(g: Any) -> None:
    assert g.E(E11).to_list() == [E11]
    assert sorted(e.id for e in g.E(E7, E11).to_list()) == [7, 11]
    assert sorted(e.id for e in g.E([E7, E11]).to_list()) == [7, 11]
    assert g.E().has_id(P.within([E7])).in_v().values("name").to_list() == ["vadas"]


def test_edge_bindings_in_bytecode(g: Any) -> None:
    assert g.E(Bindings.of("e", E11)).out_v().values("name").to_list() == ["josh"]


def test_vertices_and_paths_in_bytecode(g: Any) -> None:
    assert g.V(Vertex(1)).values("name").to_list() == ["marko"]
    assert g.V(Vertex(1), Vertex(4)).values("name").to_list() == ["marko", "josh"]
    assert g.V().has_id(P.within([Vertex(1), Vertex(6)])).count().next() == 2


def test_a_path_in_graphbinary_bytecode_is_its_objects(url: str) -> None:
    conn = DriverRemoteConnection(url, "g")  # gremlinpython's GraphSON writer has no Path
    try:
        g = traversal().with_remote(conn)
        path = Path([{"a"}, set()], [Vertex(1), "x"])
        assert g.V(path).values("name").to_list() == ["marko"]
        assert g.inject(1).constant(path).unfold().to_list() == [1, "x"]
    finally:
        conn.close()


def test_edge_bindings_of_scripts_with_the_real_client(url: str) -> None:
    client = Client(url, "g")  # GraphBinary: gremlinpython's GraphSON cannot write an Edge
    try:
        rows = client.submit("g.E(e).inV().values('name')", {"e": E7}).all().result()
        both = client.submit("g.E(es).id()", {"es": [E7, E11]}).all().result()
    finally:
        client.close()
    assert rows == ["vadas"] and sorted(both) == [7, 11]


def test_an_edge_inside_a_nested_traversal(g: Any) -> None:
    names = g.V(1).flat_map(__.E(E11).in_v()).values("name").to_list()
    assert names == ["lop"]
