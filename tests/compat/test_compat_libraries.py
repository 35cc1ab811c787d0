"""The LLM-app libraries people point at Neo4j, unmodified and with their default arguments,
pointed at `query-guard` instead (issue 9): langchain-neo4j, neo4j-graphrag and mcp-neo4j-cypher
(llama-index: tests/compat/test_compat_llama.py), each in front of the embedded FalkorDB and of
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
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import neo4j
import pytest
from langchain_neo4j import GraphCypherQAChain, Neo4jGraph
from langchain_openai import ChatOpenAI
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from neo4j_graphrag.exceptions import Text2CypherRetrievalError
from neo4j_graphrag.llm import OpenAILLM
from neo4j_graphrag.retrievers import Text2CypherRetriever
from neo4j_graphrag.schema import get_schema

from tests.compat_support import (
    AUTH,
    BY_NAME,
    CANNED,
    DELETE_ALL,
    QUESTION,
    LibrarySchema,
    Target,
    assert_same_schema,
    node_count,
    parse_schema_text,
)
from tests.fake_llm import FakeLLM

pytest_plugins = ("tests.compat_support",)  # its fixtures: target, driver, fake_llm, …
pytestmark = pytest.mark.compat


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


def test_graphrag_text2cypher_retriever_schema(
    driver: neo4j.Driver, fake_llm: FakeLLM, target: Target, stored_types: dict[str, dict[str, str]]
) -> None:
    """The schema the retriever builds for itself at construction (what its prompt carries)."""
    retriever = graphrag_retriever(driver, fake_llm)
    assert_same_schema(parse_schema_text(retriever.neo4j_schema), target, stored_types)


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
    # EXPLAIN answers Neo4j's type for it (a write returning no records: 'w'); the library
    # refuses it
    with pytest.raises(Text2CypherRetrievalError, match=r"non-read-only .*query_type='w'"):
        retriever.search(query_text="Delete everything")
    assert node_count(driver) == before > 0


# ---------------------------------------------------------------------- mcp-neo4j-cypher


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
