"""The AST node of a Neo4j 5 index or constraint command, every part parsed (ast.py holds the
other node types; this one only extends `SchemaCommand`).

Example: `CREATE CONSTRAINT c IF NOT EXISTS FOR (n:Person) REQUIRE n.id IS UNIQUE` is
`SchemaDefinition(kind="CREATE CONSTRAINT", name="c", if_exists=True, entity="node",
variable="n", labels=["Person"], properties=["id"], rule="UNIQUE")`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from query_guard.cypher.ast import Expr, Parameter, SchemaCommand


@dataclass(eq=False, slots=True)
class SchemaDefinition(SchemaCommand):
    """CREATE [kind] INDEX / CREATE CONSTRAINT / DROP INDEX / DROP CONSTRAINT.

    `kind` is the command's leading keywords ("CREATE VECTOR INDEX", "DROP CONSTRAINT");
    `if_exists` is `IF NOT EXISTS` on a CREATE, `IF EXISTS` on a DROP; `entity` is "node",
    "relationship" or "" (a DROP by name); `rule` the constraint kind ("UNIQUE", "NODE KEY",
    "NOT NULL", ":: INTEGER", …) and `options` the OPTIONS map (judged like any expression).
    A name given as a parameter (`DROP INDEX $name`) is `name_parameter`, `name` None.
    """

    name: str | None = None
    name_parameter: Parameter | None = None  # `CREATE INDEX $name …`: the name is a parameter
    if_exists: bool = False
    entity: str = ""
    variable: str | None = None
    labels: list[str] = field(default_factory=list)
    properties: list[str] = field(default_factory=list)
    rule: str = ""
    options: Expr | None = None
