"""What the unused-code check (`tests/unit/test_architecture.py`, vulture over `proxy/` and
`plugins/`) accepts as used although nothing in the product names it, and why.

Only names a framework calls by name, data fields, and API that tests drive belong here; dead
code is deleted instead. Lark transformer methods (named after grammar rules) are accepted by
the test itself, from the grammars, and so are the configuration keys (read by name).
"""

from __future__ import annotations

# functions registered by a decorator and called by their framework
IGNORE_DECORATORS: list[str] = [
    "@hookspec",  # pluggy reads the hook specifications from query_guard.guard.hookspecs
    "@hookimpl",  # pluggy calls rule and repair hooks by name (query_guard.guard.hookspecs)
    "@app.tool",  # the MCP SDK exposes each as a tool (proxy/frontends/mcp.py)
    "@field_validator",  # pydantic runs validators by declaration
]

ALLOWED: dict[str, str] = {
    # Cypher AST builders registered by their rule's Slots decorator for the rules `float` and
    # `slice` (named apart so as not to shadow the builtins; proxy/cypher/builders.py)
    "float_literal": "builder of the grammar rule `float`",
    "slice_": "builder of the grammar rule `slice`",
    # called by asyncio on a Protocol
    "connection_made": "asyncio.Protocol callback",
    "data_received": "asyncio.Protocol callback",
    "connection_lost": "asyncio.Protocol callback",
    "pause_writing": "asyncio.Protocol flow-control callback",
    "resume_writing": "asyncio.Protocol flow-control callback",
    # called by name by a library
    "model_config": "pydantic reads a model's settings from this class attribute (config schema)",
    "schema_file": "the `[guard] schema` key, read by its alias (config.schema.GuardTable)",
    "dictify": "gremlinpython's GraphSON writer calls a serializer's dictify",
    "row_factory": "sqlite3 builds result rows with a connection's row_factory (experience)",
    "raw_match": "aiohttp asks a resource whether it answers a path (frontends/http.py)",
    "api": "a Bolt handler's message field it does not need (TELEMETRY api)",
    "routing": "a Bolt handler's message field it does not need (ROUTE routing context)",
    "bookmarks": "a Bolt handler's message field it does not need (BEGIN/ROUTE bookmarks)",
    # lark Token fields the Cypher LALR driver sets as lark's lexer does (lalr_driver.py)
    "end_line": "lark Token field, set by the LALR driver like lark's own lexer",
    "end_column": "lark Token field, set by the LALR driver like lark's own lexer",
    # AST and result fields: the tree records the whole query even where no rule reads a part
    "op_span": "AST field (operator position)",
    "is_slice": "AST field (list slice vs index)",
    "descending": "AST field (ORDER BY … DESC)",
    "optional": "AST field (OPTIONAL MATCH)",
    "with_headers": "AST field (LOAD CSV WITH HEADERS)",
    "operands": "AST field (a simple CASE's extended WHEN: what it compares the subject with)",
    "name_parameter": "AST field (an index or constraint named by a parameter: DROP INDEX $n)",
    "naked": "Gremlin AST field (a step written without g.)",
    "long_form": "Gremlin AST field (a token's long spelling)",
    "t_first_ms": "ResultSummary field the backends fill (Bolt t_first)",
    "t_last_ms": "ResultSummary field the backends fill (Bolt t_last)",
    "manifest": "handshake field (the client used Bolt manifest negotiation)",
    "client_capabilities": "handshake field (capability bits the client sent)",
    "records_decoded": "relay counter that tests read (records decoded instead of relayed)",
    # API that tests and rule authors use
    "scope_of": "rule-author API on query.scopes (tests/unit/test_cypher_scopes.py)",
    "delete_graph": "FalkorDBBackend API; tests drop and recreate a graph with it",
    "declared_keys": "config keys the schema declares (tests/unit/test_config.py, architecture)",
    "from_text": "SqlCatalog from the fixtures' `-- sql-schema:` header",
    "unpackb": "PackStream decoder of one value (tests/protocol/test_packstream.py round trips)",
    "valid": "a field of an MCP tool's output schema (mcp_results.PlanResult), read by clients",
}
