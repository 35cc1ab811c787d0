"""Cypher for rules: the typed tree (`ast`), the parsed query, pattern helpers (endpoint labels,
admissible types, flips), lexical segments of the text, the function allow-list."""

from query_guard.cypher import ast
from query_guard.cypher.ast_call import OptionalCallProcedure, TunedCall
from query_guard.cypher.ast_conditional import Conditional, NextChain
from query_guard.cypher.ast_dynamic import LabelDynamic
from query_guard.cypher.functions import contains_aggregate, is_allowed_function
from query_guard.cypher.lexical import Segment, segments
from query_guard.cypher.parser import CypherSyntaxError, parse
from query_guard.cypher.patterns import (
    admissible_types,
    closest,
    endpoint_labels,
    flip_edits,
    positive_names,
    quote_name,
    read_hops,
    similarity,
)
from query_guard.cypher.query import CypherQuery
from query_guard.cypher.statement import is_admin, is_explain

__all__ = [
    "Conditional", "CypherQuery", "CypherSyntaxError", "LabelDynamic", "NextChain",
    "OptionalCallProcedure", "Segment", "TunedCall",
    "admissible_types", "ast", "closest", "contains_aggregate", "endpoint_labels", "flip_edits",
    "is_admin", "is_allowed_function", "is_explain", "parse", "positive_names", "quote_name",
    "read_hops", "segments", "similarity",
]  # fmt: skip
