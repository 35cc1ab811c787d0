"""Neo4j's relationship-direction competition: 74/74, byte for byte (DESIGN §4 rules 1-3)."""

from __future__ import annotations

import pytest

from query_guard.build import default_languages
from query_guard.guard.pipeline import Guard
from query_guard.guard.registry import build_plugin_manager
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.context import GuardContext
from tests.corpora import read_data_csv

ROWS = read_data_csv("direction_competition.csv")
SCHEMA_RULES = [
    "query_guard.rules.fix_rel_types",
    "query_guard.rules.align_directions",
    "query_guard.rules.redirect_self_loops",
]


def _guard(schema: str) -> Guard:
    pm = build_plugin_manager(builtins=SCHEMA_RULES, entry_points=False)
    return Guard(pm, GuardContext(schema=SchemaCatalog.from_triples(schema)), default_languages())


@pytest.mark.parametrize("row", ROWS, ids=[f"row{i}" for i in range(len(ROWS))])
def test_direction_competition(row: dict[str, str]) -> None:
    verdict = _guard(row["schema"]).check(row["statement"])
    if row["correct_query"]:
        assert verdict.query == row["correct_query"]
        assert "SCH.NO_PATH" not in verdict.codes
    else:
        assert "SCH.NO_PATH" in verdict.codes


def test_competition_has_74_rows() -> None:
    assert len(ROWS) == 74
