"""Databases — a query may only `USE` a graph this proxy serves (`SEC.DATABASE`).

The proxy serves the graphs in `[backend] databases` (by default only the configured graph),
and `neo4j` / the home database as names for it. `USE other` inside a query would let the
query itself pick another graph on the same server — one created outside the proxy, with
data it was never meant to expose — so any other name blocks the query. The Bolt `db` field
is checked the same way by the Bolt frontend. Names are compared exactly (FalkorDB graph
keys are case-sensitive); `graph.byName()` is judged when its argument is a string literal
and blocked otherwise (a parameter could name any graph).

Example (served: `movies`)::

    USE secrets MATCH (n) RETURN n
    ->  blocked: SEC.DATABASE  the query uses graph 'secrets', which this proxy does not serve;
        remove the USE clause (the default graph is 'movies')

Emits `SEC.DATABASE` (error).
"""

from __future__ import annotations

from query_guard.api import Finding, GuardContext, Severity, hookimpl
from query_guard.api.cypher import CypherQuery, ast


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    allowed = ctx.settings.allowed_databases
    findings: list[Finding] = []
    for clause in query.find(ast.OtherClause):
        if clause.kind != "USE" or not clause.parts:
            continue
        name = graph_name(clause.parts[0])
        if name is not None and name in allowed:
            continue
        served = [n for n in allowed if n]
        problem = (
            f"the query uses graph {name!r}, which this proxy does not serve"
            if name is not None
            else "the query picks its graph at run time, which the guard cannot check"
        )
        default = f" (the default graph is {served[0]!r})" if served else ""
        findings.append(
            Finding(
                "SEC.DATABASE",
                Severity.ERROR,
                f"{problem}; remove the USE clause{default}",
                clause.span,
            )
        )
    return findings


def graph_name(target: ast.Node) -> str | None:
    """The graph a USE target names: `name`, `composite.name`, `graph.byName('name')`;
    None when only run-time data could tell."""
    if isinstance(target, ast.Variable):
        return target.name
    if isinstance(target, ast.PropertyLookup):
        subject = graph_name(target.subject)
        return None if subject is None else f"{subject}.{target.key}"
    if (
        isinstance(target, ast.FunctionCall)
        and target.name.lower() == "graph.byname"
        and len(target.args) == 1
        and isinstance(target.args[0], ast.Literal)
        and isinstance(target.args[0].value, str)
    ):
        return target.args[0].value
    return None
