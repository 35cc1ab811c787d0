"""What kind of statement a parsed query is: an `EXPLAIN` (answered by the proxy, never run),
a `PROFILE` (run like the bare query), and Neo4j's summary query type — `r` (reads only), `w`
(writes only), `rw` (reads and writes, or writes that return rows), `s` (schema commands).

Example::

    >>> statement_facts(CypherQuery.parse("EXPLAIN CREATE (n:Person)"))
    (True, 'w')
    >>> statement_facts(CypherQuery.parse("MATCH (p:Person) SET p.seen = true RETURN p"))
    (False, 'rw')
"""

from __future__ import annotations

from query_guard.cypher import ast
from query_guard.cypher.query import CypherQuery

_WRITES = (ast.Create, ast.Merge, ast.Delete, ast.SetClause, ast.Remove, ast.Foreach)
# clauses that read the graph (or return rows) next to a write: `MATCH … SET` is `rw`
_READS = (ast.Match, ast.Merge, ast.Return, ast.CallProcedure, ast.LoadCsv, ast.Unwind)


def prefix(query: CypherQuery) -> str:
    """`EXPLAIN`, `PROFILE`, or "" — the keyword the parser keeps as the first clause."""
    statements = query.script.statements
    if not statements:
        return ""
    first = statements[0]
    branch = first.branches[0] if isinstance(first, ast.UnionQuery) else first
    clause = branch.clauses[0] if branch.clauses else None
    if isinstance(clause, ast.OtherClause) and clause.kind in ("EXPLAIN", "PROFILE"):
        return clause.kind
    return ""


def is_explain(query: CypherQuery) -> bool:
    return prefix(query) == "EXPLAIN"


def query_type(query: CypherQuery) -> str:
    """Neo4j's summary `type` for the statement, from its clauses (what it would do)."""
    commands = list(query.find(ast.SchemaCommand))
    if any(not c.kind.upper().startswith("SHOW") for c in commands):
        return "s"
    if not any(True for _ in query.find(*_WRITES)):
        return "r"
    return "rw" if any(True for _ in query.find(*_READS)) else "w"


def statement_facts(query: CypherQuery) -> tuple[bool, str]:
    """(is it an EXPLAIN, its query type): what `Verdict.explain` / `query_type` carry."""
    return is_explain(query), query_type(query)
