"""Gremlin for rules: the typed traversal (`ast`), span edits, label tracking through a walk,
the printer's quoting, the similarity configuration and walks (SEGRA, DESIGN §5)."""

from query_guard.gremlin import ast
from query_guard.gremlin.ast import Enum, Literal, Predicate, Step, Strategy, String, Traversal
from query_guard.gremlin.edits import (
    append_step,
    insert_after,
    insert_before,
    int_literal,
    is_local,
    nested_traversals,
    rename_step,
    replace_node,
    string_args,
)
from query_guard.gremlin.labels import FLIP, KEEP, LEAVE_EDGE, Labels, LabelWalk
from query_guard.gremlin.language import GremlinQuery
from query_guard.gremlin.lexicon import MUTATING_STEPS
from query_guard.gremlin.printer import literal, quote
from query_guard.gremlin.similarity import SimilaritySettings, gremlin_settings
from query_guard.gremlin.walks import MOVES, VERTEX_STEPS, finding, inside, similarity_steps

__all__ = [
    "FLIP",
    "KEEP",
    "LEAVE_EDGE",
    "MOVES",
    "MUTATING_STEPS",
    "VERTEX_STEPS",
    "Enum",
    "GremlinQuery",
    "LabelWalk",
    "Labels",
    "Literal",
    "Predicate",
    "SimilaritySettings",
    "Step",
    "Strategy",
    "String",
    "Traversal",
    "append_step",
    "ast",
    "finding",
    "gremlin_settings",
    "insert_after",
    "insert_before",
    "inside",
    "int_literal",
    "is_local",
    "literal",
    "nested_traversals",
    "quote",
    "rename_step",
    "replace_node",
    "similarity_steps",
    "string_args",
]  # fmt: skip
