"""The functions a read-only query may call: Cypher's built-ins plus a curated list of pure APOC
(and a few FalkorDB / GDS) functions. Everything else is judged by the read-only rule
(`SEC.PROCEDURE`) unless the operator lists it in `[guard] allowed_functions`.

"Pure" means: computes a value from its arguments and the graph it is given, and does nothing
else — no writes, no loading of files or URLs, no network calls (`genai.vector.encode` calls an
embedding provider the query picks), no running of Cypher text, no sleeping, no access to
server configuration or other databases.

docs/functions.md is generated from this module and proxy/sql/functions.py (SQL's lists)
(`python -m query_guard.sql.functions_page > docs/functions.md`), and a test keeps it in step.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase, translate

from query_guard.cypher import ast

# Cypher's built-in functions (Neo4j 5 / Cypher 25), by the manual's groups. Names are matched
# case-insensitively, as Neo4j resolves built-in functions.
BUILTIN_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "aggregating": (
        "avg", "collect", "count", "max", "min", "percentileCont", "percentileDisc", "stDev",
        "stDevP", "sum",
    ),
    "predicate": ("all", "any", "exists", "isEmpty", "none", "single"),
    "scalar": (
        "char_length", "character_length", "coalesce", "elementId", "endNode", "head", "id",
        "last", "length", "nullIf", "properties", "randomUUID", "size", "startNode",
        "timestamp", "toBoolean", "toBooleanOrNull", "toFloat", "toFloatOrNull", "toInteger",
        "toIntegerOrNull", "type", "valueType",
    ),
    "list": (
        "keys", "labels", "nodes", "range", "reduce", "relationships", "reverse", "tail",
        "toBooleanList", "toFloatList", "toIntegerList", "toStringList",
        "filter", "extract",  # Cypher 3 list functions (removed in Neo4j 4, still written)
    ),
    "path": ("shortestPath", "allShortestPaths"),  # written as expressions
    "numeric": ("abs", "ceil", "floor", "isNaN", "rand", "round", "sign"),
    "logarithmic": ("e", "exp", "log", "log10", "sqrt"),
    "trigonometric": (
        "acos", "asin", "atan", "atan2", "cos", "cot", "degrees", "haversin", "pi", "radians",
        "sin", "tan",
    ),
    "string": (
        "btrim", "left", "lower", "ltrim", "normalize", "replace", "right", "rtrim", "split",
        "substring", "toLower", "toString", "toStringOrNull", "toUpper", "trim", "upper",
    ),
    "temporal": (
        "date", "date.realtime", "date.statement", "date.transaction", "date.truncate",
        "datetime", "datetime.fromEpoch", "datetime.fromEpochMillis", "datetime.realtime",
        "datetime.statement", "datetime.transaction", "datetime.truncate",
        "localdatetime", "localdatetime.realtime", "localdatetime.statement",
        "localdatetime.transaction", "localdatetime.truncate",
        "localtime", "localtime.realtime", "localtime.statement", "localtime.transaction",
        "localtime.truncate",
        "time", "time.realtime", "time.statement", "time.transaction", "time.truncate",
        "duration", "duration.between", "duration.inDays", "duration.inMonths",
        "duration.inSeconds",
    ),
    "spatial": ("point", "point.distance", "point.withinBBox", "distance"),
    "vector": (
        "vector", "vector.similarity.cosine", "vector.similarity.euclidean",
        "vector_dimension_count", "vector_distance", "vector_norm",
    ),
    "database": ("db.nameFromElementId",),
}  # fmt: skip

# Functions of the other supported backends that LLMs write (FalkorDB's own built-ins).
BACKEND_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "FalkorDB": (
        "typeOf", "hasLabels", "indegree", "outdegree", "toJSON", "intern", "vecf32",
        "vec.euclideanDistance", "vec.cosineDistance", "list.dedup", "list.sort",
        "list.remove", "list.insert", "list.insertListElements", "string.join",
        "string.matchRegEx", "string.replaceRegEx",
    ),
}  # fmt: skip

# Pure APOC / GDS functions. A pattern ending in `.*` allows a namespace whose functions are all
# pure value computations; mixed namespaces are listed name by name.
PURE_EXTENSION_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "APOC text, collections, maps, maths": (
        "apoc.text.*", "apoc.coll.*", "apoc.map.*", "apoc.math.*", "apoc.number.*",
        "apoc.bitwise.*", "apoc.agg.*", "apoc.scoring.*",
    ),
    "APOC dates and temporals": ("apoc.date.*", "apoc.temporal.*"),
    "APOC conversion": (
        "apoc.convert.fromJsonList", "apoc.convert.fromJsonMap", "apoc.convert.getJsonProperty",
        "apoc.convert.getJsonPropertyMap", "apoc.convert.toBoolean",
        "apoc.convert.toBooleanList", "apoc.convert.toFloat", "apoc.convert.toIntList",
        "apoc.convert.toInteger", "apoc.convert.toJson", "apoc.convert.toList",
        "apoc.convert.toMap", "apoc.convert.toNode", "apoc.convert.toNodeList",
        "apoc.convert.toRelationship", "apoc.convert.toRelationshipList", "apoc.convert.toSet",
        "apoc.convert.toSortedJsonMap", "apoc.convert.toString", "apoc.convert.toStringList",
        "apoc.json.path",
    ),
    "APOC graph elements (read only)": (
        "apoc.any.property", "apoc.any.properties", "apoc.any.isDeleted",
        "apoc.node.degree", "apoc.node.degree.in", "apoc.node.degree.out", "apoc.node.id",
        "apoc.node.labels", "apoc.node.relationship.exists", "apoc.node.relationship.types",
        "apoc.node.relationships.exist", "apoc.nodes.connected", "apoc.nodes.isDense",
        "apoc.nodes.relationship.types", "apoc.nodes.relationships.exist",
        "apoc.rel.id", "apoc.rel.type", "apoc.rel.startNode", "apoc.rel.endNode",
        "apoc.label.exists", "apoc.path.combine", "apoc.path.create", "apoc.path.elements",
        "apoc.path.slice", "apoc.meta.cypher.isType", "apoc.meta.cypher.type",
        "apoc.meta.cypher.types", "apoc.meta.isType", "apoc.meta.type", "apoc.meta.types",
    ),
    "APOC hashing and utilities": (
        "apoc.util.md5", "apoc.util.sha1", "apoc.util.sha256", "apoc.util.sha384",
        "apoc.util.sha512", "apoc.util.compress", "apoc.util.decompress",
        "apoc.util.validatePredicate", "apoc.hashing.fingerprint",
        "apoc.hashing.fingerprinting", "apoc.data.url", "apoc.data.email", "apoc.version",
    ),
    "GDS (pure)": ("gds.similarity.*", "gds.util.asNode", "gds.util.asNodes"),
}  # fmt: skip

_EXACT = frozenset(
    name.lower()
    for group in (BUILTIN_FUNCTIONS, BACKEND_FUNCTIONS, PURE_EXTENSION_FUNCTIONS)
    for names in group.values()
    for name in names
    if "*" not in name
)
_PATTERNS = tuple(
    name.lower()
    for names in PURE_EXTENSION_FUNCTIONS.values()
    for name in names
    if "*" in name
)

# `any(fnmatchcase(name, p) for p in _PATTERNS)` in one match (hot path)
_PATTERNS_MATCH = re.compile("|".join(translate(p) for p in _PATTERNS)).match

AGGREGATES = frozenset(name.lower() for name in BUILTIN_FUNCTIONS["aggregating"])


def contains_aggregate(expr: ast.Node) -> bool:
    """An aggregate at this projection's level (subqueries aggregate in their own scope)."""
    stack = [expr]  # iterative: an operator chain `a + b + …` is as deep as it is long
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionCall) and node.name.lower() in AGGREGATES:
            return True
        if not isinstance(node, ast.SubqueryExpr | ast.PatternComprehension):
            stack.extend(node.children())  # type: ignore[arg-type]
    return False


def is_allowed_function(name: str, extra: Iterable[str] = ()) -> bool:
    """Whether a read-only query may call `name` (`extra`: the operator's shell patterns)."""
    lowered = name.lower()
    if lowered in _EXACT or _PATTERNS_MATCH(lowered):
        return True
    return any(fnmatchcase(lowered, p.lower()) for p in extra)


def render_markdown() -> str:
    """The Cypher part of docs/functions.md: every allowed function, by group (the page adds
    SQL's: `query_guard.sql.functions_page`)."""
    lines = [
        "# Functions allowed in read-only mode",
        "",
        "Generated from `proxy/cypher/functions.py` and `proxy/sql/functions.py` by",
        "`python -m query_guard.sql.functions_page > docs/functions.md`; do not edit by hand",
        "(tests/unit/test_read_only_show.py checks it is current).",
        "",
        "With `[guard] read_only = true` (the default) a Cypher query may call only the functions",
        "below; any other function is blocked with `SEC.PROCEDURE` (\"function X is not on the",
        "allow-list\") unless it matches a shell pattern in `[guard] allowed_functions`.",
        "Names are compared case-insensitively. A pattern ending in `.*` allows a namespace",
        "whose functions are all pure (no writes, loading, network calls, Cypher execution,",
        "sleeping, or access to configuration or other databases).",
        "",
    ]
    sections = [
        ("Cypher built-ins", BUILTIN_FUNCTIONS),
        ("Backend built-ins", BACKEND_FUNCTIONS),
        ("Pure extension functions", PURE_EXTENSION_FUNCTIONS),
    ]
    for title, groups in sections:
        lines += [f"## {title}", ""]
        for group, names in groups.items():
            listed = ", ".join(f"`{n}`" for n in sorted(names, key=str.lower))
            lines.append(f"- **{group}**: {listed}")
        lines.append("")
    return "\n".join(lines) + "\n"
