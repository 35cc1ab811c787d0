"""The Gremlin front as a TinkerPop client sees it: the real gremlinpython `Client` (scripts +
bindings) and `DriverRemoteConnection` (bytecode), GraphBinary and GraphSON, against
`query-guard serve` with `[server] gremlin` on the embedded graphersal (TinkerPop's modern
graph from tests/data)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from gremlin_python.driver.client import Client
from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.driver.serializer import GraphBinarySerializersV1, GraphSONSerializersV3d0
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import Order, P
from gremlin_python.structure.graph import Edge, Vertex

from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from tests.corpora import DATA

SERIALIZERS = {"graphbinary": GraphBinarySerializersV1, "graphson": GraphSONSerializersV3d0}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyThread]:
    data = tmp_path_factory.mktemp("gremlin-front")
    config = parse_config(
        {
            "server": {"bolt": "", "gremlin": "127.0.0.1:0", "data_dir": str(data)},
            "backend": {"gremlin_data": [str(DATA / "tinkerpop-modern.json")]},
            "audit": {"path": str(data / "audit.jsonl")},
        }
    )
    with ProxyThread(config) as running:
        yield running


@pytest.fixture(scope="module")
def url(proxy: ProxyThread) -> str:
    return f"ws://127.0.0.1:{proxy.server.gremlin.port}/gremlin"


@pytest.fixture(params=sorted(SERIALIZERS))
def g(request: pytest.FixtureRequest, url: str) -> Iterator[Any]:
    conn = DriverRemoteConnection(url, "g", message_serializer=SERIALIZERS[request.param]())
    yield traversal().with_remote(conn)
    conn.close()


@pytest.fixture(params=sorted(SERIALIZERS))
def client(request: pytest.FixtureRequest, url: str) -> Iterator[Client]:
    c = Client(url, "g", message_serializer=SERIALIZERS[request.param]())
    yield c
    c.close()


def _vertex_count(proxy: ProxyThread) -> int:
    return int(proxy.server.gremlin_service.backend.graph.execute("g.V().count().next()"))


def test_scripts_with_bindings(client: Client) -> None:
    names = client.submit("g.V().hasLabel('person').values('name')").all().result()
    assert sorted(names) == ["josh", "marko", "peter", "vadas"]
    knows = client.submit(
        "g.V().has('person', 'name', who).out('knows').values('name')", {"who": "marko"}
    ).all().result()
    assert sorted(knows) == ["josh", "vadas"]
    assert client.submit("g.V().hasLabel('software').count()").all().result() == [2]


def test_full_graph_scans_are_refused_by_default(client: Client, g: Any) -> None:
    with pytest.raises(GremlinServerError, match=r"LIM\.FULL_SCAN") as info:
        client.submit("g.V().values('name')").all().result()
    assert info.value.status_code == 597
    with pytest.raises(GremlinServerError, match=r"LIM\.FULL_SCAN"):
        g.V().count().next()


def test_bytecode_traversals(g: Any) -> None:
    assert sorted(g.V().has("person", "name", "marko").out("knows").values("name").to_list()) == [
        "josh", "vadas",
    ]  # fmt: skip
    assert g.V().has("age", P.gt(30)).order().by("age", Order.desc).values("name").to_list() == [
        "peter", "josh",
    ]  # fmt: skip
    assert g.V().has_label("person").count().next() == 4
    groups = g.V().has_label("person").group().by("name").by(__.out().count()).next()
    assert groups == {"marko": 3, "vadas": 0, "josh": 2, "peter": 1}
    rows = g.V().has_label("person").project("n", "c").by("name").by(__.out_e().count()).to_list()
    assert {r["n"]: r["c"] for r in rows} == {"marko": 3, "vadas": 0, "josh": 2, "peter": 1}
    peers = g.V().has("name", "marko").both_e("knows").other_v().values("name").to_list()
    assert sorted(peers) == ["josh", "vadas"]
    assert g.V().has("name", "marko").repeat(__.out()).times(2).values("name").to_list()
    assert g.V().has_label("person").values("name").dedup().limit(2).to_list()


def test_elements_arrive_as_gremlinpython_types(g: Any) -> None:
    marko = g.V().has("name", "marko").next()
    assert isinstance(marko, Vertex) and marko.label == "person"
    edges = g.V().has("name", "marko").out_e("knows").to_list()
    assert len(edges) == 2 and all(isinstance(e, Edge) and e.label == "knows" for e in edges)
    assert g.V().has("name", "marko").values("name").next() == "marko"


def test_writes_are_refused_with_597_and_never_reach_the_engine(
    proxy: ProxyThread, client: Client, g: Any
) -> None:
    before = _vertex_count(proxy)
    for script in (
        "g.addV('person').property('name', 'mallory')",
        "g.V().hasLabel('person').sideEffect(__.drop())",
        "g.V().coalesce(__.has('name', 'nobody'), __.addV('x'))",
    ):
        with pytest.raises(GremlinServerError) as info:
            client.submit(script).all().result()
        assert info.value.status_code == 597
        assert "SEC.WRITE" in str(info.value)
    with pytest.raises(GremlinServerError, match=r"SEC\.WRITE"):
        g.add_v("person").property("name", "mallory").iterate()
    assert _vertex_count(proxy) == before


def test_groovy_and_lambdas_are_refused(client: Client, g: Any) -> None:
    for script in (
        "g.V().map{ it.get() }",
        "Runtime.getRuntime().exec('id')",
        "g.V().count(); System.exit(0)",
    ):
        with pytest.raises(GremlinServerError) as info:
            client.submit(script).all().result()
        assert info.value.status_code == 597, script
    with pytest.raises(GremlinServerError, match=r"SEC\.SCRIPT"):
        g.V().map(lambda: "it.get()").to_list()


def test_results_come_in_batches(url: str) -> None:
    c = Client(url, "g")
    try:
        result = c.submit(
            "g.V().hasLabel('person').values('name')", request_options={"batchSize": 3}
        )
        assert sorted(result.all().result()) == ["josh", "marko", "peter", "vadas"]
        assert c.submit("g.V().has('name', 'nobody')").all().result() == []
    finally:
        c.close()


def test_http_form(proxy: ProxyThread) -> None:
    port = proxy.server.gremlin.port

    async def post(body: Any) -> tuple[int, Any]:
        address = f"http://127.0.0.1:{port}/gremlin"
        async with aiohttp.ClientSession() as session, session.post(address, json=body) as resp:
            return resp.status, json.loads(await resp.text())

    status, body = asyncio.run(post({"gremlin": "g.V().has('name', n).values('age')",
                                     "bindings": {"n": "marko"}}))  # fmt: skip
    assert status == 200 and body["result"]["data"]["@value"] == [{"@type": "g:Int32",
                                                                    "@value": 29}]  # fmt: skip
    status, body = asyncio.run(post({"gremlin": "g.V().hasLabel('x').drop()"}))
    assert status == 500 and "SEC.WRITE" in body["message"]
    status, _ = asyncio.run(post({"query": 1}))
    assert status == 400


def test_malformed_frames_get_errors_not_a_dead_listener(proxy: ProxyThread, url: str) -> None:
    async def probe(frame: bytes) -> bytes:
        async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
            await ws.send_bytes(frame)
            msg = await ws.receive(timeout=10)
            return bytes(msg.data)

    mime = b"application/vnd.graphbinary-v1.0"
    for frame in (b"\x05abc", bytes([len(mime)]) + mime + b"\x81garbage",
                  bytes([9]) + b"text/html" + b"{}"):  # fmt: skip
        assert asyncio.run(probe(frame))  # an error response came back
    c = Client(url, "g")
    try:
        assert c.submit("g.V().hasLabel('person').count()").all().result() == [4]
    finally:
        c.close()


def test_every_request_is_audited(proxy: ProxyThread, url: str) -> None:
    c = Client(url, "g")
    try:
        c.submit("g.V().has('name', 'vadas').values('age')").all().result()
    finally:
        c.close()
    proxy.call(asyncio.sleep(0.05))  # the audit log writes its lines every 10 ms
    proxy.server.audit.flush()
    lines = [json.loads(x) for x in Path(proxy.server.audit.path).read_text().splitlines()]
    line = next(x for x in reversed(lines) if "vadas" in (x.get("original") or ""))
    assert line["front"] == "gremlin" and line["verdict"] in ("allow", "rewrite")
    assert line["final_query"].endswith(".limit(1000)")


def test_proxy_to_proxy_remote_backend(tmp_path: Path, proxy: ProxyThread, url: str) -> None:
    """A second query-guard whose Gremlin backend is the first one (as a remote Gremlin
    Server): traversals travel as bytecode and are guarded at both hops."""
    config = parse_config(
        {
            "server": {"bolt": "", "gremlin": "127.0.0.1:0", "data_dir": str(tmp_path)},
            "backend": {"gremlin": url},
        }
    )
    with ProxyThread(config) as front:
        conn = DriverRemoteConnection(f"ws://127.0.0.1:{front.server.gremlin.port}/gremlin", "g")
        try:
            g = traversal().with_remote(conn)
            names = g.V().has("person", "name", "marko").out("knows").values("name").to_list()
            assert sorted(names) == ["josh", "vadas"]
            assert g.V().has_label("person").count().next() == 4
            assert g.V().has("name", "marko").has_next() is True
            with pytest.raises(GremlinServerError, match=r"SEC\.WRITE"):
                g.V().has("name", "marko").side_effect(__.drop()).iterate()
        finally:
            conn.close()
    assert _vertex_count(proxy) == 6


def test_audit_error_is_a_code_and_the_status_its_own_field(proxy: ProxyThread, url: str) -> None:
    """As on every front, `error` names what caused a refusal (the Neo4j-style status of
    the blocking findings, the backend's code, an invalid request); a request refused before
    it reached the runner keeps TinkerPop's number as `detail.status`."""
    scripts = {
        "groovy": "def x = 1; g.V().has('name', 'marko')",  # SEC.SCRIPT: Forbidden
        "scan": "g.V().values('age')",  # LIM.FULL_SCAN: a semantic refusal
        "engine": "g.V().has('name', 'marko').values('name').math('_ + 1')",  # fails in graphersal
    }
    c = Client(url, "g")
    try:
        for script in scripts.values():
            with pytest.raises(GremlinServerError) as info:
                c.submit(script).all().result()
            assert info.value.status_code == 597
    finally:
        c.close()

    async def invalid() -> int:
        async with aiohttp.ClientSession() as session:
            body = {"gremlin": "g.V().has('name', 'josh')", "bindings": 5}
            async with session.post(url.replace("ws://", "http://"), json=body) as response:
                return response.status

    assert asyncio.run(invalid()) == 400
    proxy.call(asyncio.sleep(0.05))  # the audit log writes its lines every 10 ms
    proxy.server.audit.flush()
    lines = [json.loads(x) for x in Path(proxy.server.audit.path).read_text().splitlines()]
    by_query = {x.get("original"): x for x in lines}
    assert by_query[scripts["groovy"]]["error"] == "Neo.ClientError.Security.Forbidden"
    assert by_query[scripts["scan"]]["error"] == "Neo.ClientError.Statement.SemanticError"
    assert by_query[scripts["engine"]]["error"] == "Gremlin.Evaluation"
    assert {by_query[s]["front"] for s in scripts.values()} == {"gremlin"}
    invalid_request = [x for x in lines if x["detail"].get("status") == 499]
    assert invalid_request and invalid_request[-1]["error"] == "Neo.ClientError.Request.Invalid"
