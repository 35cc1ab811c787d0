"""`SHOW PROCEDURES` / `SHOW FUNCTIONS` answered by the proxy with Neo4j 5's full column set
(Cypher manual 5: listing-procedures, listing-functions), within the default query limits."""

from __future__ import annotations

import pytest

from query_guard.build import build_guard
from query_guard.compat.procedures import SHOW_COMMANDS
from query_guard.config.load import parse_config
from query_guard.schema.catalog import SchemaCatalog

SCHEMA = SchemaCatalog.from_triples("(Person, ACTED_IN, Movie)")
GUARD = build_guard(parse_config({"compat": {"procedures": "proxy"}}), SCHEMA)


def test_the_columns_are_neo4j_5s() -> None:
    procedures, functions = SHOW_COMMANDS["PROCEDURES"], SHOW_COMMANDS["FUNCTIONS"]
    assert procedures.columns == ("name", "description", "mode", "worksOnSystem")
    assert procedures.every == (
        "name", "description", "mode", "worksOnSystem", "signature", "argumentDescription",
        "returnDescription", "admin", "rolesExecution", "rolesBoostedExecution",
        "isDeprecated", "deprecatedBy", "option",
    )  # fmt: skip
    assert functions.columns == ("name", "category", "description")
    assert functions.every == (
        "name", "category", "description", "signature", "isBuiltIn", "argumentDescription",
        "returnDescription", "aggregating", "rolesExecution", "rolesBoostedExecution",
        "isDeprecated", "deprecatedBy",
    )  # fmt: skip


@pytest.mark.parametrize("target", ["PROCEDURES", "FUNCTIONS"])
def test_every_row_has_every_column(target: str) -> None:
    command = SHOW_COMMANDS[target]
    rows = command.rows(SCHEMA)
    assert rows and all(set(command.every) <= set(row) for row in rows)


def test_a_procedure_row_reads_like_neo4js() -> None:
    rows = {r["name"]: r for r in SHOW_COMMANDS["PROCEDURES"].rows(SCHEMA)}
    labels = rows["db.labels"]
    assert labels["signature"] == "db.labels() :: (label :: STRING)"
    assert labels["argumentDescription"] == []
    assert labels["returnDescription"] == [
        {"name": "label", "description": "label :: STRING", "isDeprecated": False,
         "type": "STRING"}
    ]  # fmt: skip
    assert labels["option"] == {"deprecated": False} and labels["isDeprecated"] is False
    [config] = rows["apoc.meta.data"]["argumentDescription"]
    assert config["description"] == "config = {} :: MAP" and config["type"] == "MAP"


@pytest.mark.parametrize(
    "text",
    ["SHOW PROCEDURES YIELD *", "SHOW FUNCTIONS YIELD *",
     "SHOW PROCEDURES YIELD name, signature, returnDescription WHERE name STARTS WITH 'db.' "
     "RETURN name, signature", "SHOW FUNCTIONS YIELD name, isBuiltIn, aggregating"],
)  # fmt: skip
def test_yield_star_is_answered_within_the_default_limits(text: str) -> None:
    verdict = GUARD.check(text)
    assert not verdict.blocked, verdict.findings
    assert "COMPAT.PROCEDURE" in verdict.codes and verdict.to_run.startswith("UNWIND [")
