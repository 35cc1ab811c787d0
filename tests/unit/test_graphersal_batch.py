"""Quick traversals of one event-loop turn share one graphersal script, and each gets exactly
what it gets alone: its own values, its own error."""

from __future__ import annotations

import asyncio
from typing import Any

import graphersal as gs
import pytest

from query_guard.backends import graphersal, graphersal_batch
from query_guard.backends.graphersal import GraphersalBackend, GremlinBackendError
from query_guard.backends.graphersal_batch import COMPANY, PROBE, LoopBatch, batchable
from query_guard.gremlin.parser import parse_traversal

TRAVERSALS = [
    ("g.V().has('name', who).values('age')", {"who": "marko"}),
    ("g.V().has('name', who).values('age')", {"who": "josh"}),
    ("g.V().hasLabel('software').values('name')", {}),
    ("g.V().has('name', who).out('knows').values('name')", {"who": "marko"}),
]


class CountingGraph:
    """graphersal's graph, counting the scripts it is given."""

    def __init__(self) -> None:
        self.graph = gs.Graph.tinkerpop_modern()
        self.scripts: list[str] = []

    def execute(self, script: str, params: Any = None, **kw: Any) -> Any:
        self.scripts.append(script)
        return self.graph.execute(script, params, **kw)


async def _submit_all(backend: GraphersalBackend, items: list[tuple[str, dict]]) -> list[Any]:
    parsed = [(parse_traversal(text), bindings) for text, bindings in items]
    return await asyncio.gather(*(backend.submit(t, b) for t, b in parsed), return_exceptions=True)


@pytest.fixture(autouse=True)
def _every_run_quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the machine's load: a traversal that ran once counts as quick."""
    monkeypatch.setattr(graphersal, "THREAD_QUICK", 60.0)
    monkeypatch.setattr(graphersal, "INLINE_BELOW", 60.0)
    monkeypatch.setattr(graphersal_batch, "COMPANY", 1000)  # always wait for company


def _backend() -> tuple[GraphersalBackend, CountingGraph]:
    counting = CountingGraph()
    backend = GraphersalBackend(counting.graph, read_only=True)
    backend.graph = counting  # type: ignore[assignment]
    return backend, counting


def test_one_loop_turns_quick_traversals_run_as_one_script_with_their_own_results() -> None:
    async def main() -> tuple[list[Any], list[Any], int]:
        backend, counting = _backend()
        alone = [await _submit_all(backend, [item]) for item in TRAVERSALS]  # known quick now
        counting.scripts.clear()
        together = await _submit_all(backend, TRAVERSALS)
        await backend.close()
        return [a[0] for a in alone], together, len(counting.scripts)

    alone, together, scripts = asyncio.run(main())
    assert together == alone
    assert alone[0] == [29] and sorted(alone[3]) == ["josh", "vadas"]
    assert scripts == 1


def test_a_failing_traversal_fails_alone_and_the_others_still_answer() -> None:
    limited = "g.V().limit(n).values('name')"
    items = [TRAVERSALS[0], (limited, {"n": "not a number"}), TRAVERSALS[2]]

    async def main() -> tuple[list[Any], list[Any], list[str]]:
        backend, counting = _backend()
        for item in [*items, (limited, {"n": 1})] * 2:  # each known quick (the failing one too)
            await _submit_all(backend, [item])
        alone = [(await _submit_all(backend, [item]))[0] for item in items]
        counting.scripts.clear()
        together = await _submit_all(backend, items)
        await backend.close()
        return alone, together, counting.scripts

    alone, together, scripts = asyncio.run(main())
    assert isinstance(alone[1], GremlinBackendError)
    assert together[0] == alone[0] == [29] and together[2] == alone[2]
    assert isinstance(together[1], GremlinBackendError)
    assert str(together[1]) == str(alone[1])
    assert len(scripts) == 4  # the batch, then each traversal alone


@pytest.mark.parametrize(
    ("script", "params"),
    [
        ("g.V(params).to_list()", {}),  # graphersal's map of every binding of the script
        ("g.V(__qg0_who).to_list()", {}),  # another block's renamed binding
        ("g.V(who).to_list()", {"__qg0_who": 1}),
        ("g.V(who).to_list()", {"not an identifier": 1}),
        ("g.V(who).to_list()", {"who": 1, "g": "x"}),  # `let g = …` would replace the source
    ],
)
def test_a_traversal_that_could_reach_another_blocks_bindings_is_not_batched(
    script: str, params: dict[str, Any]
) -> None:
    assert not batchable(script, params)
    assert batchable("g.V(who).to_list()", {"who": "marko"})


def test_a_lone_client_stops_waiting_for_company_and_still_looks_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(graphersal_batch, "COMPANY", COMPANY)

    async def main() -> list[bool]:
        batch = LoopBatch(lambda script, params: None, 20)
        waited = []
        for _ in range(COMPANY + 2 * PROBE):
            future = batch.join("V().to_list()", {}, lambda: [1])
            waited.append(not future.done())
            assert await future == ([1], None)
        return waited

    waited = asyncio.run(main())
    assert all(waited[:COMPANY])  # at first every traversal waits a turn for others
    rest = waited[COMPANY:]
    assert rest.count(True) == 2 and not rest[0]  # then only every PROBE-th
