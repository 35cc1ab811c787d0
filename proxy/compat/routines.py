"""The rows of `SHOW PROCEDURES` and `SHOW FUNCTIONS` for what the proxy answers, with Neo4j 5's
full column set (Cypher manual 5, clauses/listing-procedures and listing-functions).

`SHOW PROCEDURES` lists name, description, mode and worksOnSystem by default; `YIELD *` adds
signature, argumentDescription, returnDescription, admin, rolesExecution,
rolesBoostedExecution, isDeprecated (5.9), deprecatedBy (5.21) and option. `SHOW FUNCTIONS`
lists name, category and description by default; `YIELD *` adds signature, isBuiltIn,
argumentDescription, returnDescription, aggregating, rolesExecution, rolesBoostedExecution,
isDeprecated and deprecatedBy. Values take Neo4j's shapes: a signature
`db.labels() :: (label :: STRING)`, an argument `{name, description: "config = {} :: MAP",
isDeprecated, default, type}`, a returned column `{name, description: "label :: STRING",
isDeprecated, type}`; the role columns are null, as Neo4j shows them to a user without the
SHOW ROLE privilege (the proxy has no roles).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Row = dict[str, Any]

PROCEDURE_COLUMNS = ("name", "description", "mode", "worksOnSystem")
PROCEDURE_ALL = (
    *PROCEDURE_COLUMNS, "signature", "argumentDescription", "returnDescription", "admin",
    "rolesExecution", "rolesBoostedExecution", "isDeprecated", "deprecatedBy", "option",
)  # fmt: skip
FUNCTION_COLUMNS = ("name", "category", "description")
FUNCTION_ALL = (
    *FUNCTION_COLUMNS, "signature", "isBuiltIn", "argumentDescription", "returnDescription",
    "aggregating", "rolesExecution", "rolesBoostedExecution", "isDeprecated", "deprecatedBy",
)  # fmt: skip

_CONFIG = (("config", "MAP", "{}"),)  # APOC's optional configuration map
# procedure -> its arguments (name, type, default or None); none when not listed
PROCEDURE_ARGUMENTS: dict[str, tuple[tuple[str, str, str | None], ...]] = {
    "apoc.meta.data": _CONFIG,
    "apoc.meta.schema": _CONFIG,
    "apoc.meta.graph": _CONFIG,
    "apoc.meta.subGraph": (("config", "MAP", None),),
    "apoc.schema.nodes": _CONFIG,
    "apoc.schema.relationships": _CONFIG,
}
# output column -> its type where it is not STRING
_OUTPUT_TYPES = {
    "versions": "LIST<STRING>", "nodeLabels": "LIST<STRING>", "propertyTypes": "LIST<STRING>",
    "mandatory": "BOOLEAN", "nodes": "LIST<NODE>", "relationships": "LIST<RELATIONSHIP>",
    "count": "INTEGER", "unique": "BOOLEAN", "index": "BOOLEAN", "existence": "BOOLEAN",
    "array": "BOOLEAN", "sample": "LIST<ANY>", "left": "INTEGER", "right": "INTEGER",
    "other": "LIST<STRING>", "otherLabels": "LIST<STRING>", "value": "MAP",
    "labelCount": "INTEGER", "relTypeCount": "INTEGER", "propertyKeyCount": "INTEGER",
    "nodeCount": "INTEGER", "relCount": "INTEGER", "labels": "MAP", "relTypes": "MAP",
    "relTypesCount": "MAP", "stats": "MAP", "properties": "LIST<STRING>",
    "populationProgress": "FLOAT", "size": "INTEGER", "valuesSelectivity": "FLOAT",
}  # fmt: skip
_OUTPUT_TYPES_OF = {  # a column whose type depends on the procedure
    ("apoc.schema.nodes", "label"): "ANY",
}


def _argument(name: str, kind: str, default: str | None) -> Row:
    described = f"{name} = {default} :: {kind}" if default is not None else f"{name} :: {kind}"
    row: Row = {"name": name, "description": described, "isDeprecated": False}
    if default is not None:
        row["default"] = f"DefaultParameterValue{{value={default}, type={kind}}}"
    row["type"] = kind
    return row


def _arguments_text(arguments: Iterable[Row]) -> str:
    return ", ".join(a["description"] for a in arguments)


def procedure_row(name: str, description: str, columns: Iterable[str]) -> Row:
    """One `SHOW PROCEDURES YIELD *` row of a read procedure the proxy answers."""
    arguments = [_argument(*a) for a in PROCEDURE_ARGUMENTS.get(name, ())]
    returned = []
    for column in columns:
        kind = _OUTPUT_TYPES_OF.get((name, column)) or _OUTPUT_TYPES.get(column, "STRING")
        returned.append({"name": column, "description": f"{column} :: {kind}",
                         "isDeprecated": False, "type": kind})  # fmt: skip
    outputs = ", ".join(r["description"] for r in returned)
    signature = f"{name}({_arguments_text(arguments)}) :: ({outputs})"
    return {
        "name": name, "description": description, "mode": "READ", "worksOnSystem": False,
        "signature": signature, "argumentDescription": arguments,
        "returnDescription": returned, "admin": False, "rolesExecution": None,
        "rolesBoostedExecution": None, "isDeprecated": False, "deprecatedBy": None,
        "option": {"deprecated": False},
    }  # fmt: skip


# the functions the proxy answers (by rewriting them): name, arguments, return type, description
_FUNCTIONS = (
    ("apoc.any.properties", (("object", "ANY", None), ("keys", "LIST<STRING>", "null")), "MAP",
     "the properties of a map, node or relationship (answered by the proxy)"),
    ("apoc.any.property", (("object", "ANY", None), ("key", "STRING", None)), "ANY",
     "one property of a map, node or relationship (answered by the proxy)"),
)  # fmt: skip


def function_rows() -> list[Row]:
    """The `SHOW FUNCTIONS YIELD *` rows of the functions the proxy answers."""
    rows = []
    for name, args, returns, description in _FUNCTIONS:
        arguments = [_argument(*a) for a in args]
        rows.append({
            "name": name, "category": "apoc", "description": description,
            "signature": f"{name}({_arguments_text(arguments)}) :: {returns}",
            "isBuiltIn": False, "argumentDescription": arguments, "returnDescription": returns,
            "aggregating": False, "rolesExecution": None, "rolesBoostedExecution": None,
            "isDeprecated": False, "deprecatedBy": None,
        })  # fmt: skip
    return rows
