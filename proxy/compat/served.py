"""Which statements the compat layer answers itself, for the rules that would otherwise refuse
them (the read-only rule lets these through; `plugins/compat_procedures.py` rewrites them)."""

from __future__ import annotations

from query_guard.cypher import ast
from query_guard.cypher.ast_schema import SchemaDefinition
from query_guard.cypher.query import CypherQuery
from query_guard.schema.context import GuardContext


def dialect_of(backend_uri: str) -> str:
    """ "falkordb" for the embedded FalkorDB (no URI) and falkordb:// / redis:// URIs, else ""."""
    scheme = backend_uri.split("://", 1)[0].lower() if "://" in backend_uri else ""
    return "falkordb" if not backend_uri or scheme in ("falkordb", "falkor", "redis") else ""


def idempotent(query: CypherQuery, node: ast.SchemaCommand) -> bool:
    """`CREATE … INDEX|CONSTRAINT … IF NOT EXISTS` (as parsed: not a comment or a string)."""
    return isinstance(node, SchemaDefinition) and node.kind.startswith("CREATE") and node.if_exists


def acknowledged(query: CypherQuery, node: ast.SchemaCommand, ctx: GuardContext) -> bool:
    """An idempotent schema statement that `[compat] schema_statements = "acknowledge"`
    answers with an empty result instead of running."""
    return ctx.compat.schema_statements == "acknowledge" and idempotent(query, node)


def answered(query: CypherQuery, node: ast.Node, ctx: GuardContext) -> bool:
    """Does the compat layer answer `node` itself (so it never reaches the backend)?"""
    if isinstance(node, ast.CallProcedure):
        return node.name.lower() in ctx.served_procedures
    if isinstance(node, ast.SchemaCommand):
        return acknowledged(query, node, ctx)
    return False
