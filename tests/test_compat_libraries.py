"""The LLM-app libraries people point at Neo4j, unmodified and with their default arguments,
pointed at `query-guard` instead (issue 9): langchain-neo4j, neo4j-graphrag, llama-index's
Neo4j property-graph store and mcp-neo4j-cypher, each in front of the embedded FalkorDB and of
ArcadeDB (Bolt), with the movie graph. Their LLM is `tests.fake_llm.FakeLLM`, a real OpenAI-API
server the libraries reach through their own OpenAI classes; it returns canned Cypher: correct,
with a reversed arrow, fenced inside prose, with a wrong relationship type, and a
`DETACH DELETE`. Each faulty query must give the rows the correct one gives; the delete must be
refused with the database left whole; the schema each library builds must name the labels,
relationship types and endpoint patterns `query-guard schema` discovers, with property types as
stored. Select with `pytest -m compat`.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import neo4j
import pytest
from langchain_neo4j import GraphCypherQAChain, Neo4jGraph
from langchain_openai import ChatOpenAI

try:  # the compat-llama extra: its neo4j<6 pin keeps it out of the test extra
    from llama_index.core.indices.property_graph import TextToCypherRetriever
    from llama_index.graph_stores.neo4j import Neo4jPropertyGraphStore
    from llama_index.llms.openai import OpenAI as LlamaOpenAI

    LLAMA = ""
except ImportError as exc:
    LLAMA = f"llama-index-graph-stores-neo4j is not installed (extra compat-llama): {exc}"
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from neo4j_graphrag.exceptions import Text2CypherRetrievalError
from neo4j_graphrag.llm import OpenAILLM
from neo4j_graphrag.retrievers import Text2CypherRetriever
from neo4j_graphrag.schema import get_schema

from proxy.cli import main as query_guard
from proxy.config import parse_config
from proxy.runner import ProxyThread
from tests.fake_llm import FakeLLM

pytestmark = pytest.mark.compat

AUTH = ("neo4j", "anything")  # what an app passes; the proxy holds the backend's credentials
PASSWORD_ENV = "QG_TEST_COMPAT_ARCADEDB_PASSWORD"
QUESTION = "Which movies did Tom Hanks act in?"
GOOD = (
    "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) "
    "RETURN m.title AS title ORDER BY title"
)
CANNED = {  # what a model writes for QUESTION, right and wrong
    "good": GOOD,
    "reversed_arrow": GOOD.replace("-[:ACTED_IN]->", "<-[:ACTED_IN]-"),
    "fenced_with_prose": f"Here is the query:\n```cypher\n{GOOD}\n```\nIt lists the titles.",
    "wrong_relationship_type": GOOD.replace("ACTED_IN", "STARRED_IN"),
}
DELETE_ALL = "MATCH (n) DETACH DELETE n"
BY_NAME = GOOD.replace("'Tom Hanks'", "$name")
# apoc.meta.data's names for the value types stored here (bool before int: bool is an int)
NEO4J_TYPES = (
    (bool, "BOOLEAN"),
    (int, "INTEGER"),
    (float, "FLOAT"),
    (str, "STRING"),
    (list, "LIST"),
)


@dataclass
class Target:
    """One database behind its own proxy, and what `query-guard schema` says about it."""

    name: str
    backend: dict[str, Any]
    proxy: ProxyThread
    schema: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)  # GOOD's rows through the proxy
    records: list[neo4j.Record] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"bolt://{self.proxy.address}"


def start_proxy(backend: dict[str, Any], data_dir: Path, **sections: Any) -> ProxyThread:
    raw = {"server": {"bolt": "127.0.0.1:0", "data_dir": str(data_dir)}, "backend": backend}
    raw["audit"] = {"path": str(data_dir / "audit.jsonl")}
    return ProxyThread(parse_config(raw | sections))


@pytest.fixture(scope="module", params=["falkordb", "arcadedb"])
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Target]:
    tmp = tmp_path_factory.mktemp(f"compat-{request.param}")
    if request.param == "falkordb":
        url = request.getfixturevalue("movies_url")
        backend: dict[str, Any] = {"cypher": url}
        discover = ["--uri", url]
    else:
        server = request.getfixturevalue("arcadedb_server")
        os.environ[PASSWORD_ENV] = server.root_password
        backend = {"cypher": server.url, "database": server.database}
        backend |= {"credentials": "configured", "user": "root", "password_env": PASSWORD_ENV}
        discover = ["--uri", f"{server.url}/{server.database}", "--user", "root"]
        discover += ["--password-env", PASSWORD_ENV]
    assert query_guard(["schema", *discover, "--out", str(tmp / "schema.json")]) == 0
    schema = json.loads((tmp / "schema.json").read_text("utf-8"))
    proxy = start_proxy(backend, tmp).start()
    try:
        found = Target(request.param, backend, proxy, schema)
        with neo4j.GraphDatabase.driver(found.url, auth=AUTH) as drv:
            found.records = drv.execute_query(GOOD).records
        found.rows = [r.data() for r in found.records]
        assert found.rows, "the correct query must answer something"
        yield found
    finally:
        proxy.stop()


@pytest.fixture(scope="module")
def driver(target: Target) -> Iterator[neo4j.Driver]:
    with neo4j.GraphDatabase.driver(target.url, auth=AUTH) as drv:
        yield drv


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as llm:
        yield llm


@pytest.fixture(scope="module")
def stored_types(driver: neo4j.Driver, target: Target) -> dict[str, dict[str, str]]:
    """label or relationship type -> property -> the Neo4j type name of a stored value."""
    out: dict[str, dict[str, str]] = {}
    for label, props in target.schema["nodes"].items():
        out[label] = {p: _stored_type(driver, f"(x:`{label}`)", p) for p in props}
    for rel in target.schema["relationships"]:
        for p in rel.get("properties", ()):
            pattern = f"(:`{rel['start']}`)-[x:`{rel['type']}`]->(:`{rel['end']}`)"
            out.setdefault(rel["type"], {})[p] = _stored_type(driver, pattern, p)
    return out


def _stored_type(driver: neo4j.Driver, pattern: str, prop: str) -> str:
    query = f"MATCH {pattern} WHERE x.`{prop}` IS NOT NULL RETURN x.`{prop}` AS v LIMIT 1"
    value = driver.execute_query(query).records[0]["v"]
    return next(name for kind, name in NEO4J_TYPES if isinstance(value, kind))


def node_count(driver: neo4j.Driver) -> int:
    return driver.execute_query("MATCH (n) RETURN count(n) AS n").records[0]["n"]


# ---------------------------------------------------------------------- schema texts


@dataclass
class LibrarySchema:
    nodes: dict[str, dict[str, str]]  # label -> property -> type
    rel_props: dict[str, dict[str, str]]  # relationship type -> property -> type
    patterns: set[tuple[str, str, str]]  # (start label, type, end label)


def parse_schema_text(text: str) -> LibrarySchema:
    """The text langchain, neo4j-graphrag and llama-index give their LLM: "Node properties:",
    `Label {prop: TYPE, …}` lines, "Relationship properties:", "The relationships:",
    `(:A)-[:T]->(:B)` lines."""
    nodes_part, rest = text.split("Relationship properties:", 1)
    rels_part, patterns_part = rest.split("The relationships:", 1)

    def entries(part: str) -> dict[str, dict[str, str]]:
        found = re.findall(r"^(\S+) \{(.*)\}$", part, re.M)
        return {name: dict(p.split(": ", 1) for p in ps.split(", ") if p) for name, ps in found}

    patterns = set(re.findall(r"\(:(\S+?)\)-\[:(\S+?)\]->\(:(\S+?)\)", patterns_part))
    return LibrarySchema(entries(nodes_part), entries(rels_part), patterns)


def parse_apoc_meta_schema(value: dict[str, Any]) -> LibrarySchema:
    """mcp-neo4j-cypher's schema: `apoc.meta.schema` output, one entry per label and type."""
    nodes, rel_props, patterns = {}, {}, set()
    for name, entry in value.items():
        props = {p: info.get("type") for p, info in entry.get("properties", {}).items()}
        if entry["type"] == "node":
            nodes[name] = props
            for rel_type, rel in entry.get("relationships", {}).items():
                for other in rel.get("labels", []):
                    out = rel.get("direction") == "out"
                    patterns.add((name, rel_type, other) if out else (other, rel_type, name))
        elif props:
            rel_props[name] = props
    return LibrarySchema(nodes, rel_props, patterns)


def assert_same_schema(
    found: LibrarySchema, target: Target, stored_types: dict[str, dict[str, str]]
) -> None:
    """What the library built through the proxy = what `query-guard schema` discovered, with
    each property typed as its stored values are."""
    expected = target.schema
    assert set(found.nodes) == set(expected["nodes"])
    assert found.patterns == {(r["start"], r["type"], r["end"]) for r in expected["relationships"]}
    for label, props in expected["nodes"].items():
        assert found.nodes[label] == {p: stored_types[label][p] for p in props}, label
    typed_rels = {r["type"] for r in expected["relationships"] if r.get("properties")}
    assert found.rel_props == {t: stored_types[t] for t in typed_rels}


# ---------------------------------------------------------------------- langchain


@pytest.fixture(scope="module")
def langchain_graph(target: Target) -> Iterator[Neo4jGraph]:
    graph = Neo4jGraph(target.url, *AUTH)  # refresh_schema=True: apoc.meta.data & co.
    yield graph
    graph.close()


def langchain_chain(graph: Neo4jGraph, llm: FakeLLM) -> GraphCypherQAChain:
    model = ChatOpenAI(model=llm.model, base_url=llm.base_url, api_key="not-used")
    return GraphCypherQAChain.from_llm(model, graph=graph, allow_dangerous_requests=True)


def test_langchain_neo4jgraph_schema(
    langchain_graph: Neo4jGraph, target: Target, stored_types: dict[str, dict[str, str]]
) -> None:
    assert_same_schema(parse_schema_text(langchain_graph.schema), target, stored_types)


@pytest.mark.parametrize("kind", CANNED)
def test_langchain_graph_cypher_qa_chain(
    langchain_graph: Neo4jGraph, fake_llm: FakeLLM, target: Target, kind: str
) -> None:
    fake_llm.reply, fake_llm.prompts = CANNED[kind], []
    chain = langchain_chain(langchain_graph, fake_llm)
    answer = chain.invoke({"query": QUESTION})["result"]
    # the fake model answers with the rows it was given: those of the correct query
    assert ast.literal_eval(answer) == target.rows[: chain.top_k]
    assert langchain_graph.schema in fake_llm.prompts[0]


def test_langchain_chain_detach_delete_is_refused(
    langchain_graph: Neo4jGraph, fake_llm: FakeLLM, driver: neo4j.Driver
) -> None:
    fake_llm.reply, before = DELETE_ALL, node_count(driver)
    with pytest.raises(neo4j.exceptions.ClientError) as refused:
        langchain_chain(langchain_graph, fake_llm).invoke({"query": "Delete everything"})
    assert refused.value.code == "Neo.ClientError.Security.Forbidden"
    assert node_count(driver) == before > 0


# ---------------------------------------------------------------------- neo4j-graphrag


def graphrag_retriever(driver: neo4j.Driver, llm: FakeLLM) -> Text2CypherRetriever:
    model = OpenAILLM(model_name=llm.model, base_url=llm.base_url, api_key="not-used")
    return Text2CypherRetriever(driver=driver, llm=model)  # dbms.components, get_schema


def test_graphrag_get_schema(
    driver: neo4j.Driver, target: Target, stored_types: dict[str, dict[str, str]]
) -> None:
    assert_same_schema(parse_schema_text(get_schema(driver)), target, stored_types)


@pytest.mark.parametrize("kind", CANNED)
def test_graphrag_text2cypher_retriever(
    driver: neo4j.Driver, fake_llm: FakeLLM, target: Target, kind: str
) -> None:
    retriever = graphrag_retriever(driver, fake_llm)
    fake_llm.reply, fake_llm.prompts = CANNED[kind], []
    result = retriever.search(query_text=QUESTION)  # EXPLAIN (must say 'r'), then the query
    assert [item.content for item in result.items] == [str(r) for r in target.records]
    assert retriever.neo4j_schema in fake_llm.prompts[0]


def test_graphrag_text2cypher_refuses_detach_delete_itself(
    driver: neo4j.Driver, fake_llm: FakeLLM
) -> None:
    retriever, before = graphrag_retriever(driver, fake_llm), node_count(driver)
    fake_llm.reply = DELETE_ALL
    # EXPLAIN answers Neo4j's type for it (it reads and writes: 'rw'); the library refuses
    with pytest.raises(Text2CypherRetrievalError, match=r"non-read-only .*query_type='rw'"):
        retriever.search(query_text="Delete everything")
    assert node_count(driver) == before > 0


# ---------------------------------------------------------------------- llama-index


@pytest.fixture(scope="module")
def llama_store(
    target: Target, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Neo4jPropertyGraphStore]:
    """The store with its defaults; create_indexes=True sends `CREATE CONSTRAINT IF NOT
    EXISTS`, which a read-only proxy acknowledges when told to."""
    if LLAMA:
        pytest.skip(LLAMA)
    tmp = tmp_path_factory.mktemp(f"compat-llama-{target.name}")
    compat = {"compat": {"schema_statements": "acknowledge"}}
    with start_proxy(target.backend, tmp, **compat) as proxy:
        url = f"bolt://{proxy.address}"
        store = Neo4jPropertyGraphStore(username=AUTH[0], password=AUTH[1], url=url)
        yield store
        store.close()


def test_llama_index_property_graph_store_schema(
    llama_store: Neo4jPropertyGraphStore, target: Target, stored_types: dict[str, dict[str, str]]
) -> None:
    found = parse_schema_text(llama_store.get_schema_str())
    # llama-index refines apoc.meta.data's types from the sampled values: a STRING with a value
    # of 52+ characters becomes TEXT, a long LIST an EMBEDDING
    refined = {"TEXT": "STRING", "EMBEDDING": "LIST"}
    for props in (*found.nodes.values(), *found.rel_props.values()):
        props.update({p: refined.get(t, t) for p, t in props.items()})
    assert_same_schema(found, target, stored_types)


@pytest.mark.parametrize("kind", CANNED)
def test_llama_index_text_to_cypher_retriever(
    llama_store: Neo4jPropertyGraphStore, fake_llm: FakeLLM, target: Target, kind: str
) -> None:
    model = LlamaOpenAI(model=fake_llm.model, api_base=fake_llm.base_url, api_key="not-used")
    fake_llm.reply = CANNED[kind]
    (found,) = TextToCypherRetriever(llama_store, llm=model).retrieve(QUESTION)
    _, response = found.node.get_content().split("Cypher Response:\n", 1)
    assert ast.literal_eval(response) == target.rows


def test_llama_index_detach_delete_is_refused(
    llama_store: Neo4jPropertyGraphStore, fake_llm: FakeLLM, driver: neo4j.Driver
) -> None:
    model = LlamaOpenAI(model=fake_llm.model, api_base=fake_llm.base_url, api_key="not-used")
    fake_llm.reply, before = DELETE_ALL, node_count(driver)
    with pytest.raises(neo4j.exceptions.ClientError) as refused:
        TextToCypherRetriever(llama_store, llm=model).retrieve("Delete everything")
    assert refused.value.code == "Neo.ClientError.Security.Forbidden"
    assert node_count(driver) == before > 0


# ---------------------------------------------------------------------- mcp-neo4j-cypher


@dataclass
class McpRun:
    results: dict[str, Any]  # call name -> CallToolResult
    nodes_before: int
    nodes_after: int


@pytest.fixture(scope="module")
def mcp_run(target: Target, driver: neo4j.Driver) -> McpRun:
    """One session with the `mcp-neo4j-cypher` server (its console script, default settings),
    driven over stdio by the `mcp` SDK client, as an agent host does."""
    calls = {
        "schema": ("get_neo4j_schema", {}),
        "read": ("read_neo4j_cypher", {"query": BY_NAME, "params": {"name": "Tom Hanks"}}),
        "read_reversed": (
            "read_neo4j_cypher",
            {"query": BY_NAME.replace("-[:ACTED_IN]->", "<-[:ACTED_IN]-"),
             "params": {"name": "Tom Hanks"}},
        ),
        "write": ("write_neo4j_cypher", {"query": DELETE_ALL}),
        "read_delete": ("read_neo4j_cypher", {"query": DELETE_ALL}),
    }  # fmt: skip
    env = {**os.environ, "NEO4J_URI": target.url, "NEO4J_USERNAME": AUTH[0]}
    env["NEO4J_PASSWORD"] = AUTH[1]
    server = StdioServerParameters(
        command=str(Path(sys.executable).with_name("mcp-neo4j-cypher")), env=env
    )

    async def session() -> dict[str, Any]:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return {key: await client.call_tool(name, args) for key, (name, args) in calls.items()}

    before = node_count(driver)
    results = asyncio.run(session())
    return McpRun(results, before, node_count(driver))


def _text(result: Any) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def test_mcp_get_neo4j_schema(
    mcp_run: McpRun, target: Target, stored_types: dict[str, dict[str, str]]
) -> None:
    result = mcp_run.results["schema"]
    assert not result.isError, _text(result)
    assert_same_schema(parse_apoc_meta_schema(json.loads(_text(result))), target, stored_types)


@pytest.mark.parametrize("call", ["read", "read_reversed"])
def test_mcp_read_neo4j_cypher_with_parameters(mcp_run: McpRun, target: Target, call: str) -> None:
    result = mcp_run.results[call]
    assert not result.isError, _text(result)
    assert json.loads(_text(result)) == target.rows


def test_mcp_write_neo4j_cypher_is_refused(mcp_run: McpRun) -> None:
    for call in ("write", "read_delete"):
        result = mcp_run.results[call]
        assert result.isError, f"{call}: {_text(result)}"
    assert "Neo.ClientError.Security.Forbidden" in _text(mcp_run.results["write"])
    assert mcp_run.nodes_after == mcp_run.nodes_before > 0
