"""The rule's fixtures (tests/fixtures/*.cypher), run by query-guard's own fixture runner."""

from __future__ import annotations

from pathlib import Path

import pytest
import qg_no_cartesian

from query_guard.api import check_fixture

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.cypher"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_fixture(path: Path) -> None:
    check_fixture(path, qg_no_cartesian)


def test_the_installed_rule_is_loaded_by_its_entry_point() -> None:
    from query_guard.build import build_guard

    verdict = build_guard().check("MATCH (a:Person), (b:Movie) RETURN a.name, b.title")
    assert "PAT.CARTESIAN" in verdict.codes
    assert "PAT.CARTESIAN" not in build_guard().check(
        "MATCH (a:Person)-[:ACTED_IN]->(b:Movie) RETURN a.name, b.title").codes
