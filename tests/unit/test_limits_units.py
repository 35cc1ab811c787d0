"""Resource limits below the Bolt front: the bracket scan that runs before parsing, the
PackStream value budget, fail-closed rules, byte-bounded caches, the `[limits]` section."""

from __future__ import annotations

import asyncio
import tracemalloc
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from query_guard.backends.bolt_relay import BoltRelayBackend
from query_guard.backends.bolt_upstream import Response
from query_guard.build import build_guard, default_languages
from query_guard.config.load import parse_config
from query_guard.errors import ConfigError
from query_guard.guard.hookspecs import hookimpl
from query_guard.guard.pipeline import Guard
from query_guard.guard.registry import build_plugin_manager
from query_guard.model import Action, Severity
from query_guard.repair.repairer import build_repairer
from query_guard.rules.resource_limits import check_text, nesting
from query_guard.schema.context import GuardContext
from query_guard.wire import bolt_messages as m
from query_guard.wire.bolt_values import ValueCodec
from query_guard.wire.packstream import TooManyValues, Unpacker, packb

# ---------------------------------------------------------------- the bracket scan

# Text that never counts: string literals, quoted names and comments holding brackets and
# keywords, names that merely contain them.
_NOISE = st.sampled_from(
    [
        "'((['", '"{[("', "'it\\'s ('", "`a(b`", "// ((([ NOT\n", "/* {{ CASE */", " x ",
        " n.case ", " not_a ", " $end ", " 1 ", " a - b ", " x IS NOT NULL ",
    ]
)  # fmt: skip


@st.composite
def nested_text(draw: st.DrawFn, depth: int = 0) -> tuple[str, int]:
    """(text, its true expression nesting), built as a tree of brackets, `CASE … END`,
    prefix-operator chains and noise."""
    parts: list[str] = []
    deepest = 0
    for _ in range(draw(st.integers(0, 3 if depth < 6 else 0))):
        if draw(st.booleans()):
            parts.append(draw(_NOISE))
            continue
        nots = draw(st.integers(0, 2))  # a chain of NOTs carried into the group
        opener, closer = draw(
            st.sampled_from([("(", ")"), ("[", "]"), ("{", "}"), (" CASE WHEN ", " END ")])
        )
        inner, inner_depth = draw(nested_text(depth + 1))
        parts.append(" NOT" * nots + opener + inner + closer)
        deepest = max(deepest, nots + inner_depth + 1, nots)
    return "".join(parts), deepest


@given(nested_text())
def test_nesting_is_the_bracket_depth_outside_strings_and_comments(case: tuple[str, int]) -> None:
    text, depth = case
    assert nesting(text)[0] == depth


@given(nested_text(), st.integers(1, 8))
def test_the_nesting_limit_blocks_exactly_what_is_deeper(case: tuple[str, int], limit: int) -> None:
    text, depth = case
    codes = [f.code for f in check_text(text, 0, limit)]
    assert codes == (["LIM.NESTING"] if depth > limit else [])


def test_query_size_counts_utf8_bytes() -> None:
    assert check_text("RETURN 'é'", 11, 0) == []  # 11 bytes
    assert [f.code for f in check_text("RETURN 'éé'", 11, 0)] == ["LIM.QUERY_SIZE"]


def test_a_deep_query_never_reaches_the_parser() -> None:
    guard = build_guard(entry_points=False)
    deep = "RETURN " + "(" * 5000 + "1" + ")" * 5000  # far beyond any parser's recursion
    verdict = guard.check(deep)
    assert verdict.action is Action.BLOCK and verdict.codes == ["LIM.NESTING"]


# ---------------------------------------------------------------- PackStream value budget

values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=30,
)


def count_values(value: Any) -> int:
    """Values inside `value` (map keys included), not counting `value` itself."""
    if isinstance(value, list):
        return len(value) + sum(count_values(v) for v in value)
    if isinstance(value, dict):
        return 2 * len(value) + sum(count_values(v) for v in value.values())
    return 0


@given(values, st.integers(1, 60))
def test_the_unpacker_reads_exactly_within_its_budget(value: Any, budget: int) -> None:
    data = packb(value)
    if count_values(value) <= budget:
        assert Unpacker(data, budget=budget).unpack() == value
    else:
        with pytest.raises(TooManyValues):
            Unpacker(data, budget=budget).unpack()


def test_megabytes_of_empty_maps_are_refused_without_building_them() -> None:
    """4 MB of empty maps (one byte each) would be 4 million dicts (~600 MB) in memory."""
    codec = ValueCodec(element_ids=True, utc=True)
    body = bytearray()
    m.encode_message(body, m.RUN, ["RETURN 1", {"maps": [{}] * 4_000_000}, {}], codec)
    frame = b"".join(m.Dechunker(len(body)).feed(bytes(body)))
    tracemalloc.start()
    try:
        request = m.decode_request(frame, codec, max_values=100_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert request.error is not None and "LIM.MESSAGE_SIZE" in request.error
    assert peak < 32 * 1024 * 1024, f"decoding peaked at {peak / 1e6:.0f} MB"


# ---------------------------------------------------------------- fail closed


class Crashing:
    """A rule that crashes the way a recursive rule does on a deep expression."""

    def __init__(self, name: str) -> None:
        self.name = name

    @hookimpl
    def guard_cypher(self, query: Any, ctx: GuardContext) -> list[Any]:
        raise RecursionError("maximum recursion depth exceeded")


@pytest.mark.parametrize("rule", ["read_only", "limits", "resource_limits", "gremlin_read_only"])
def test_a_crashed_security_or_limit_rule_blocks(rule: str) -> None:
    pm = build_plugin_manager(builtins=(), extra=[Crashing(rule)], entry_points=False)
    verdict = Guard(pm, GuardContext(), default_languages()).check("MATCH (m:Movie) RETURN m")
    assert verdict.action is Action.BLOCK
    (finding,) = verdict.findings
    assert finding.code == "GUARD.RULE_ERROR" and finding.severity is Severity.ERROR
    assert rule in finding.message


def test_a_crashed_advisory_rule_is_a_warning() -> None:
    pm = build_plugin_manager(builtins=(), extra=[Crashing("unknown_names")], entry_points=False)
    verdict = Guard(pm, GuardContext(), default_languages()).check("MATCH (m:Movie) RETURN m")
    assert verdict.action is Action.ALLOW
    assert [(f.code, f.severity) for f in verdict.findings] == [
        ("GUARD.RULE_ERROR", Severity.WARNING)
    ]


# ---------------------------------------------------------------- byte-bounded caches


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


CACHE_BYTES = 32 * 1024 * 1024


def test_1000_distinct_half_megabyte_queries_keep_memory_bounded() -> None:
    """The documented bound: RSS grows by at most `cache_bytes` for verdicts plus
    `cache_bytes` for parses plus 64 MB of allocator slack — here with the per-query size
    cut-off switched off, so big entries are cached and must be evicted by bytes. (Unbounded
    caches held ~1 GB after these queries: each verdict keeps the text and its rewrite.)"""
    limits = {"max_query_bytes": 1_000_000, "cache_bytes": CACHE_BYTES, "cache_max_query_bytes": 0}
    config = parse_config({"limits": limits})
    guard = build_guard(config, entry_points=False)
    repairer = build_repairer(guard, config)
    assert repairer is not None
    guard.warm_up()
    before = _rss()
    for i in range(1000):
        query = f"MATCH (m:Movie) // note {i} " + "x" * 500_000 + f"\nRETURN m.title AS t{i}"
        assert guard.check(query).action is Action.REWRITE  # LIMIT appended
        repairer.parse(query)
    grown = _rss() - before
    assert grown < 2 * CACHE_BYTES + 64 * 1024 * 1024, f"RSS grew {grown / 1e6:.0f} MB"


def test_long_queries_are_not_cached_by_default() -> None:
    guard = build_guard(entry_points=False)
    long_query = "MATCH (m:Movie) // " + "x" * 20_000 + "\nRETURN m.title"
    short_query = "MATCH (m:Movie) RETURN m.title"
    assert guard.check(long_query) is not guard.check(long_query)
    assert guard.check(short_query) is guard.check(short_query)


# ---------------------------------------------------------------- [limits]


def test_limits_section_defaults_and_validation() -> None:
    config = parse_config({})
    assert config.limits["max_nesting"] == 12
    assert config.limits["max_result_rows"] == config.guard.max_limit
    assert config.guard.max_query_bytes == config.limits["max_query_bytes"]
    with pytest.raises(ConfigError, match=r"limits\.max_nesting"):
        parse_config({"limits": {"max_nesting": -1}})
    with pytest.raises(ConfigError, match=r"limits\.idle_timeout_seconds"):
        parse_config({"limits": {"idle_timeout_seconds": "soon"}})


def test_gremlin_counts_brackets_only() -> None:
    """`not(…)` is a Gremlin step, not a prefix operator; TinkerPop's own traversals nest ≤ 6."""
    traversal = "g.V().not(__.out().not(__.in('x'))).values('name')"
    assert nesting(traversal, language="gremlin")[0] == 3
    assert check_text("g.V()" + ".where(__.out(" * 7 + "'x'" + "))" * 7, 0, 12, "gremlin")


# ---------------------------------------------------------------- Bolt upstream timeout


def test_bolt_upstreams_get_the_query_timeout_as_tx_timeout() -> None:
    relay = BoltRelayBackend("bolt://127.0.0.1:7687", query_timeout_ms=1500, read_only=True)
    assert relay._extra(None) == {"mode": "r", "tx_timeout": 1500}
    assert "tx_timeout" not in BoltRelayBackend("bolt://127.0.0.1:7687")._extra(None)


def test_an_upstream_timeout_failure_reads_lim_timeout() -> None:
    loop = asyncio.new_event_loop()
    try:
        reply = Response(loop.create_future(), None)
    finally:
        loop.close()
    reply.tag = m.FAILURE
    code = "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"
    reply.metadata = {"code": code, "message": "terminated: timed out after 1500 ms"}
    error = reply.error("RUN")
    assert error.code == code  # a ClientError: drivers do not retry it
    assert error.message.startswith("LIM.TIMEOUT:") and "query_timeout_ms" in error.message
