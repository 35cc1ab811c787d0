"""docs/codes.md lists exactly the finding codes the code emits (generated, kept in step)."""

from __future__ import annotations

import re

from query_guard.codes import CODES, FAMILIES, render
from tests.corpora import ROOT
from tests.sources import python_files

_LITERAL = re.compile(r"[\"']((?:" + "|".join(FAMILIES) + r")\.[A-Z][A-Z_]+)[\"']")


def _emitted() -> set[str]:
    found: set[str] = set()
    for path in python_files("proxy", "plugins"):
        if path.name != "codes.py":
            found.update(_LITERAL.findall(path.read_text(encoding="utf-8")))
    return found


def test_every_emitted_code_is_documented() -> None:
    missing = _emitted() - set(CODES)
    assert not missing, f"add these codes to proxy/codes.py: {sorted(missing)}"


def test_every_documented_code_is_emitted() -> None:
    stale = set(CODES) - _emitted()
    assert not stale, f"proxy/codes.py lists codes nothing emits: {sorted(stale)}"


def test_codes_page_is_generated_from_the_table() -> None:
    page = (ROOT / "docs" / "codes.md").read_text(encoding="utf-8")
    assert page == render(), "regenerate: python -m query_guard.codes > docs/codes.md"


def test_every_code_belongs_to_a_family() -> None:
    assert {code.split(".")[0] for code in CODES} <= set(FAMILIES)
