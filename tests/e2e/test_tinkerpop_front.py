"""TinkerPop's own feature scenarios through the Gremlin front (the real gremlinpython client,
bytecode where the scenario translates, the embedded graphersal behind): the scenarios that
passed when the baseline was recorded must keep passing, ≥ 90 % of the read-only suite
must pass, and none that passes on graphersal in-process may fail through the front. Plus the
fixes the suite found, each asserted on the modern graph in tests/data (always present) the
way a gremlinpython user sees it."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from gremlin_python.driver.client import Client
from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.driver.serializer import GraphBinarySerializersV1, GraphSONSerializersV3d0
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import Column, Direction, GType, Order, P, Pick, Scope, T
from gremlin_python.structure.graph import Path, Vertex

from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from tests.corpora import DATA, corpus, read_jsonl
from tests.tinkerpop_suite import exclusion, run_in_process, run_suite

BASELINE = DATA / "tinkerpop_front_baseline.json"
MIN_PASS_RATE = 0.90


def test_feature_suite_through_the_front() -> None:
    rows = read_jsonl("gremlin", "tinkerpop_traversals.jsonl")
    graphs = corpus("gremlin", "graphs")
    logging.getLogger("gremlinpython").setLevel(logging.CRITICAL)  # expected error replies
    outcomes = run_suite(rows, graphs)
    baseline = json.loads(BASELINE.read_text())
    failing = {o.id: o.detail for o in outcomes if not o.passed}
    regressions = {i: failing[i] for i in baseline["passing"] if i in failing}
    assert not regressions, f"{len(regressions)} scenarios no longer pass: " + "\n".join(
        f"{i}: {d[:300]}" for i, d in list(regressions.items())[:10]
    )
    assert len(outcomes) == baseline["in_suite"], "the corpus or the exclusions changed"
    assert len({o.id for o in outcomes}) == len(outcomes)
    assert sum(o.passed for o in outcomes) / len(outcomes) >= MIN_PASS_RATE
    # nothing graphersal answers right in-process is lost on the way through the front
    in_process = run_in_process(rows, graphs)
    lost = {o.id for o in in_process if o.passed} - {o.id for o in outcomes if o.passed}
    assert not lost, f"pass in-process, fail through the front: {sorted(lost)[:10]}"


def test_excluded_categories_are_named() -> None:
    rows = read_jsonl("gremlin", "tinkerpop_traversals.jsonl")
    reasons = {exclusion(r) for r in rows}
    assert reasons == {None, "empty graph", "error expected", "strategies", "match()",
                       "graph algorithms", "mutations"}  # fmt: skip


# ---------------------------------------------------------------- what the suite found


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("tinkerpop-front")
    config = parse_config(
        {
            "server": {"bolt": "", "gremlin": "127.0.0.1:0", "data_dir": str(data)},
            "backend": {"gremlin_data": [str(DATA / "tinkerpop-modern.json")]},
            "guard": {"default_limit": 0},
            "rules": {"gremlin_scans": {"block": False}},
            "audit": {"path": str(data / "audit.jsonl")},
        }
    )
    with ProxyThread(config) as proxy:
        yield f"ws://127.0.0.1:{proxy.server.gremlin.port}/gremlin"


@pytest.fixture(params=["graphbinary", "graphson"])
def g(request: pytest.FixtureRequest, url: str) -> Iterator[Any]:
    serializer = {"graphbinary": GraphBinarySerializersV1, "graphson": GraphSONSerializersV3d0}
    conn = DriverRemoteConnection(url, "g", message_serializer=serializer[request.param]())
    yield traversal().with_remote(conn)
    conn.close()


def test_gtype_tokens_are_read_from_requests(g: Any) -> None:
    ages = g.V().has_label("person").values("age").is_(P.type_of(GType.INT)).to_list()
    assert sorted(ages) == [27, 29, 32, 35]


def test_paths_arrive_as_paths(g: Any) -> None:
    paths = g.V().has("name", "marko").out("knows").path().by("name").to_list()
    assert all(isinstance(p, Path) for p in paths)
    assert sorted(p.objects for p in paths) == [["marko", "josh"], ["marko", "vadas"]]


def test_ids_keep_the_graphs_integer_type(g: Any) -> None:
    marko = g.V().has("name", "marko").next()
    assert marko == Vertex(1) and marko.id == 1
    assert sorted(g.V().has_label("software").id_().to_list()) == [3, 5]


def test_projected_ids_keep_the_graphs_integer_type(g: Any) -> None:
    rows = g.V().has_label("software").project("id", "name").by(T.id).by("name").to_list()
    assert sorted(rows, key=lambda r: r["id"]) == [{"id": 3, "name": "lop"},
                                                   {"id": 5, "name": "ripple"}]  # fmt: skip
    pairs = g.V().has("name", "josh").as_("a").out().as_("b").select("a", "b").by(__.id_())
    assert sorted(r["b"] for r in pairs.to_list()) == [3, 5]


def test_element_maps_have_token_keys(g: Any) -> None:
    vertex = g.V().has("name", "vadas").element_map().next()
    assert vertex == {T.id: 2, T.label: "person", "name": "vadas", "age": 27}
    edge = g.E(11).element_map().next()
    assert edge[Direction.OUT] == {T.id: 4, T.label: "person"}
    assert edge[Direction.IN] == {T.id: 3, T.label: "software"} and edge["weight"] == 0.4


def test_element_map_entries_keep_token_keys(g: Any) -> None:
    entries = (
        g.V().has("name", "vadas").element_map().order(Scope.local).by(Column.keys, Order.desc)
        .unfold().to_list()
    )  # fmt: skip
    assert entries == [{"name": "vadas"}, {T.label: "person"}, {T.id: 2}, {"age": 27}]
    merged = g.V().has("name", "vadas").element_map().merge(
        __.V().has("name", "lop").element_map()
    ).next()
    assert merged[T.id] == 3 and merged[T.label] == "software" and merged["age"] == 27


def test_injected_sets_arrive_as_sets(g: Any) -> None:
    assert g.inject({1, 3}).to_list() == [{1, 3}]
    creators = g.V().has("name", "lop").map(__.in_().values("name").fold().dedup(Scope.local))
    assert creators.to_list() == [{"marko", "josh", "peter"}]


def test_set_operations_answer_sets(g: Any) -> None:
    names = g.V().has("name", "marko").out().values("name").fold().difference(["lop"]).next()
    assert names == {"josh", "vadas"}


def test_maps_with_non_string_keys(g: Any) -> None:
    by_out_degree = g.V().group().by(__.out().count()).by("name").next()
    assert {k: sorted(v) for k, v in by_out_degree.items()} == {
        0: ["lop", "ripple", "vadas"], 1: ["peter"], 2: ["josh"], 3: ["marko"],
    }  # fmt: skip


def test_maps_with_list_keys(g: Any) -> None:
    counts = g.V().has("name", "marko").both("knows").group_count().by(__.values("name").fold())
    assert counts.next() == {("vadas",): 1, ("josh",): 1}


def test_bytecode_bindings_and_list_bindings_reach_the_engine(url: str) -> None:
    from gremlin_python.process.traversal import Bindings

    conn = DriverRemoteConnection(url, "g")
    try:
        g = traversal().with_remote(conn)
        names = g.V(Bindings.of("ids", [1, 2])).values("name").to_list()
        assert sorted(names) == ["marko", "vadas"]
        assert g.V(Bindings.of("vid", 4)).values("name").to_list() == ["josh"]
    finally:
        conn.close()


def test_pick_any_and_wide_integers_travel_as_tokens_and_longs(g: Any) -> None:
    labels = (
        g.V().has("name", "marko").branch(__.label())
        .option("person", __.values("age")).option(Pick.any_, __.label()).to_list()
    )  # fmt: skip
    assert sorted(map(str, labels)) == ["29", "person"]
    assert g.inject(2147483647, 1).sum_().next() == 2147483648


def test_scripts_with_a_vertex_binding(url: str) -> None:
    client = Client(url, "g")
    try:
        rows = client.submit("g.V(v).out('knows').values('name')", {"v": Vertex(1)})
        assert sorted(rows.all().result()) == ["josh", "vadas"]
    finally:
        client.close()
