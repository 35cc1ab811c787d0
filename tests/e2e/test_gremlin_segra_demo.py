"""SEGRA's similarity walks through the Gremlin front on the IT-support demo graph (the
embedded default) with `conf/segra-similarity.toml`: correct walks run, fixable ones are
rewritten to the correct walk's answer, unfixable ones are refused with the exact fix."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator

import pytest
from gremlin_python.driver.client import Client
from gremlin_python.driver.protocol import GremlinServerError

from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from tests.corpora import ROOT

WINDOW = "has('createdAt', P.between('2024-01-01', '2024-06-30'))"
CORRECT = (
    "g.V(anchor).out('hasReason').bothE('similarReason').has('similarityScore', P.gte(0.8))"
    f".otherV().in('hasReason').{WINDOW}.dedup().values('title')"
)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    raw = tomllib.loads((ROOT / "conf" / "segra-similarity.toml").read_text())
    raw["server"] = {
        "bolt": "", "gremlin": "127.0.0.1:0",
        "data_dir": str(tmp_path_factory.mktemp("segra")),
    }  # fmt: skip
    with ProxyThread(parse_config(raw)) as proxy:
        c = Client(f"ws://127.0.0.1:{proxy.server.gremlin.port}/gremlin", "g")
        yield c
        c.close()


def _titles(client: Client, script: str, anchor: str) -> list[str]:
    return sorted(client.submit(script, {"anchor": anchor}).all().result())


@pytest.fixture(scope="module")
def anchor(client: Client) -> str:
    """A case whose reason has similar reasons with a strong score (the demo is generated)."""
    for n in range(1, 49):
        if _titles(client, CORRECT, f"case-{n}"):
            return f"case-{n}"
    pytest.fail("the demo graph has no case with a similar reason in the window")


def test_threshold_on_the_vertex_is_moved_onto_the_edge(client: Client, anchor: str) -> None:
    wrong = CORRECT.replace(
        ".has('similarityScore', P.gte(0.8)).otherV()",
        ".otherV().has('similarityScore', P.gte(0.8))",
    )
    assert _titles(client, wrong, anchor) == _titles(client, CORRECT, anchor)


def test_missing_threshold_gets_the_configured_one(client: Client, anchor: str) -> None:
    missing = CORRECT.replace(".has('similarityScore', P.gte(0.8))", "")
    assert _titles(client, missing, anchor) == _titles(client, CORRECT, anchor)


def test_one_way_walk_becomes_symmetric(client: Client, anchor: str) -> None:
    one_way = CORRECT.replace("bothE('similarReason')", "outE('similarReason')").replace(
        ".otherV()", ".inV()"
    )
    assert _titles(client, one_way, anchor) == _titles(client, CORRECT, anchor)


@pytest.mark.parametrize(
    ("script", "code"),
    [
        (CORRECT.replace("out('hasReason')", "out('exhibits')"), "SIM.BRACKET"),
        (CORRECT.replace("P.gte(0.8)", "P.gte(0.3)"), "SIM.THRESHOLD"),
        ("g.E().hasLabel('similarReason').values('similarityScore')", "LIM.FULL_SCAN"),
    ],
    ids=["wrong-bracket", "threshold-too-low", "similarity-edge-scan"],
)
def test_unfixable_walks_are_refused(client: Client, anchor: str, script: str, code: str) -> None:
    with pytest.raises(GremlinServerError) as info:
        client.submit(script, {"anchor": anchor}).all().result()
    assert info.value.status_code == 597 and code in str(info.value)


def test_directions_follow_the_demo_graphs_own_schema(client: Client, anchor: str) -> None:
    """The Gremlin rules know the graphersal graph's edges (not the Cypher backend's)."""
    forward = "g.V(anchor).hasLabel('case').out('hasReason').values('text')"
    backward = "g.V(anchor).hasLabel('case').in('hasReason').values('text')"
    assert _titles(client, backward, anchor) == _titles(client, forward, anchor) != []
