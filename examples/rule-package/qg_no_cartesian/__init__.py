"""No cartesian products: a `MATCH` whose comma-separated parts share no variable — and whose
`WHERE` joins none of them — returns every combination of their rows (`PAT.CARTESIAN`,
a warning; nothing is rewritten). `MATCH (a:Person), (b:Movie) RETURN a, b` pairs every
person with every movie; `MATCH (a:Person)-[:ACTED_IN]->(b:Movie)` is what was meant.

An example of a third-party rule: it imports only `query_guard.api`, registers through the
`query_guard` entry-point group (see pyproject.toml), and tests itself with the fixture runner
(`query_guard.api.check_fixture`, tests/).
"""

from __future__ import annotations

from query_guard.api import CypherQuery, Finding, GuardContext, Severity, cypher_ast, hookimpl


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    findings = []
    for match in query.find(cypher_ast.Match):
        if len(match.patterns) < 2:
            continue
        parts = [_variables(p) for p in match.patterns]
        joined = _variables(match.where) if match.where is not None else set()
        for i, (pattern, names) in enumerate(zip(match.patterns, parts, strict=True)):
            others = set().union(*(n for j, n in enumerate(parts) if j != i))
            if names & others or (names & joined and others & joined):
                continue
            findings.append(Finding(
                "PAT.CARTESIAN", Severity.WARNING,
                f"{query.source(pattern)} shares no variable with the other parts of its "
                "MATCH: every combination of their rows comes back. Connect the parts with "
                "a relationship, or join them in WHERE",
                pattern.span,
            ))  # fmt: skip
            break
    return findings


def _variables(node: cypher_ast.Node) -> set[str]:
    return {v.name for v in node.find_all(cypher_ast.Variable)}
