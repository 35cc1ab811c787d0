"""What kind of statement a parsed query is: an `EXPLAIN` (answered by the proxy, never run),
a `PROFILE` (run like the bare query), and Neo4j's summary query type — `r` (reads only), `w`
(writes and returns no records, `MATCH … DETACH DELETE` included), `rw` (writes and returns
records), `s` (schema commands).

Example::

    >>> statement_facts(CypherQuery.parse("EXPLAIN CREATE (n:Person)"))
    (True, 'w')
    >>> statement_facts(CypherQuery.parse("MATCH (p:Person) SET p.seen = true RETURN p"))
    (False, 'rw')
    >>> statement_facts(CypherQuery.parse("MATCH (p:Person) DETACH DELETE p"))
    (False, 'w')
"""

from __future__ import annotations

from query_guard.cypher import ast
from query_guard.cypher.ast_conditional import Conditional, NextChain
from query_guard.cypher.query import CypherQuery

_WRITES = (ast.Create, ast.Merge, ast.Delete, ast.SetClause, ast.Remove, ast.Foreach)
# the statement's last clause returns records: a write ending in one of these is `rw`
_RETURNS = (ast.Return, ast.CallProcedure)


def prefix(query: CypherQuery) -> str:
    """`EXPLAIN`, `PROFILE`, or "" — the keyword the parser keeps as the first clause (worked
    out once per query: several rules and the verdict ask)."""
    return query.memo("prefix", lambda: _prefix(query))  # type: ignore[return-value]


def _prefix(query: CypherQuery) -> str:
    statements = query.script.statements
    if not statements:
        return ""
    first = statements[0]
    branch = first.branches[0] if isinstance(first, ast.UnionQuery) else first
    clauses = [c for c in branch.clauses[:2] if not _version_prefix(c)]  # `CYPHER 25 EXPLAIN`
    clause = clauses[0] if clauses else None
    if isinstance(clause, ast.OtherClause) and clause.kind in ("EXPLAIN", "PROFILE"):
        return clause.kind
    return ""


def _version_prefix(clause: ast.Clause) -> bool:
    return isinstance(clause, ast.OtherClause) and clause.kind.startswith("CYPHER ")


def is_explain(query: CypherQuery) -> bool:
    return prefix(query) == "EXPLAIN"


def query_type(query: CypherQuery) -> str:
    """Neo4j's summary `type` for the statement, from its clauses (what it would do)."""
    commands = list(query.find(ast.SchemaCommand))
    if any(not c.kind.upper().startswith("SHOW") for c in commands):
        return "s"
    if not any(True for _ in query.find(*_WRITES)):
        return "r"
    return "rw" if any(_returns(s) for s in query.script.statements) else "w"


def _returns(statement: ast.Query) -> bool:
    """Does the statement return records (Neo4j: a write with result columns is `rw`)?"""
    branches = statement.branches if isinstance(statement, ast.UnionQuery) else [statement]
    for branch in branches:
        last = branch.clauses[-1] if branch.clauses else None
        if isinstance(last, _RETURNS):
            return True
        if isinstance(last, Conditional) and any(_returns(b) for b in last.branches):
            return True
        if isinstance(last, NextChain) and _returns(last.parts[-1]):  # Cypher 25 `… NEXT …`
            return True
    return False


def statement_facts(query: CypherQuery) -> tuple[bool, str]:
    """(is it an EXPLAIN, its query type): what `Verdict.explain` / `query_type` carry."""
    return is_explain(query), query_type(query)


def is_admin(node: ast.SchemaCommand) -> bool:
    """A coarsely parsed administration command (not an index or constraint command, not a
    SHOW): the only kind of statement whose text the guard does not hold as tokens."""
    return type(node) is ast.SchemaCommand
