"""Execution-triggered repair for Gremlin as a TinkerPop client sees it: the real gremlinpython
`Client` / `DriverRemoteConnection` through the Gremlin front of `query-guard serve` on the
embedded graphersal (TinkerPop's modern graph: `created` is declared person -> software only,
`knows` person -> person). A traversal that comes back empty is retried with in/out reversed:
safe flips are applied, speculative ones suggested unless the client sends its question."""

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
from gremlin_python.driver.serializer import GraphBinarySerializersV1, GraphSONSerializersV3d0
from gremlin_python.process.anonymous_traversal import traversal

from query_guard.config.load import parse_config
from query_guard.gremlin.language import GremlinQuery
from query_guard.gremlin.similarity import GremlinSchema
from query_guard.guard.hookspecs import hookimpl
from query_guard.model import Finding, Severity
from query_guard.repair.gremlin import flip_candidates
from query_guard.run.gremlin_service import GremlinService
from query_guard.run.runner import Runner
from query_guard.run.service import QueryResult, QueryService
from query_guard.runner import ProxyThread
from tests.corpora import DATA

SERIALIZERS = {"graphbinary": GraphBinarySerializersV1, "graphson": GraphSONSerializersV3d0}


def _config(data: Path, repair: dict[str, Any] | None = None) -> Any:
    return parse_config(
        {
            "server": {"bolt": "", "gremlin": "127.0.0.1:0", "data_dir": str(data)},
            "backend": {"gremlin_data": [str(DATA / "tinkerpop-modern.json")]},
            "audit": {"path": str(data / "audit.jsonl")},
            "repair": repair or {},
        }
    )


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyThread]:
    with ProxyThread(_config(tmp_path_factory.mktemp("gremlin-repair"))) as running:
        yield running


@pytest.fixture(params=sorted(SERIALIZERS))
def client(request: pytest.FixtureRequest, proxy: ProxyThread) -> Iterator[Client]:
    url = f"ws://127.0.0.1:{proxy.server.gremlin.port}/gremlin"
    c = Client(url, "g", message_serializer=SERIALIZERS[request.param]())
    yield c
    c.close()


def _submit(client: Client, text: str, **options: Any) -> tuple[list[Any], dict[str, Any]]:
    result = client.submit(text, request_options=options or None)
    rows = result.all().result()
    return rows, result.status_attributes or {}


def _codes(attributes: dict[str, Any]) -> list[str]:
    return [f["code"] for f in attributes.get("findings", [])]


def _audit_line(proxy: ProxyThread, needle: str) -> dict[str, Any]:
    proxy.call(asyncio.sleep(0.05))  # the audit log writes its lines every 10 ms
    proxy.server.audit.flush()
    lines = [json.loads(x) for x in Path(proxy.server.audit.path).read_text().splitlines()]
    return next(x for x in reversed(lines) if needle in (x.get("original") or ""))


def test_safe_flip_is_applied(client: Client, proxy: ProxyThread) -> None:
    # marko created lop: in('created') from him is empty; created is person -> software only
    rows, attributes = _submit(client, "g.V().has('name', 'marko').in('created').values('name')")
    assert rows == ["lop"]
    assert "DIR.FLIPPED_ON_EMPTY" in _codes(attributes)
    assert any("DIR.FLIPPED_ON_EMPTY" in w for w in attributes["warnings"])
    line = _audit_line(proxy, "has('name', 'marko').in('created')")
    assert "out('created')" in line["final_query"]
    assert [a["outcome"] for a in line["repair"]] == ["empty", "rows"]
    assert "DIR.FLIPPED_ON_EMPTY" in line["codes"] and "REPAIR.ATTEMPT" in line["codes"]


def test_empty_count_is_repaired(client: Client) -> None:
    rows, attributes = _submit(client, "g.V().has('name', 'marko').in('created').count()")
    assert rows == [1]
    assert "DIR.FLIPPED_ON_EMPTY" in _codes(attributes)


def test_speculative_flip_is_only_suggested(client: Client, proxy: ProxyThread) -> None:
    # nobody is known by vadas; knows joins persons, so the empty answer may be right
    text = "g.V().has('person', 'name', 'vadas').out('knows').values('name')"
    rows, attributes = _submit(client, text)
    assert rows == []
    suggested = [f for f in attributes["findings"] if f["code"] == "REPAIR.SUGGESTED"]
    assert len(suggested) == 1 and "in('knows')" in suggested[0]["hint"]
    assert "question" in suggested[0]["message"]  # it says how to opt in
    line = _audit_line(proxy, "'vadas').out('knows')")
    assert "out('knows')" in line["final_query"]  # the client's own traversal answered
    assert [a["outcome"] for a in line["repair"]] == ["empty", "rows"]


def test_question_opts_in_to_speculative_flips(client: Client) -> None:
    text = "g.V().has('person', 'name', 'vadas').out('knows').values('name')"
    rows, attributes = _submit(client, text, question="who knows vadas?")
    assert rows == ["marko"]
    flipped = [f for f in attributes["findings"] if f["code"] == "DIR.FLIPPED_ON_EMPTY"]
    assert flipped and "opted in" in flipped[0]["message"]


def test_question_in_bytecode_opts_in(proxy: ProxyThread) -> None:
    url = f"ws://127.0.0.1:{proxy.server.gremlin.port}/gremlin"
    conn = DriverRemoteConnection(url, "g")
    try:
        g = traversal().with_remote(conn)
        walk = g.V().has("person", "name", "vadas").out("knows").values("name")
        assert walk.to_list() == []
        asked = g.with_("question", "who knows vadas?").V().has("person", "name", "vadas")
        assert asked.out("knows").values("name").to_list() == ["marko"]
    finally:
        conn.close()


def test_pinned_hop_is_not_flipped(client: Client, proxy: ProxyThread) -> None:
    # vadas created nothing; from a person, created is declared only as written
    text = "g.V().has('person', 'name', 'vadas').out('created').values('name')"
    rows, attributes = _submit(client, text)
    assert rows == [] and "REPAIR.SUGGESTED" not in _codes(attributes)
    assert _audit_line(proxy, "'vadas').out('created')")["repair"] is None


def test_speculative_apply_configured(tmp_path: Path) -> None:
    with ProxyThread(_config(tmp_path, {"speculative": "apply"})) as running:
        url = f"ws://127.0.0.1:{running.server.gremlin.port}/gremlin"
        c = Client(url, "g")
        try:
            text = "g.V().has('person', 'name', 'vadas').out('knows').values('name')"
            assert _submit(c, text)[0] == ["marko"]
        finally:
            c.close()


def test_repair_disabled(tmp_path: Path) -> None:
    with ProxyThread(_config(tmp_path, {"enabled": False})) as running:
        url = f"ws://127.0.0.1:{running.server.gremlin.port}/gremlin"
        c = Client(url, "g")
        try:
            text = "g.V().has('name', 'marko').in('created').values('name')"
            rows, attributes = _submit(c, text)
            assert rows == [] and not [c for c in _codes(attributes) if "REPAIR" in c]
            assert "DIR.FLIPPED_ON_EMPTY" not in _codes(attributes)
        finally:
            c.close()


CATALOG = GremlinSchema(
    (("person", "knows", "person"), ("person", "created", "software"))
).catalog()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # unknown labels, a one-way edge: safe
        ("g.V(x).in('created')", [("g.V(x).out('created')", True)]),
        # a self-joining edge: speculative
        ("g.V(x).out('knows')", [("g.V(x).in('knows')", False)]),
        # pinned as written (what the guard's DIR.REVERSED leaves behind): nothing
        ("g.V().hasLabel('software').in('created')", []),
        ("g.V().hasLabel('person').outE('created').inV()", []),
        # an edge step flips with the vertex step that leaves it
        ("g.V(x).inE('created').outV()", [("g.V(x).outE('created').inV()", True)]),
        # both hops at once, then each alone
        ("g.V(x).in('created').out('knows')", [
            ("g.V(x).out('created').in('knows')", False),
            ("g.V(x).out('created').out('knows')", True),
            ("g.V(x).in('created').in('knows')", False),
        ]),
        # both() has no direction to flip
        ("g.V(x).both('knows')", []),
        # nor is a hop inside not(...) flipped; one inside where(...) is
        ("g.V(x).not(__.in('created'))", []),
        ("g.V(x).where(__.in('created'))", [("g.V(x).where(__.out('created'))", True)]),
    ],
)  # fmt: skip
def test_flip_candidates(text: str, expected: list[tuple[str, bool]]) -> None:
    assert CATALOG is not None
    found = flip_candidates(GremlinQuery.parse(text), CATALOG, 3)
    assert [(f.text, f.safe) for f in found] == expected


class RefuseOutCreated:
    """A third-party rule that blocks every traversal walking out('created')."""

    name = "refuse_out_created"

    @hookimpl
    def guard_text(self, text: str, language: str) -> list[Finding]:
        if language == "gremlin" and "out('created')" in text:
            return [Finding("SEC.PROCEDURE", Severity.ERROR, "out('created') refused", (0, 0))]
        return []


def test_candidates_are_guarded_before_they_run(tmp_path: Path) -> None:
    config = _config(tmp_path)
    with ProxyThread(config, extra_plugins=(RefuseOutCreated(),)) as running:
        url = f"ws://127.0.0.1:{running.server.gremlin.port}/gremlin"
        c = Client(url, "g")
        try:
            rows, attributes = _submit(c, "g.V().has('name', 'marko').in('created').values('name')")
        finally:
            c.close()
        assert rows == [] and "DIR.FLIPPED_ON_EMPTY" not in _codes(attributes)
        attempts = [f["message"] for f in attributes["findings"] if f["code"] == "REPAIR.ATTEMPT"]
        assert len(attempts) == 2 and "blocked: SEC.PROCEDURE" in attempts[1]
        line = _audit_line(running, "has('name', 'marko').in('created')")
        assert [a["outcome"] for a in line["repair"]] == ["empty", "blocked"]


def test_mcp_tool_repairs_too(tmp_path: Path) -> None:
    """`read_gremlin` (the MCP tool) runs through the same runner route: the same repair."""

    async def run() -> QueryResult:
        service = await GremlinService.create(_config(tmp_path))
        whole = QueryService(service.guard, None, runner=Runner({"gremlin": service.route()}))
        try:
            text = "g.V().has('name', 'marko').in('created').values('name')"
            return await whole.run(text, front="mcp", language="gremlin")
        finally:
            whole.close()
            await service.close()

    out = asyncio.run(run())
    assert out.rows == [["lop"]] and "out('created')" in out.query
    assert "DIR.FLIPPED_ON_EMPTY" in out.verdict.codes


def test_http_form_question_opts_in(proxy: ProxyThread) -> None:
    address = f"http://127.0.0.1:{proxy.server.gremlin.port}/gremlin"
    text = "g.V().has('person', 'name', 'vadas').out('knows').values('name')"

    async def post(body: dict[str, Any]) -> dict[str, Any]:
        async with aiohttp.ClientSession() as session, session.post(address, json=body) as resp:
            assert resp.status == 200
            return json.loads(await resp.text())  # type: ignore[no-any-return]

    plain = asyncio.run(post({"gremlin": text}))
    assert "marko" not in json.dumps(plain["result"])
    assert "REPAIR.SUGGESTED" in json.dumps(plain["status"]["attributes"])
    asked = asyncio.run(post({"gremlin": text, "question": "who knows vadas?"}))
    assert "marko" in json.dumps(asked["result"])
    assert "DIR.FLIPPED_ON_EMPTY" in json.dumps(asked["status"]["attributes"])
