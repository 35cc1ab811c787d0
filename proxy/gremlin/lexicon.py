"""The vocabulary of the Gremlin traversal language (TinkerPop 3.8): steps, predicates, enums.

The grammar is generic (`name(args)` chains); these immutable tables decide what a name means.
Step lists follow TinkerPop's `Gremlin.g4` (3.8 line plus the 4.0 additions, so newer clients'
traversals are not rejected as unknown).
"""

from __future__ import annotations

SOURCE_STEPS: frozenset[str] = frozenset({
    "with", "withBulk", "withPath", "withSack", "withSideEffect", "withStrategies",
    "withoutStrategies", "withComputer",
})

SPAWN_STEPS: frozenset[str] = frozenset({
    "V", "E", "addV", "addE", "inject", "io", "mergeV", "mergeE", "call", "union", "match",
})

TERMINAL_STEPS: frozenset[str] = frozenset({
    "next", "toList", "toSet", "toBulkSet", "iterate", "hasNext", "tryNext", "explain",
})

STEPS: frozenset[str] = frozenset({
    "E", "V", "addE", "addLabel", "addV", "aggregate", "all", "and", "any", "as", "asBool",
    "asDate", "asNumber", "asString", "barrier", "both", "bothE", "bothV", "branch", "by", "call",
    "cap", "choose", "coalesce", "coin", "combine", "concat", "conjoin", "connectedComponent",
    "constant", "count", "cyclicPath", "dateAdd", "dateDiff", "dedup", "difference", "discard",
    "disjunct", "drop", "dropLabel", "dropLabels", "element", "elementMap", "emit", "fail",
    "filter", "flatMap", "fold", "format", "from", "group", "groupCount", "has", "hasId", "hasKey",
    "hasLabel", "hasNot", "hasValue", "id", "identity", "in", "inE", "inV", "index", "inject",
    "intersect", "is", "key", "lTrim", "label", "labels", "length", "limit", "local", "loops",
    "map", "match", "math", "max", "mean", "merge", "mergeE", "mergeV", "min", "none", "not",
    "option", "optional", "or", "order", "otherV", "out", "outE", "outV", "pageRank", "path",
    "peerPressure", "product", "profile", "program", "project", "properties", "property",
    "propertyMap", "rTrim", "range", "read", "repeat", "replace", "reverse", "sack", "sample",
    "select", "shortestPath", "sideEffect", "simplePath", "skip", "split", "subgraph",
    "substring", "sum", "tail", "timeLimit", "times", "to", "toE", "toLower", "toUpper", "toV",
    "tree", "trim", "unfold", "union", "until", "value", "valueMap", "values", "where", "with",
    "write",
})

# Predicate functions: name -> "P" or "TextP".
PREDICATES: dict[str, str] = {
    **{n: "P" for n in (
        "eq", "neq", "lt", "lte", "gt", "gte", "inside", "outside", "between", "within",
        "without", "not", "typeOf", "test",
    )},
    **{n: "TextP" for n in (
        "containing", "notContaining", "startingWith", "notStartingWith", "endingWith",
        "notEndingWith", "regex", "notRegex",
    )},
}
# How many arguments each predicate takes: (min, max); max None = any number.
PREDICATE_ARITY: dict[str, tuple[int, int | None]] = {
    **{n: (1, 1) for n in PREDICATES},
    "inside": (2, 2), "outside": (2, 2), "between": (2, 2),
    "within": (0, None), "without": (0, None),
}
PREDICATE_LINKS: frozenset[str] = frozenset({"and", "or", "negate"})

# Enum kind -> {spelling accepted after `Kind.` -> canonical member}.
_GTYPES = (
    "BIGDECIMAL", "BIGINT", "BINARY", "BOOLEAN", "BYTE", "CHAR", "DATETIME", "DOUBLE", "DURATION",
    "EDGE", "FLOAT", "GRAPH", "INT", "LIST", "LONG", "MAP", "NULL", "NUMBER", "PATH", "PROPERTY",
    "SET", "SHORT", "STRING", "TREE", "UUID", "VERTEX", "VPROPERTY",
)
ENUMS: dict[str, dict[str, str]] = {
    "T": {n: n for n in ("id", "label", "key", "value")},
    "Order": {n: n for n in ("asc", "desc", "shuffle")},
    "Scope": {n: n for n in ("local", "global")},
    "Column": {n: n for n in ("keys", "values")},
    "Direction": {"IN": "IN", "OUT": "OUT", "BOTH": "BOTH", "from": "OUT", "to": "IN"},
    "Pop": {n: n for n in ("first", "last", "all", "mixed")},
    "Cardinality": {n: n for n in ("single", "list", "set")},
    "Operator": {n: n for n in (
        "addAll", "and", "assign", "div", "max", "min", "minus", "mult", "or", "sum", "sumLong",
    )},
    "Pick": {n: n for n in ("any", "none", "unproductive")},
    "Merge": {n: n for n in ("onCreate", "onMatch", "outV", "inV")},
    "DT": {n: n for n in ("second", "minute", "hour", "day")},
    "Barrier": {"normSack": "normSack"},
    "GType": {**{n: n for n in _GTYPES}, **{n.lower(): n for n in _GTYPES},
              "bigDecimal": "BIGDECIMAL", "bigInt": "BIGINT", "vProperty": "VPROPERTY"},
    "WithOptions": {n: n for n in (
        "tokens", "none", "ids", "labels", "keys", "values", "all", "indexer", "list", "map",
    )},
    "IO": {n: n for n in ("reader", "writer", "gryo", "graphson", "graphml", "registry")},
    "ConnectedComponent": {n: n for n in ("component", "edges", "propertyName")},
    "PageRank": {n: n for n in ("edges", "times", "propertyName")},
    "PeerPressure": {n: n for n in ("edges", "times", "propertyName")},
    "ShortestPath": {n: n for n in (
        "target", "edges", "distance", "maxDistance", "includeEdges",
    )},
}

# Bare names that are enum members (the grammar's short forms). A bare name not listed here
# is a variable (parameter). Lower-case GType names are only enums inside asNumber()/typeOf().
SHORT_ENUMS: dict[str, tuple[str, str]] = {
    **{n: ("T", n) for n in ENUMS["T"]},
    **{n: ("Order", n) for n in ENUMS["Order"]},
    **{n: ("Scope", n) for n in ENUMS["Scope"]},
    **{n: ("Column", n) for n in ENUMS["Column"]},
    **{k: ("Direction", v) for k, v in ENUMS["Direction"].items()},
    **{n: ("Pop", n) for n in ENUMS["Pop"]},
    **{n: ("Cardinality", n) for n in ENUMS["Cardinality"]},
    **{n: ("Operator", n) for n in ENUMS["Operator"] if n not in ("and", "or")},
    "and": ("Operator", "and"),
    "or": ("Operator", "or"),
    **{n: ("Pick", n) for n in ENUMS["Pick"]},
    **{n: ("Merge", n) for n in ENUMS["Merge"]},
    **{n: ("DT", n) for n in ENUMS["DT"]},
    "normSack": ("Barrier", "normSack"),
    **{n: ("GType", n) for n in _GTYPES},
}
GTYPE_CONTEXT_STEPS: frozenset[str] = frozenset({"asNumber", "typeOf"})

# Literal-making functions that look like calls: datetime('..'), UUID('..').
DATETIME_FUNCS: frozenset[str] = frozenset({"datetime", "DateTime"})
UUID_FUNCS: frozenset[str] = frozenset({"UUID"})

# Names that only appear in Groovy/Java code, never in a traversal: seeing one of these as a
# bare statement keyword or as a method makes the text script content rather than a typo.
GROOVY_KEYWORDS: frozenset[str] = frozenset({
    "def", "var", "import", "package", "class", "interface", "enum", "return", "if", "else",
    "for", "while", "do", "switch", "case", "try", "catch", "finally", "throw", "assert",
    "synchronized", "static", "final", "void", "this", "super", "println", "print", "it",
    "instanceof", "goto", "native", "transient", "volatile", "abstract", "extends", "implements",
})
REFLECTION_METHODS: frozenset[str] = frozenset({
    "getClass", "class", "forName", "getRuntime", "exec", "execute", "invoke", "newInstance",
    "getMethod", "getDeclaredMethod", "getMethods", "getDeclaredField", "getField",
    "getClassLoader", "loadClass", "eval", "evaluate", "exit", "halt", "sleep", "start",
    "getProperty", "setProperty", "metaClass", "getMetaClass", "invokeMethod", "each",
    "collect", "withCloseable", "withReader", "withWriter", "text", "getText", "bytes",
    "getenv", "setAccessible", "getConstructor", "parse", "run",
})

# Keys of the `with()` modulator that gremlinpython sends as plain strings (Java constants).
WITH_OPTION_KEYS: dict[str, tuple[str, str]] = {
    "~tinkerpop.valueMap.tokens": ("WithOptions", "tokens"),
    "~tinkerpop.index.indexer": ("WithOptions", "indexer"),
    "~tinkerpop.io.reader": ("IO", "reader"),
    "~tinkerpop.io.writer": ("IO", "writer"),
    "~tinkerpop.io.registry": ("IO", "registry"),
    "gremlin.connectedComponentVertexProgram.component": ("ConnectedComponent", "component"),
    "~tinkerpop.connectedComponent.edges": ("ConnectedComponent", "edges"),
    "~tinkerpop.connectedComponent.propertyName": ("ConnectedComponent", "propertyName"),
    "~tinkerpop.pageRank.edges": ("PageRank", "edges"),
    "~tinkerpop.pageRank.propertyName": ("PageRank", "propertyName"),
    "~tinkerpop.pageRank.times": ("PageRank", "times"),
    "~tinkerpop.peerPressure.edges": ("PeerPressure", "edges"),
    "~tinkerpop.peerPressure.propertyName": ("PeerPressure", "propertyName"),
    "~tinkerpop.peerPressure.times": ("PeerPressure", "times"),
    "~tinkerpop.shortestPath.target": ("ShortestPath", "target"),
    "~tinkerpop.shortestPath.edges": ("ShortestPath", "edges"),
    "~tinkerpop.shortestPath.distance": ("ShortestPath", "distance"),
    "~tinkerpop.shortestPath.maxDistance": ("ShortestPath", "maxDistance"),
    "~tinkerpop.shortestPath.includeEdges": ("ShortestPath", "includeEdges"),
}

# steps that write to the graph or touch server files (refused read-only; never repaired)
MUTATING_STEPS: frozenset[str] = frozenset(
    {"addV", "addE", "property", "drop", "mergeV", "mergeE", "addLabel", "dropLabel",
     "dropLabels", "io"}
)  # fmt: skip
