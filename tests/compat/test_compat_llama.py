"""llama-index's Neo4j property-graph store and its `TextToCypherRetriever`, unmodified, pointed
at `query-guard` in front of the embedded FalkorDB and of ArcadeDB (issue 9; the other libraries:
tests/compat/test_compat_libraries.py). llama-index-graph-stores-neo4j (0.8, the newest) requires
neo4j<6 while neo4j-graphrag requires neo4j>=6.3, so these libraries live in their own extra
`compat-llama` and `.ci/run` runs this file in a second venv (`.venv-llama`, driver 5.x);
without the extra it skips. Select with `pytest -m compat`.

The store's constructor sends `CREATE CONSTRAINT … IF NOT EXISTS` (twice) and `CREATE VECTOR
INDEX … IF NOT EXISTS` unless `create_indexes=False`, outside any try: with the proxy's default
`[compat] schema_statements = "error"` it fails with the proxy's read-only message, so a
llama-index user sets `"acknowledge"` or passes `create_indexes=False`; both are tested.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import neo4j
import pytest

try:  # the compat-llama extra: its neo4j<6 pin keeps it out of the test extra
    from llama_index.core.indices.property_graph import TextToCypherRetriever
    from llama_index.graph_stores.neo4j import Neo4jPropertyGraphStore
    from llama_index.llms.openai import OpenAI as LlamaOpenAI
except ImportError as exc:
    pytest.skip(
        f"llama-index-graph-stores-neo4j is not installed (extra compat-llama): {exc}",
        allow_module_level=True,
    )

from tests.compat_support import (
    AUTH,
    CANNED,
    DELETE_ALL,
    QUESTION,
    Target,
    assert_same_schema,
    node_count,
    parse_schema_text,
    start_proxy,
)
from tests.fake_llm import FakeLLM

pytest_plugins = ("tests.compat_support",)  # its fixtures: target, driver, fake_llm, …
pytestmark = pytest.mark.compat


def open_store(proxy_address: str, **kwargs: object) -> Neo4jPropertyGraphStore:
    url = f"bolt://{proxy_address}"
    return Neo4jPropertyGraphStore(username=AUTH[0], password=AUTH[1], url=url, **kwargs)


@pytest.fixture(scope="module")
def llama_store(
    target: Target, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Neo4jPropertyGraphStore]:
    """The store with its defaults; create_indexes=True sends `CREATE CONSTRAINT IF NOT
    EXISTS`, which a read-only proxy acknowledges when told to."""
    tmp = tmp_path_factory.mktemp(f"compat-llama-{target.name}")
    compat = {"compat": {"schema_statements": "acknowledge"}}
    with start_proxy(target.backend, tmp, **compat) as proxy:
        store = open_store(proxy.address)
        yield store
        store.close()


def llama_model(llm: FakeLLM) -> LlamaOpenAI:
    return LlamaOpenAI(model=llm.model, api_base=llm.base_url, api_key="not-used")


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
    fake_llm.reply, fake_llm.prompts = CANNED[kind], []
    (found,) = TextToCypherRetriever(llama_store, llm=llama_model(fake_llm)).retrieve(QUESTION)
    _, response = found.node.get_content().split("Cypher Response:\n", 1)
    assert ast.literal_eval(response) == target.rows
    assert llama_store.get_schema_str() in fake_llm.prompts[0]


def test_llama_index_detach_delete_is_refused(
    llama_store: Neo4jPropertyGraphStore, fake_llm: FakeLLM, driver: neo4j.Driver
) -> None:
    fake_llm.reply, before = DELETE_ALL, node_count(driver)
    with pytest.raises(neo4j.exceptions.ClientError) as refused:
        TextToCypherRetriever(llama_store, llm=llama_model(fake_llm)).retrieve("Delete everything")
    assert refused.value.code == "Neo.ClientError.Security.Forbidden"
    assert node_count(driver) == before > 0


def test_llama_index_store_with_the_default_schema_statements(
    target: Target, tmp_path: Path, stored_types: dict[str, dict[str, str]]
) -> None:
    """Default `[compat] schema_statements = "error"`: the store's default constructor is
    refused at its first `CREATE CONSTRAINT` with a message naming the setting; with
    `create_indexes=False` it starts and reads the same schema."""
    with start_proxy(target.backend, tmp_path) as proxy:
        with pytest.raises(neo4j.exceptions.ClientError) as refused:
            open_store(proxy.address)
        assert refused.value.code == "Neo.ClientError.Security.Forbidden"
        assert "schema_statements" in (refused.value.message or "")
        store = open_store(proxy.address, create_indexes=False)
        try:
            found = parse_schema_text(store.get_schema_str())
        finally:
            store.close()
    for props in (*found.nodes.values(), *found.rel_props.values()):
        props.update({p: {"TEXT": "STRING"}.get(t, t) for p, t in props.items()})
    assert_same_schema(found, target, stored_types)
