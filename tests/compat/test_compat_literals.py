"""The literal printer behind proxy-answered procedures: every value it prints parses back, with
the guard's own parser, to the same value (hypothesis), and FalkorDB evaluates it to the same
value too."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from query_guard.backend import collect
from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.compat.literals import literal
from query_guard.cypher import ast
from query_guard.cypher.query import CypherQuery

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
names = st.text(min_size=1)  # Cypher has no empty name
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(names, inner, max_size=4),
    max_leaves=12,
)


def evaluate(node: ast.Expr) -> Any:
    """The value of a literal expression as the guard parsed it."""
    if isinstance(node, ast.Literal):
        return node.value
    if isinstance(node, ast.UnaryOp) and node.op == "-":
        return -evaluate(node.operand)
    if isinstance(node, ast.ListLiteral):
        return [evaluate(i) for i in node.items]
    if isinstance(node, ast.MapLiteral):
        return {key: evaluate(value) for key, _, value in node.entries}
    raise AssertionError(f"not a literal: {node!r}")


def parsed_value(text: str) -> Any:
    single = CypherQuery.parse(f"RETURN {text} AS v").script.statements[0]
    assert isinstance(single, ast.SingleQuery)
    ret = single.clauses[-1]
    assert isinstance(ret, ast.Return)
    return evaluate(ret.items[0].expr)


@given(values)
def test_every_printed_literal_parses_back_to_its_value(value: Any) -> None:
    assert parsed_value(literal(value)) == value


def test_falkordb_evaluates_printed_literals(movies_url: str) -> None:
    samples: list[Any] = [
        "it's a \\ back'slash \"quoted\"",
        {"type": "node", "count": 3, "()-[:T]->()": [1, 2.5, None, True]},
        ["ünïcødé", "tab\there", -7, -0.5, {"nested": {"deep": []}}],
        {"key with spaces": "x"},
    ]

    async def run() -> list[Any]:
        backend = FalkorDBBackend(movies_url)
        await backend.start()
        try:
            return [
                (await collect(await backend.run(f"RETURN {literal(v)} AS v", {})))[0][0]
                for v in samples
            ]
        finally:
            await backend.close()

    assert asyncio.run(run()) == samples
