"""The database's indexes and constraints, read at schema discovery, as the rows of Neo4j 5's
`SHOW INDEXES` and `SHOW CONSTRAINTS` (their default columns, in order), which the proxy then
answers from its catalog (`query_guard.compat.procedures`).

* A Bolt backend that has the commands (Neo4j, ArcadeDB) is asked `SHOW INDEXES` / `SHOW
  CONSTRAINTS` and its rows are kept as they come, column by column; a value JSON cannot hold
  (Neo4j's `lastRead` date-time) is kept as null.
* FalkorDB is asked `CALL db.indexes()` (one row per label or type: `properties`, `types` =
  property -> [RANGE | FULLTEXT | VECTOR], `entitytype`, `status`) and `CALL db.constraints()`
  (`type` UNIQUE | MANDATORY, `label`, `properties`, `entitytype`, `status`). Each range or
  vector index on one property is one row, a label's full-text properties one FULLTEXT row, as
  Neo4j lists them. FalkorDB's indexes and constraints have no names, so they get the names
  Neo4j generates for an unnamed one: `index_` / `constraint_` and eight hex digits of a hash
  of what it covers (stable across discoveries). UNIQUE is Neo4j's UNIQUENESS /
  RELATIONSHIP_UNIQUENESS, MANDATORY its NODE_ / RELATIONSHIP_PROPERTY_EXISTENCE; only
  operational constraints are listed.
* Every row also holds the columns Neo4j 5 lists only under `YIELD *` or by name (INDEX_ALL /
  CONSTRAINT_ALL: `options`, `createStatement`, …): the database's own when it gives them,
  otherwise what Neo4j would show (`options` = `{indexProvider, indexConfig}`, the CREATE
  statement that makes the index or constraint).
* A backend with neither (an error answering them) has none: both lists stay empty.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable
from typing import Any

from query_guard.backend import Backend, BackendError, BackendUnavailable, collect

Row = dict[str, Any]

INDEX_COLUMNS = (
    "id", "name", "state", "populationPercent", "type", "entityType", "labelsOrTypes",
    "properties", "indexProvider", "owningConstraint", "lastRead", "readCount",
)  # fmt: skip
CONSTRAINT_COLUMNS = (
    "id", "name", "type", "entityType", "labelsOrTypes", "properties", "ownedIndex",
    "propertyType",
)  # fmt: skip
# every column (Neo4j 5's `YIELD *`), the default ones first
INDEX_ALL = (*INDEX_COLUMNS, "trackedSince", "options", "failureMessage", "createStatement")
CONSTRAINT_ALL = (*CONSTRAINT_COLUMNS, "options", "createStatement")

_PROVIDERS = {"RANGE": "range-1.0", "FULLTEXT": "fulltext-1.0", "VECTOR": "vector-2.0"}
_STATES = {"OPERATIONAL": "ONLINE", "UNDER CONSTRUCTION": "POPULATING"}


async def discover_indexes(backend: Backend) -> dict[str, list[Row]]:
    """`{"indexes": [row, …], "constraints": [row, …]}` in SHOW's column shapes."""
    indexes = await _rows(backend, "SHOW INDEXES YIELD *")
    if indexes is None:
        indexes = await _rows(backend, "SHOW INDEXES")
    if indexes is not None:
        constraints = await _rows(backend, "SHOW CONSTRAINTS YIELD *")
        if constraints is None:
            constraints = await _rows(backend, "SHOW CONSTRAINTS") or []
        return {
            "indexes": [index_details(neo4j_row(r, INDEX_ALL)) for r in indexes],
            "constraints": [constraint_details(neo4j_row(r, CONSTRAINT_ALL)) for r in constraints],
        }
    return {
        "indexes": falkordb_indexes(await _rows(backend, "CALL db.indexes()") or []),
        "constraints": falkordb_constraints(await _rows(backend, "CALL db.constraints()") or []),
    }


async def _rows(backend: Backend, query: str) -> list[Row] | None:
    """The rows as dicts; None when the backend refuses the statement (it lacks it)."""
    try:
        stream = await backend.run(query, {})
        rows = await collect(stream)
    except BackendUnavailable:
        raise
    except BackendError:
        return None
    return [dict(zip(stream.keys, row, strict=False)) for row in rows]


def neo4j_row(row: Row, columns: Iterable[str]) -> Row:
    """A Bolt backend's SHOW row: its value of each column, null when JSON cannot hold it."""
    return {c: _plain(row.get(c)) for c in columns}


def _plain(value: Any) -> Any:
    """The value when JSON holds it as it is (the catalog is saved as JSON), else null."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return None
    return value


def generated_name(prefix: str, *covers: str) -> str:
    """The name Neo4j gives an unnamed index or constraint: `index_1a2b3c4d` (here a CRC-32 of
    what it covers, so the same index keeps its name)."""
    return f"{prefix}_{zlib.crc32(chr(31).join(covers).encode()):08x}"


def _ident(name: Any) -> str:
    return "`" + str(name).replace("`", "``") + "`"


def _on(row: Row, var: str) -> str:
    """`(n:`Label`)` or `()-[r:`TYPE`]-()`, the pattern of a CREATE statement."""
    label = ":".join(_ident(x) for x in row.get("labelsOrTypes") or ())
    if row.get("entityType") == "RELATIONSHIP":
        return f"()-[{var}:{label}]-()"
    return f"({var}:{label})"


def _props(row: Row, var: str) -> str:
    return ", ".join(f"{var}.{_ident(p)}" for p in row.get("properties") or ())


def index_details(row: Row) -> Row:
    """The row with Neo4j's values for the non-default columns it lacks."""
    kind = str(row.get("type") or "RANGE")
    if row.get("options") is None:
        provider = row.get("indexProvider") or _PROVIDERS.get(kind, kind.lower())
        row["options"] = {"indexProvider": provider, "indexConfig": {}}
    if row.get("failureMessage") is None:
        row["failureMessage"] = ""
    if row.get("createStatement") is None and row.get("labelsOrTypes") and kind != "LOOKUP":
        var = "r" if row.get("entityType") == "RELATIONSHIP" else "n"
        props = _props(row, var)
        on = f"ON EACH [{props}]" if kind == "FULLTEXT" else f"ON ({props})"
        row["createStatement"] = (
            f"CREATE {kind} INDEX {_ident(row.get('name'))} FOR {_on(row, var)} {on}"
        )
    return row


_REQUIRES = {"UNIQUENESS": "IS UNIQUE", "KEY": "IS KEY", "EXISTENCE": "IS NOT NULL"}


def constraint_details(row: Row) -> Row:
    """The row with Neo4j's values for the non-default columns it lacks."""
    if row.get("options") is None:
        owned = row.get("ownedIndex") is not None
        row["options"] = {"indexProvider": "range-1.0", "indexConfig": {}} if owned else {}
    kind = str(row.get("type") or "")
    requires = next((v for k, v in _REQUIRES.items() if kind.endswith(k)), None)
    if row.get("createStatement") is None and requires and row.get("labelsOrTypes"):
        var = "r" if row.get("entityType") == "RELATIONSHIP" else "n"
        props = _props(row, var)
        props = props if len(row.get("properties") or ()) == 1 else f"({props})"
        row["createStatement"] = (
            f"CREATE CONSTRAINT {_ident(row.get('name'))} FOR {_on(row, var)} "
            f"REQUIRE {props} {requires}"
        )
    return row


def _names(value: Any) -> list[str]:
    """FalkorDB's list of names; the text `[a, b]` in clients that render it."""
    if isinstance(value, str):
        value = [p.strip() for p in value.strip("[]").split(",") if p.strip()]
    return [str(v) for v in value or ()]


def falkordb_indexes(rows: Iterable[Row]) -> list[Row]:
    """FalkorDB `db.indexes()` rows -> SHOW INDEXES rows (ids in name order)."""
    found: list[Row] = []
    for row in rows:
        label, entity = str(row.get("label")), str(row.get("entitytype", "NODE")).upper()
        state = _STATES.get(str(row.get("status", "")).upper(), "FAILED")
        kinds = row.get("types") or {}
        by_kind: dict[str, list[str]] = {}
        for prop in _names(row.get("properties")):
            for kind in kinds.get(prop, ()) if isinstance(kinds, dict) else ():
                by_kind.setdefault(str(kind).upper(), []).append(prop)
        for kind, props in sorted(by_kind.items()):
            groups = [props] if kind == "FULLTEXT" else [[p] for p in props]
            found += [_falkordb_index(kind, entity, label, group, state) for group in groups]
    return _numbered(found)


def _falkordb_index(kind: str, entity: str, label: str, props: list[str], state: str) -> Row:
    return index_details({
        "id": 0,
        "name": generated_name("index", kind, entity, label, *props),
        "state": state,
        "populationPercent": 100.0 if state == "ONLINE" else 0.0,
        "type": kind,
        "entityType": entity,
        "labelsOrTypes": [label],
        "properties": props,
        "indexProvider": _PROVIDERS.get(kind, kind.lower()),
        "owningConstraint": None,
        "lastRead": None,
        "readCount": None,
        "trackedSince": None,
    })  # fmt: skip


def falkordb_constraints(rows: Iterable[Row]) -> list[Row]:
    """FalkorDB `db.constraints()` rows -> SHOW CONSTRAINTS rows (operational ones only)."""
    found: list[Row] = []
    for row in rows:
        if str(row.get("status", "")).upper() != "OPERATIONAL":
            continue
        kind, label = str(row.get("type", "")).upper(), str(row.get("label"))
        entity = str(row.get("entitytype", "NODE")).upper()
        props = _names(row.get("properties"))
        on_rel = entity == "RELATIONSHIP"
        if kind == "UNIQUE":
            neo4j_type = "RELATIONSHIP_UNIQUENESS" if on_rel else "UNIQUENESS"
        else:
            neo4j_type = f"{'RELATIONSHIP' if on_rel else 'NODE'}_PROPERTY_EXISTENCE"
        found.append(constraint_details({
            "id": 0,
            "name": generated_name("constraint", neo4j_type, entity, label, *props),
            "type": neo4j_type,
            "entityType": entity,
            "labelsOrTypes": [label],
            "properties": props,
            "ownedIndex": None,
            "propertyType": None,
        }))  # fmt: skip
    return _numbered(found)


def _numbered(rows: list[Row]) -> list[Row]:
    rows.sort(key=lambda r: r["name"])
    for number, row in enumerate(rows, 1):
        row["id"] = number
    return rows


_CONSTRAINT_KINDS = {  # the words of `SHOW <words> CONSTRAINTS` -> the end of the type's name
    ("UNIQUE",): "UNIQUENESS",
    ("KEY",): "_KEY",
    ("EXISTENCE",): "PROPERTY_EXISTENCE",
    ("PROPERTY", "EXISTENCE"): "PROPERTY_EXISTENCE",
    ("PROPERTY", "TYPE"): "PROPERTY_TYPE",
}
_INDEX_KINDS = ("RANGE", "FULLTEXT", "TEXT", "POINT", "VECTOR", "LOOKUP")


def shown(kind: str) -> Callable[[Row], bool]:
    """Which rows `SHOW [filter] INDEXES | CONSTRAINTS` lists (`SHOW VECTOR INDEXES`, `SHOW
    NODE UNIQUE CONSTRAINTS`, `SHOW REL EXIST CONSTRAINTS`, …) as a predicate on a row; any
    other SHOW lists all its rows. A filter Neo4j 5 no longer has (BTREE) lists nothing."""
    words = [{"REL": "RELATIONSHIP", "EXIST": "EXISTENCE"}.get(w, w) for w in kind.upper().split()]
    target = words[-1] if words else ""
    words = words[1:-1]
    if target not in ("INDEX", "INDEXES", "CONSTRAINT", "CONSTRAINTS") or words in ([], ["ALL"]):
        return lambda row: True
    if target.startswith("CONSTRAINT"):
        entity = words.pop(0) if words[0] in ("NODE", "RELATIONSHIP") else None
        suffix = _CONSTRAINT_KINDS.get(tuple(words))
        return lambda row: (
            suffix is not None
            and str(row.get("type", "")).endswith(suffix)
            and entity in (None, row.get("entityType"))
        )
    wanted = words[0] if len(words) == 1 and words[0] in _INDEX_KINDS else None
    return lambda row: wanted is not None and row.get("type") == wanted
