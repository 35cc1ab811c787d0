"""TinkerPop's feature scenarios (corpora/gremlin/tinkerpop_traversals.jsonl) run through the
Gremlin front with the real gremlinpython client: one `query-guard serve` (ProxyThread) serving
each test graph as its own traversal source (`[backend] gremlin_graphs`) on the embedded
graphersal, the guard configured not to change what the features expect (no injected limit,
full scans allowed). A scenario travels as bytecode when its text translates (`to_bytecode`,
exactly what a gremlinpython traversal sends), else as a script with bindings.
`run_in_process` runs the same scenarios on graphersal in-process, what the front is measured
against. Shared by tests/e2e/test_tinkerpop_front.py and benchmarks/tinkerpop_front.py.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gremlin_python.driver.client import Client
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.driver.serializer import GraphBinarySerializersV1
from gremlin_python.process.traversal import Bytecode, Traverser

from query_guard.backends.graphersal import GraphersalBackend
from query_guard.config.load import parse_config
from query_guard.gremlin.bytecode import to_bytecode
from query_guard.gremlin.parser import parse_traversal
from query_guard.runner import ProxyThread
from tests.gherkin import GraphIndex, check, to_value

GRAPH_FILES = {
    "modern": "tinkerpop-modern.json",
    "crew": "tinkerpop-crew.json",
    "sink": "tinkerpop-sink.json",
    "grateful": "grateful-dead.json",
}
_ALGORITHMS = re.compile(
    r"\b(pageRank|peerPressure|connectedComponent|shortestPath|program|withComputer)\s*\("
)
_MUTATIONS = re.compile(r"\b(addV|addE|mergeV|mergeE|property|drop|io)\s*\(")


@dataclass(frozen=True)
class Outcome:
    id: str
    graph: str
    passed: bool
    via: str  # "bytecode" | "script"
    detail: str = ""


def scenario_id(row: dict[str, Any]) -> str:
    return f"{row['file'].rsplit('/', 1)[-1].removesuffix('.feature')}/{row['scenario']}"


def exclusion(row: dict[str, Any]) -> str | None:
    """Why a scenario is outside the read-only suite (None: it is in)."""
    text = row["text"]
    if row["graph"] not in GRAPH_FILES:
        return "empty graph"
    if any(s["step"].startswith("the traversal will raise") for s in row["expect"]):
        return "error expected"
    if "withStrategies" in text or "withoutStrategies" in text:
        return "strategies"
    if re.search(r"\bmatch\s*\(", text):
        return "match()"
    if _ALGORITHMS.search(text):
        return "graph algorithms"
    if row["initializer"] or row["graph_checks"] or _MUTATIONS.search(text):
        return "mutations"
    return None


@contextmanager
def front_clients(
    graphs: Path, serializer: type = GraphBinarySerializersV1
) -> Iterator[dict[str, Reconnecting]]:
    """One proxy serving every test graph as its own traversal source (`[backend]
    gremlin_graphs`), and a gremlinpython Client per graph naming it."""
    with ExitStack() as stack:
        data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tp-front-")))
        config = parse_config(
            {
                "server": {"bolt": "", "gremlin": "127.0.0.1:0", "data_dir": str(data)},
                "backend": {
                    "gremlin_graphs": {n: str(graphs / f) for n, f in GRAPH_FILES.items()}
                },
                "guard": {"default_limit": 0},
                "rules": {"gremlin_scans": {"block": False}},
                "audit": {"path": str(data / "audit.jsonl")},
            }
        )
        proxy = stack.enter_context(ProxyThread(config))
        url = f"ws://127.0.0.1:{proxy.server.gremlin.port}/gremlin"
        yield {
            name: stack.enter_context(Reconnecting(url, serializer, name)) for name in GRAPH_FILES
        }


class Reconnecting:
    """A gremlinpython Client that is replaced when its connection broke, so one scenario
    that kills a connection shows as its own failure, not as everyone's after it."""

    def __init__(
        self, url: str, serializer: type = GraphBinarySerializersV1, source: str = "g"
    ) -> None:
        self.url = url
        self.serializer = serializer
        self.source = source
        self.client = self._new()

    def _new(self) -> Client:
        return Client(self.url, self.source, message_serializer=self.serializer())

    def submit(self, message: Bytecode | str, bindings: dict[str, Any]) -> list[Any]:
        try:
            if isinstance(message, str):
                return list(self.client.submit(message, bindings).all().result())
            return list(self.client.submit(message).all().result())
        except GremlinServerError:
            raise
        except Exception:
            self.client.close()
            self.client = self._new()
            raise

    def __enter__(self) -> Reconnecting:
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()


def _traversal(row: dict[str, Any], graph: GraphIndex) -> tuple[str, dict[str, Any]]:
    """The scenario's text (its side effects as `withSideEffect`) and bindings."""
    bindings = {p["name"]: to_value(p["value"], graph) for p in row["params"]}
    text = row["text"]
    for effect in row["side_effects"]:
        name = f"se_{effect['name']}"
        bindings[name] = to_value(effect["value"], graph)
        text = f"g.withSideEffect({_quote(effect['name'])}, {name})" + text[1:]
    return text, bindings


def _judge(row: dict[str, Any], sid: str, via: str, raw: list[Any], graph: GraphIndex) -> Outcome:
    results = _expand(raw)
    if row["action"] == "iterated next":
        results = _next(results)
    for step in row["expect"]:
        problem = check(step["step"], step.get("rows", []), results, graph)
        if problem is not None:
            return Outcome(sid, row["graph"], False, via, problem)
    return Outcome(sid, row["graph"], True, via)


def run_scenario(row: dict[str, Any], client: Reconnecting, graph: GraphIndex) -> Outcome:
    sid = scenario_id(row)
    text, bindings = _traversal(row, graph)
    message: Bytecode | str
    try:
        message, via = to_bytecode(parse_traversal(text), bindings), "bytecode"
    except Exception:
        message, via = text, "script"
    try:
        raw = client.submit(message, bindings)
    except Exception as exc:
        return Outcome(sid, row["graph"], False, via, f"error: {str(exc)[:300]}")
    return _judge(row, sid, via, raw, graph)


def _quote(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _expand(raw: list[Any]) -> list[Any]:
    """Traversers (bytecode answers) as their objects, repeated by their bulk."""
    out: list[Any] = []
    for r in raw:
        if isinstance(r, Traverser):
            out += [r.object] * int(r.bulk or 1)
        else:
            out.append(r)
    return out


def _next(results: list[Any]) -> list[Any]:
    """`next()`: the first result; a collection is compared by its members (as the feature
    runner iterates it)."""
    if not results:
        return []
    first = results[0]
    objects = getattr(first, "objects", None)
    if isinstance(objects, list):
        return objects
    if isinstance(first, list | set | tuple):
        return list(first)
    return [first]


def run_suite(
    rows: list[dict[str, Any]], graphs: Path, serializer: type = GraphBinarySerializersV1
) -> list[Outcome]:
    """Every in-suite scenario of `rows`, through the front (GraphBinary unless told)."""
    indexes = {name: GraphIndex.load(graphs / file) for name, file in GRAPH_FILES.items()}
    selected = [r for r in rows if exclusion(r) is None]
    outcomes = []
    with front_clients(graphs, serializer) as clients:
        for row in selected:
            name = row["graph"]
            outcomes.append(run_scenario(row, clients[name], indexes[name]))
    return outcomes


def run_in_process(rows: list[dict[str, Any]], graphs: Path) -> list[Outcome]:
    """Every in-suite scenario on graphersal in-process (the embedded backend's own `submit`,
    no guard, no wire): what the front is measured against."""
    return asyncio.run(_in_process([r for r in rows if exclusion(r) is None], graphs))


async def _in_process(selected: list[dict[str, Any]], graphs: Path) -> list[Outcome]:
    outcomes = []
    for name, file in GRAPH_FILES.items():
        index = GraphIndex.load(graphs / file)
        backend = GraphersalBackend.open(None, [str(graphs / file)])
        try:
            for row in (r for r in selected if r["graph"] == name):
                text, bindings = _traversal(row, index)
                try:
                    raw = await backend.submit(parse_traversal(text), bindings)
                except Exception as exc:
                    sid = scenario_id(row)
                    outcomes.append(Outcome(sid, name, False, "in-process", f"error: {exc}"))
                    continue
                outcomes.append(_judge(row, scenario_id(row), "in-process", raw, index))
        finally:
            await backend.close()
    return outcomes
