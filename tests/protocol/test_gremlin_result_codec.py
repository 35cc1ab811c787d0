"""What leaves the Gremlin front reaches a gremlinpython client as the same value: results of
any width and shape through both serializers, and bindings the embedded engine cannot take as
parameters printed as literals that evaluate back to themselves."""

from __future__ import annotations

import json
import uuid
from typing import Any

import graphersal as gs
from gremlin_python.driver.serializer import GraphBinarySerializersV1, GraphSONSerializersV3d0
from gremlin_python.process.traversal import T
from gremlin_python.structure.graph import Path, Vertex
from hypothesis import given
from hypothesis import strategies as st

from query_guard.backends.graphersal_json import JsonVertex, from_json
from query_guard.gremlin.graphersal_dialect import value
from query_guard.gremlin.result_shape import PATH, SET, element_map, reshape
from query_guard.wire import gremlin as wire

GRAPH = gs.Graph.tinkerpop_modern()
READ = gs.AccessPolicy.read_only()

scalars = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=12)
    | st.floats(allow_nan=False, allow_infinity=False)
)  # fmt: skip
hashable = st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(hashable, inner, max_size=4)
    | st.dictionaries(st.tuples(hashable, hashable), inner, max_size=3),
    max_leaves=12,
)


def _client_side(data: Any, mime: str) -> Any:
    frame = wire.encode_response(mime, uuid.uuid4(), wire.SUCCESS, data)
    serializer = GraphBinarySerializersV1() if mime == wire.GRAPHBINARY else (
        GraphSONSerializersV3d0()
    )
    return serializer.deserialize_message(frame)["result"]["data"]


@given(values)
def test_results_reach_the_client_unchanged(data: Any) -> None:
    for mime in (wire.GRAPHBINARY, wire.GRAPHSON3):
        assert _client_side([data], mime) == [data]


def test_paths_and_tokens_reach_the_client_as_such() -> None:
    path = Path([set(), set()], [Vertex(1, "person"), "josh"])
    mapped = {T.id: 1, T.label: "person", "name": "marko"}
    for mime in (wire.GRAPHBINARY, wire.GRAPHSON3):
        got = _client_side([path, mapped], mime)
        assert isinstance(got[0], Path) and got[0].objects == path.objects
        assert got[1] == mapped


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**62), 2**62) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_inlined_bindings_evaluate_to_themselves(v: Any) -> None:
    assert GRAPH.execute(f"g.inject({value(v)}).to_list()", policy=READ) == [v]


def test_shapes() -> None:
    assert reshape(["a", "b"], PATH) == Path([set(), set()], ["a", "b"])
    assert reshape(["a", "a"], SET) == {"a"}
    assert reshape([{"k": 1}], SET) == [{"k": 1}]  # unhashable members stay a list
    assert element_map({"id": "1", "label": "person", "name": "marko"}, int) == {
        T.id: 1, T.label: "person", "name": "marko",
    }  # fmt: skip
    # a valueMap property called "id" keeps its name (its value is a list)
    assert element_map({"id": ["x"]}) == {"id": ["x"]}


def test_graphersal_json_maps_with_element_and_list_keys() -> None:
    text = GRAPH.execute(
        'g.V().has("name", "marko").out().group().by(__.in("created").fold())'
        ".by(__.count()).to_json().to_string()",
        policy=READ,
    )
    (groups,) = [from_json(v) for v in json.loads(text)]
    creators = {tuple(sorted(v.id for v in key)): count for key, count in groups.items()}
    assert all(isinstance(v, JsonVertex) for key in groups for v in key)
    assert creators == {(): 2, ("1", "4", "6"): 1}  # vadas and josh created nothing; lop
