"""The pass from a copy without ../shared (.ci/run) runs only the tests marked `corpora`: every
test that can reach the shared corpora must be among them."""

from __future__ import annotations

import re

from tests.conftest import reads_corpora
from tests.corpora import ROOT

SHARED_PATH = re.compile(r"""["']\.\./shared|/\s*["']shared["']|["']shared/corpora""")


def test_only_tests_corpora_names_the_shared_folder() -> None:
    """Anything else that built a path to ../shared would escape the `corpora` selection."""
    naming = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "tests").rglob("*.py")
        if SHARED_PATH.search(p.read_text(encoding="utf-8"))
    ]
    assert naming == ["tests/corpora.py"]


def test_corpus_readers_are_selected_through_helpers_too() -> None:
    assert reads_corpora(ROOT / "tests" / "unit" / "test_cypher_corpora_parse.py")
    assert reads_corpora(ROOT / "tests" / "unit" / "test_gremlin_corpus.py")
    assert not reads_corpora(ROOT / "tests" / "unit" / "test_docs.py")  # ROOT only
