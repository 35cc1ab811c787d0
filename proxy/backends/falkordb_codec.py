"""The pure half of the FalkorDB backend: parameters as a `CYPHER …` header, the compact RESP
reply decoded into the neutral result model, statistics as Neo4j counters, errors as Neo4j
codes, plans as Neo4j plan trees, `falkordb://` URLs. No I/O here, so all of it is testable
without a server.
"""

from __future__ import annotations

import asyncio
import functools
import math
import re
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any
from urllib.parse import unquote, urlsplit

from query_guard.backend import BackendError
from query_guard.values import Duration, GraphNode, GraphPath, GraphRelationship, Point

DEFAULT_PORT = 6379
DEFAULT_GRAPH = "movies"
WGS84_2D = 4326  # FalkorDB points are geographic (latitude, longitude)
_EPOCH = datetime(1970, 1, 1)
_INT64 = (-(2**63), 2**63 - 1)
_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# FalkorDB statistics line prefix -> Neo4j counter name (as in Bolt SUCCESS "stats").
_COUNTERS = {
    "Nodes created": "nodes-created",
    "Nodes deleted": "nodes-deleted",
    "Relationships created": "relationships-created",
    "Relationships deleted": "relationships-deleted",
    "Properties set": "properties-set",
    "Properties removed": "properties-set",  # Neo4j counts a removal as a property set
    "Labels added": "labels-added",
    "Labels removed": "labels-removed",
    "Indices created": "indexes-added",
    "Indices deleted": "indexes-removed",
    "Constraints created": "constraints-added",
    "Constraints deleted": "constraints-removed",
}
_SCHEMA_COUNTERS = {"indexes-added", "indexes-removed", "constraints-added", "constraints-removed"}

# FalkorDB error text -> Neo4j status code; first match wins, default ExecutionFailed.
_ERROR_CODES: tuple[tuple[str, str], ...] = (
    ("Invalid input", "Neo.ClientError.Statement.SyntaxError"),
    ("errMsg:", "Neo.ClientError.Statement.SyntaxError"),
    ("(line ", "Neo.ClientError.Statement.SyntaxError"),
    ("more than one statement", "Neo.ClientError.Statement.SyntaxError"),
    ("Missing parameters", "Neo.ClientError.Statement.ParameterMissing"),
    ("Division by zero", "Neo.ClientError.Statement.ArithmeticError"),
    ("Type mismatch", "Neo.ClientError.Statement.TypeError"),
    ("Query timed out", "Neo.ClientError.Transaction.TransactionTimedOut"),
    ("only on read-only queries", "Neo.ClientError.Statement.AccessMode"),
    ("empty key", "Neo.ClientError.Database.DatabaseNotFound"),
    ("not defined", "Neo.ClientError.Statement.SemanticError"),
    ("Unknown function", "Neo.ClientError.Statement.SemanticError"),
    ("Procedure", "Neo.ClientError.Procedure.ProcedureNotFound"),
    ("UNION", "Neo.ClientError.Statement.SemanticError"),
    ("requires bound nodes", "Neo.ClientError.Statement.SemanticError"),
    ("already declared", "Neo.ClientError.Statement.SemanticError"),
    ("max pending queries", "Neo.TransientError.General.DatabaseUnavailable"),
)
EXECUTION_FAILED = "Neo.DatabaseError.Statement.ExecutionFailed"
TYPE_ERROR = "Neo.ClientError.Statement.TypeError"

# Write clauses outside string literals and comments (the fallback when no counter moved).
_STRINGS_AND_COMMENTS = re.compile(
    r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`|//[^\n]*|/\*.*?\*/", re.S
)
_WRITE_CLAUSE = re.compile(r"(?<![.\w$])(CREATE|MERGE|DELETE|SET|REMOVE|DROP)(?!\w)", re.I)


_PARSE_ERROR = re.compile(
    r"errMsg: (?P<msg>.*?) line: (?P<line>\d+), column: (?P<col>\d+), offset: (?P<off>\d+)"
    r" errCtx: (?P<ctx>.*) errCtxOffset: (?P<ctxoff>\d+)",
    re.S,
)


def error_code(message: str) -> str:
    """The Neo4j status code for a FalkorDB error message."""
    for needle, code in _ERROR_CODES:
        if needle in message:
            return code
    return EXECUTION_FAILED


def backend_error(message: str) -> BackendError:
    """A FalkorDB error as a `BackendError`; parse errors are reworded the way Neo4j words
    them (position, then the query line with a caret) so repair prompts read the same."""
    match = _PARSE_ERROR.fullmatch(message.strip())
    if match:
        caret = " " * (int(match["ctxoff"]) + 1) + "^"
        message = (
            f"{match['msg']} (line {match['line']}, column {match['col']} "
            f'(offset: {match["off"]}))\n"{match["ctx"]}"\n{caret}'
        )
    return BackendError(message, error_code(message))


# ---------------------------------------------------------------------- parameters


def cypher_literal(value: Any) -> str:
    """A parameter value as a literal of FalkorDB's `CYPHER name=value` header.

    The header takes literals only (no function calls), so temporal, spatial and byte values
    cannot be passed as parameters: they raise a TypeError-coded `BackendError` rather than
    being silently turned into strings.
    """
    kind = type(value)
    if kind is str:  # the common cases first
        return _string_literal(value)
    if kind is int and _INT64[0] <= value <= _INT64[1]:
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise BackendError(f"integer parameter {value} exceeds 64 bits", TYPE_ERROR)
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise BackendError(f"FalkorDB cannot take {value} as a parameter", TYPE_ERROR)
        return repr(value)
    if isinstance(value, str):
        return _string_literal(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(cypher_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            if not isinstance(key, str) or not key or "`" in key:
                raise BackendError(f"map key {key!r} cannot be sent to FalkorDB", TYPE_ERROR)
            parts.append(f"`{key}`:{cypher_literal(item)}")
        return "{" + ",".join(parts) + "}"
    raise BackendError(
        f"FalkorDB takes no {type(value).__name__} parameters (literals only: null, bool, "
        "int, float, string, list, map)",
        TYPE_ERROR,
    )


def _string_literal(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def params_header(parameters: dict[str, Any] | None) -> str:
    """`CYPHER a=1 b="x" ` — FalkorDB's way of passing query parameters."""
    if not parameters:
        return ""
    items = []
    for name, value in parameters.items():
        if name not in _PLAIN_NAMES:
            if not (isinstance(name, str) and _PARAM_NAME.fullmatch(name)):
                raise BackendError(f"parameter name {name!r} is not a plain identifier", TYPE_ERROR)
            if len(_PLAIN_NAMES) < 10_000:
                _PLAIN_NAMES.add(name)
        items.append(f"{name}={cypher_literal(value)}")
    return "CYPHER " + " ".join(items) + " "


_PLAIN_NAMES: set[str] = set()  # parameter names already checked


# ---------------------------------------------------------------------- decoding


class UnknownSchemaId(Exception):
    """A label / type / property id newer than our cache: refresh and decode again."""


class GraphSchemaIds:
    """id -> name tables of one graph, and the schema version they were read at."""

    def __init__(self) -> None:
        self.version = 0
        self.labels: list[str] = []
        self.types: list[str] = []
        self.keys: list[str] = []
        self.lock = asyncio.Lock()

    def decode_rows(self, rows: list[list[Any]]) -> list[list[Any]]:
        """Compact rows as rows of neutral values; raises `UnknownSchemaId` when an id is
        newer than the tables."""
        value = self.value
        try:
            return [[value(cell[0], cell[1]) for cell in row] for row in rows]
        except IndexError as exc:  # an id past the end of a table
            raise UnknownSchemaId from exc

    def decode(self, cell: Sequence[Any]) -> Any:
        """One compact `[type, value]` cell as a neutral value."""
        try:
            return self.value(cell[0], cell[1])
        except IndexError as exc:
            raise UnknownSchemaId from exc

    def value(self, kind: int, raw: Any) -> Any:
        """A compact value of FalkorDB type `kind`, as our RESP client parsed it (bulk strings
        as `str`, integers as `int`); an unknown id raises IndexError. Common types first."""
        if kind == 2:
            return raw if type(raw) is str else text(raw)
        if kind == 3:
            return int(raw)
        if kind == 8:
            return self._node(raw)
        if kind == 1:
            return None
        if kind == 5:
            return float(raw)  # also "inf", "-nan"
        if kind == 4:
            return text(raw) == "true"
        if kind == 6:
            value = self.value
            return [value(item[0], item[1]) for item in raw]
        if kind == 7:
            return self._relationship(raw)
        if kind == 10:
            value = self.value
            return {text(raw[i]): value(*raw[i + 1]) for i in range(0, len(raw), 2)}
        if kind == 9:
            nodes, rels = self.value(*raw[0]), self.value(*raw[1])
            return GraphPath(tuple(nodes), tuple(rels))
        if kind == 11:
            return Point(WGS84_2D, x=float(raw[1]), y=float(raw[0]))
        if kind == 12:
            return [float(v) for v in raw]
        return _decode_temporal(kind, int(raw)) if 13 <= kind <= 16 else None

    def _properties(self, raw: Sequence[Any]) -> dict[str, Any]:
        keys, value = self.keys, self.value
        return {keys[key]: value(kind, item) for key, kind, item in raw}

    def _node(self, raw: Sequence[Any]) -> GraphNode:
        node_id = int(raw[0])
        labels = self.labels
        names = tuple([labels[i] for i in raw[1]])
        return GraphNode(node_id, names, self._properties(raw[2]), str(node_id))

    def _relationship(self, raw: Sequence[Any]) -> GraphRelationship:
        rel_id, start, end = int(raw[0]), int(raw[2]), int(raw[3])
        rel_type = self.types[raw[1]]
        props = self._properties(raw[4])
        return GraphRelationship(
            rel_id, rel_type, start, end, props, str(rel_id), str(start), str(end)
        )


def _decode_temporal(kind: int, seconds: int) -> Any:
    """FalkorDB sends temporal values as whole seconds since the epoch (UTC, no zone)."""
    moment = _EPOCH + timedelta(seconds=seconds)
    if kind == 13:  # localdatetime
        return moment
    if kind == 14:  # date
        return date(moment.year, moment.month, moment.day)
    if kind == 15:  # localtime: a time of day on 1900-01-01
        return moment.time()
    return _duration(seconds)


def _duration(seconds: int) -> Duration:
    """FalkorDB stores a duration as the instant it reaches from the epoch; read it back in
    calendar units (P1M is sent as 31 days, January's length, and comes back as 1 month)."""
    if seconds < 0:
        back = _duration(-seconds)
        return Duration(-back.months, -back.days, -back.seconds)
    moment = _EPOCH + timedelta(seconds=seconds)
    months = (moment.year - 1970) * 12 + moment.month - 1
    rest = moment - datetime(moment.year, moment.month, 1)
    return Duration(months=months, days=rest.days, seconds=rest.seconds)


def text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def parse_statistics(lines: Sequence[Any]) -> dict[str, int]:
    counters: dict[str, int] = {}
    for line in lines:
        name, _, value = text(line).partition(": ")
        key = _COUNTERS.get(name)
        if key is not None:
            counters[key] = counters.get(key, 0) + int(float(value.split(" ")[0]))
    return counters


def query_type(query: str, counters: dict[str, int], has_columns: bool) -> str:
    """Neo4j's r / w / rw / s from what changed, or from the clauses when nothing did."""
    if not counters:  # nothing changed (every read)
        return "r" if not _mentions_writes(query) else "rw" if has_columns else "w"
    if any(counters.get(k) for k in _SCHEMA_COUNTERS):
        return "s"
    if not (any(counters.values()) or _mentions_writes(query)):
        return "r"
    return "rw" if has_columns else "w"


@functools.lru_cache(maxsize=1024)
def _mentions_writes(query: str) -> bool:
    """A write clause outside string literals and comments (cached: apps repeat queries)."""
    return bool(_WRITE_CLAUSE.search(_STRINGS_AND_COMMENTS.sub(" ", query)))


def plan_tree(lines: list[str]) -> dict[str, Any] | None:
    """FalkorDB's indented plan (`Results` / `    Project` / `        Node By Label Scan |
    (p:Person)`) as nested Neo4j plan maps: operatorType, args (`details`), children."""
    root: dict[str, Any] | None = None
    stack: list[tuple[int, dict[str, Any]]] = []
    for line in lines:
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip(" "))
        name, _, details = line.strip().partition("|")
        op: dict[str, Any] = {
            "operatorType": name.strip(),
            "args": {"details": details.strip()} if details.strip() else {},
            "identifiers": [],
            "children": [],
        }
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            stack[-1][1]["children"].append(op)
        elif root is None:
            root = op
        else:  # a second top-level operator: keep the first as the root
            root["children"].append(op)
        stack.append((depth, op))
    return root


def parse_url(url: str) -> tuple[str, int, str, str | None, str | None]:
    """`falkordb://[user:password@]host[:port][/graph]` -> (host, port, graph, user, password)."""
    parts = urlsplit(url)
    if parts.scheme not in {"falkordb", "falkor", "redis"}:
        raise ValueError(f"not a FalkorDB URL (falkordb://host:port/graph): {url}")
    graph = unquote(parts.path.lstrip("/")) or DEFAULT_GRAPH
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    return parts.hostname or "127.0.0.1", parts.port or DEFAULT_PORT, graph, user, password
