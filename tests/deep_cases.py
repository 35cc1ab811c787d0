"""Queries at the size limits (issue 19, item 5): long operator chains and deep nesting in
Cypher, SQL and Gremlin, built to a given size. Used by tests/unit/test_deep_queries.py (what
the guard answers) and benchmarks/deep_queries.py (how long it takes)."""

from __future__ import annotations

SIZE = 64 * 1024 - 64  # just within the default max_query_bytes


def fill(head: str, unit: str, tail: str = "", size: int = SIZE) -> str:
    """`head` + `unit` repeated up to `size` characters + `tail`."""
    return head + unit * ((size - len(head) - len(tail)) // len(unit)) + tail


def nest(head: str, opener: str, inner: str, closer: str, size: int = SIZE) -> str:
    """`head` + `opener` * n + `inner` + `closer` * n, balanced, up to `size` characters."""
    n = (size - len(head) - len(inner)) // (len(opener) + len(closer))
    return head + opener * n + inner + closer * n


def chain(head: str, operand: str, ops: list[str], tail: str = "", size: int = SIZE) -> str:
    parts, n, i = [head, operand], len(head) + len(operand) + len(tail), 0
    while n + len(ops[i % len(ops)]) + len(operand) < size:
        parts += [ops[i % len(ops)], operand]
        n += len(ops[i % len(ops)]) + len(operand)
        i += 1
    return "".join([*parts, tail])


def cypher_cases(size: int = SIZE) -> dict[str, str]:
    return {
        "plus": chain("RETURN ", "1", ["+"], size=size),
        "mixed": chain("RETURN ", "1", ["+", "-", "*", "/"], size=size),
        "properties": chain("MATCH (p:Person) RETURN ", "p.name", ["+"], size=size),
        "and": chain("MATCH (p:Person) WHERE ", "p.born > 1", [" AND "], " RETURN p", size=size),
        "or-xor": chain(
            "MATCH (p:Person) WHERE ", "p.born > 1", [" OR ", " XOR "], " RETURN p", size=size
        ),
        "comparisons": chain(
            "MATCH (p:Person) RETURN ", "p.born", [" < ", " = ", " <> "], size=size
        ),
        "string-ops": chain(
            "MATCH (p:Person) RETURN ", "p.name", [" STARTS WITH ", " CONTAINS "], size=size
        ),
        "lookups": fill("MATCH (p:Person) RETURN p", ".name", size=size),
        "subscripts": fill("MATCH (p:Person) RETURN p.name", "[0]", size=size),
        "dotted-function": fill("RETURN a", ".b", "(1)", size=size),
        "list": chain("RETURN [", "1", [","], "]", size=size),
        "pattern": fill("MATCH (p:Person)", "-[:ACTED_IN]-()", " RETURN p", size=size),
        "union": fill("RETURN 1 AS x", " UNION RETURN 1 AS x", size=size),
        "withs": fill("MATCH (p:Person) ", "WITH p ", "RETURN p", size=size),
        "limit-expression": chain("MATCH (p:Person) RETURN p LIMIT ", "1", ["+"], size=size),
        "not": fill("RETURN ", "NOT ", "true", size=size),
        "minus": fill("RETURN ", "- ", "1", size=size),
        "parentheses": nest("RETURN ", "(", "1", ")", size=size),
        "lists": nest("RETURN ", "[", "1", "]", size=size),
        "maps": nest("RETURN ", "{a: ", "1", "}", size=size),
        "label-negation": fill(
            "MATCH (p:Person)-[:", "!", "ACTED_IN]->(m:Movie) RETURN p", size=size
        ),
        "case": nest("RETURN ", "CASE WHEN true THEN ", "1", " END", size=size),
    }


def sql_cases(size: int = SIZE) -> dict[str, str]:
    return {
        "plus": chain("SELECT ", "1", ["+"], size=size),
        "mixed": chain("SELECT ", "1", ["+", "-"], size=size),
        "comparisons": chain("SELECT ", "1", ["=", "<>"], size=size),
        "casts": fill("SELECT 1", "::int", size=size),
        "in": chain("SELECT ", "1", [" IN "], size=size),
        "power": chain("SELECT ", "2", ["^"], size=size),
        "and": chain("SELECT 1 FROM t WHERE ", "a = 1", [" AND "], size=size),
        "and-or": chain("SELECT 1 FROM t WHERE ", "a = 1", [" AND ", " OR "], size=size),
        "concat": chain("SELECT ", "'a'", ["||"], size=size),
        "union": fill("SELECT 1", " UNION SELECT 1", size=size),
        "union-except": chain("SELECT ", "1", [" UNION SELECT ", " EXCEPT SELECT "], size=size),
        "in-list": chain("SELECT 1 FROM t WHERE a IN (", "1", [","], ")", size=size),
        "not": fill("SELECT ", "NOT ", "1", size=size),
        "minus": fill("SELECT ", "- ", "1", size=size),
        "tilde": fill("SELECT ", "~", "1", size=size),
        "parentheses": nest("SELECT ", "(", "1", ")", size=size),
        "case": nest("SELECT ", "CASE WHEN 1 = 1 THEN ", "1", " END", size=size),
        "subqueries": nest("SELECT ", "(SELECT ", "1", ")", size=size),
        "functions": nest("SELECT ", "abs(", "1", ")", size=size),
        "not-in-string": "SELECT '" + "(" * 5000 + "' AS x",
    }


def gremlin_cases(size: int = SIZE) -> dict[str, str]:
    return {
        "steps": fill("g.V().hasLabel('Person')", ".out()", size=size),
        "arguments": chain("g.V(", "1", [","], ")", size=size),
        "and": fill("g.V().has('born', P.gt(1)", ".and(P.lt(3))", ").limit(1)", size=size),
        "nested": nest("g.V().hasLabel('Person')", ".where(__.out(", "'x'", "))", size=size),
        "predicates": nest("g.V().has('a', ", "P.not(", "P.eq(1)", ")", size - 1) + ")",
        "minus": fill("g.V().hasLabel('Person').values('born').is(", "-", "1)", size=size),
    }

# without the text limits, a query this long is still judged (in seconds, not milliseconds)
LIMITS_OFF_SIZE = 6000


def all_cases() -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """Per language: (the cases at 64 KiB, the same at LIMITS_OFF_SIZE characters)."""
    return {
        "cypher": (cypher_cases(), cypher_cases(LIMITS_OFF_SIZE)),
        "sql": (sql_cases(), sql_cases(LIMITS_OFF_SIZE)),
        "gremlin": (gremlin_cases(), gremlin_cases(LIMITS_OFF_SIZE)),
    }
