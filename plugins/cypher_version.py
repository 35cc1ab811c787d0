"""Cypher version — Cypher 25 syntax only where the database speaks it (`SYN.CYPHER_VERSION`,
error).

Neo4j 2025+ adds to Cypher: `FILTER [WHERE] p` (a `WITH * WHERE p`), `LET x = e, …`
(`WITH *, e AS x`), conditional queries `WHEN c THEN … [WHEN …] [ELSE …]` and sequential
queries `q1 NEXT q2` (also inside `CALL { … }`), the match modes `MATCH REPEATABLE ELEMENTS
…` / `MATCH DIFFERENT RELATIONSHIPS …`, and the `CYPHER 25` prefix that selects the version
for one statement. The guard parses all of them and judges them with the same rules as their
Cypher 5 equivalents (a FILTER's property names are checked like a WHERE's, a write inside a
WHEN branch or a NEXT part is a write).

Standalone `ORDER BY` / `SKIP` / `OFFSET` / `LIMIT` clauses (after any clause but RETURN: after a
WITH once its WHERE or its own LIMIT ends it, `WITH p WHERE p.born > 1960 ORDER BY p.born`,
`WITH p LIMIT 3 ORDER BY p.born`) are not among them: the Cypher 5 manual has them "as of
Neo4j 5.24" (clauses/order-by), so both versions accept them.

`[guard] cypher_version` says which language the database speaks: "5" (the default: Neo4j 5,
ArcadeDB, FalkorDB, Memgraph) refuses these constructs, as such a database would, and a
`CYPHER 25` prefix with them; "25" (Neo4j 2025+) lets them through. A `CYPHER 5` / `CYPHER 25`
prefix chooses the version of its own statement (`CYPHER 5` on a Cypher 25 database refuses
`FILTER` in that statement).

Example (cypher_version = "5")::

    MATCH (p:Person) FILTER p.born > 1960 RETURN p.name
    ->  blocked: SYN.CYPHER_VERSION  FILTER is Cypher 25 syntax; this database speaks Cypher 5
        ([guard] cypher_version = "5"): write WITH * WHERE …
"""

from __future__ import annotations

from query_guard.api import Finding, GuardContext, Severity, hookimpl
from query_guard.api.cypher import Conditional, CypherQuery, NextChain, ast

# the Cypher 5 spelling of each Cypher 25 addition
_INSTEAD = {
    "FILTER": "WITH * WHERE …",
    "LET": "WITH *, … AS name",
    "WHEN": "CALL { … UNION … } with the conditions in WHERE",
    "NEXT": "WITH between the parts (RETURN a, b NEXT … reads as WITH a, b …)",
    "REPEATABLE ELEMENTS": "MATCH without a match mode (relationships are not repeated)",
    "DIFFERENT RELATIONSHIPS": "MATCH without a match mode (it is the default)",
    "CYPHER 25": "the statement without the CYPHER 25 prefix",
}

# the token types the additions are written with (grammars/cypher.lark): WHEN, NEXT, FILTER,
# LET and the match modes; a query without any has none of them (most queries: no walk)
_KEYWORDS = ("WHEN", "NEXT", "FILTER", "LET", "REPEATABLE", "DIFFERENT")


def _additions(query: CypherQuery) -> list[tuple[str, ast.Node]]:
    """(keyword, node) of every Cypher 25 construct in the statement, in pre-order."""
    if not query.has_token(*_KEYWORDS):  # each is written with one of these keywords
        return []
    found = [
        (w, n)
        for n in query.find(Conditional, NextChain, ast.With, ast.Match)
        if (w := _word(query, n))
    ]
    # the index lists nodes by class, each class's in pre-order: the walk is needed only to
    # interleave the constructs of several classes
    if len({type(node) for _, node in found}) < 2:
        return found
    return [(w, n) for n in query.nodes if (w := _word(query, n))]


def _word(query: CypherQuery, node: ast.Node) -> str:
    """The Cypher 25 keyword `node` is written with, or "" (not an addition)."""
    if isinstance(node, Conditional):
        return "WHEN"
    if isinstance(node, NextChain):
        return "NEXT"
    if isinstance(node, ast.Match):
        return getattr(node, "mode", "")  # type: ignore[no-any-return]
    if isinstance(node, ast.With):
        word = query.text[node.span[0] : node.span[1]].split(None, 1)[0].upper()
        if word in _INSTEAD:  # WITH itself is not
            return word
    return ""


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    findings: list[Finding] = []
    for statement in query.script.statements:
        version = ctx.settings.cypher_version
        first = statement.branches[0] if isinstance(statement, ast.UnionQuery) else statement
        prefix = first.clauses[0] if first.clauses else None
        if isinstance(prefix, ast.OtherClause) and prefix.kind.startswith("CYPHER "):
            chosen = prefix.kind.split()[1]
            if chosen not in ("5", "25") or (chosen == "25" and version == "5"):
                findings.append(_finding(prefix.kind, prefix, version))
            version = chosen
        if version == "25":
            continue
        for word, node in _additions(query):
            if statement.span[0] <= node.span[0] < statement.span[1]:
                findings.append(_finding(word, node, version))
    return findings


def _finding(word: str, node: ast.Node, version: str) -> Finding:
    instead = _INSTEAD.get(word)
    what = "Cypher 25 syntax" if instead else "not a Cypher version the guard knows"
    return Finding(
        "SYN.CYPHER_VERSION",
        Severity.ERROR,
        f"{word} is {what}; the statement is Cypher {version} "
        f'([guard] cypher_version = "{version}" or its CYPHER prefix)'
        + (f": write {instead}" if instead else ""),
        node.span,
    )
