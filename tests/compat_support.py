"""What the compat suites share (tests/compat/test_compat_libraries.py,
tests/compat/test_compat_llama.py):
the movie graph behind a proxy on the embedded FalkorDB and on ArcadeDB, what `query-guard
schema` discovers for it, the canned Cypher a fake model writes, and the parser of the schema
text langchain, neo4j-graphrag and llama-index give their LLM. Only `neo4j` and the project
are imported here: the llama-index suite runs in a venv with the 5.x driver its store pins.

Test modules load its fixtures with `pytest_plugins = ("tests.compat_support",)`; having been
imported before that, it cannot be assertion-rewritten (PYTEST_DONT_REWRITE), so its asserts
say what differs themselves.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import neo4j
import pytest

from query_guard.cli.main import main as query_guard
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from tests.fake_llm import FakeLLM

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


def assert_same_schema(
    found: LibrarySchema, target: Target, stored_types: dict[str, dict[str, str]]
) -> None:
    """What the library built through the proxy = what `query-guard schema` discovered, with
    each property typed as its stored values are."""
    expected = target.schema
    _same("labels", set(found.nodes), set(expected["nodes"]))
    patterns = {(r["start"], r["type"], r["end"]) for r in expected["relationships"]}
    _same("endpoint patterns", found.patterns, patterns)
    for label, props in expected["nodes"].items():
        _same(f"{label} properties", found.nodes[label], {p: stored_types[label][p] for p in props})
    typed_rels = {r["type"] for r in expected["relationships"] if r.get("properties")}
    _same("relationship properties", found.rel_props, {t: stored_types[t] for t in typed_rels})


def _same(what: str, found: Any, expected: Any) -> None:
    assert found == expected, f"{what}: the library has {found!r}, query-guard schema {expected!r}"
