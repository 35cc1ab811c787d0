"""`query_guard.gremlin.callbacks.read_filters`: lark's child filters of the Gremlin grammar as
plain functions (helper rules as lists) give the values lark's own filters give, through lark's
parser and the lean driver alike, and the same errors."""

from __future__ import annotations

import pytest
from lark import Lark, UnexpectedInput
from lark.parse_tree_builder import ChildFilterLALR, ChildFilterLALR_NoPlaceholders

from query_guard.gremlin.callbacks import read_filters
from query_guard.gremlin.parser import GRAMMAR, _driver, gremlin_parser
from query_guard.gremlin.transform import ChainBuilder
from tests.corpora import read_jsonl

TEXTS = [
    "g.V(1, 2, 3).out('a', 'b').has('x', P.within([1, 2, 3])).map([a: 1, (T.id): 2, 'c': []])",
    "g.withStrategies(new SubgraphStrategy(vertices: __.has('a'), edges: __.out())).V({1, 2})",
    "g.inject([:]).V().values('x').fold().project('a', 'b').by(__.count()).by()",
    "'cmd'.execute().text",
    "g.V(",
    "g.V().out('a',)",
    "g.V().has('a', [1, 2,])",
    "[1, 2].x().y()",
]


def _plain() -> Lark:
    """The Gremlin parser with lark's own filters (what `gremlin_parser` built before)."""
    return Lark.open_from_package(
        "query_guard.grammars",
        GRAMMAR,
        parser="lalr",
        lexer="contextual",
        maybe_placeholders=True,
        transformer=ChainBuilder(),
    )


def _outcome(lark: Lark, text: str) -> str:
    try:
        return repr(lark.parse(text))
    except UnexpectedInput as exc:
        return f"{type(exc).__name__} at {exc.pos_in_stream}: {sorted(_expected(exc))}"
    except Exception as exc:  # a callback's own error (script content)
        return f"{type(exc).__name__}: {exc}"


def _expected(exc: UnexpectedInput) -> set[str]:
    return set(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ())


def test_no_generic_filter_is_left_on_a_list_rule() -> None:
    callbacks = gremlin_parser().parser.parser.parser.callbacks
    filters = (ChildFilterLALR, ChildFilterLALR_NoPlaceholders)
    helpers = [r for r in callbacks if str(r.origin.name).startswith("__")]
    assert helpers
    assert not [r for r in helpers if type(callbacks[r]) in filters]
    assert not [r for r, c in callbacks.items() if type(c) is ChildFilterLALR_NoPlaceholders]


@pytest.mark.parametrize("text", TEXTS)
def test_same_values_and_errors_as_lark_filters(text: str) -> None:
    assert _outcome(gremlin_parser(), text) == _outcome(_plain(), text)


def test_corpus_values_are_lark_filters_values() -> None:
    plain = _plain()
    texts = [r["text"] for r in read_jsonl("gremlin", "tinkerpop_traversals.jsonl")][::3]
    for text in texts:
        expected = _outcome(plain, text)
        assert _outcome(gremlin_parser(), text) == expected
        if not expected.startswith(("Unexpected", "GremlinScriptError", "VisitError")):
            assert repr(_driver().parse(text)) == expected


def test_read_filters_leaves_an_unread_shape_to_lark() -> None:
    lark = _plain()
    callbacks = lark.parser.parser.parser.callbacks
    empty = [r for r in callbacks if str(r.origin.name) == "call_args" and len(r.expansion) == 2]
    before = {r: callbacks[r] for r in empty}
    read_filters(callbacks)
    assert {r: callbacks[r] for r in empty} == before  # `()` inserts a placeholder: lark's
