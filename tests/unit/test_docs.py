"""The documentation site's generated pages equal what their generators print, and the example
configurations for real backends are ones the proxy accepts."""

from __future__ import annotations

import tomllib

import pytest

from query_guard.build import build_guard
from query_guard.cli.rules import builtin_page
from query_guard.config.load import load_config
from query_guard.config.reference import render as configuration_page
from tests.corpora import ROOT


def test_configuration_page_is_generated_from_the_schema() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert page == configuration_page(), (
        "regenerate: python -m query_guard.config.reference > docs/configuration.md"
    )


def test_every_key_of_the_schema_is_on_the_configuration_page_with_a_meaning() -> None:
    from query_guard.config.load import declared_keys

    page = configuration_page()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    for key in declared_keys():
        assert f"| `{key[-1]}` |" in page, key
    assert len(rows) == len(declared_keys())
    assert not [row for row in rows if row.endswith("|  |")], "a key without a meaning"


def test_rules_page_is_generated_from_the_rule_docstrings() -> None:
    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert page == builtin_page(), "regenerate: python -m query_guard.cli.rules > docs/rules.md"


def test_bolt_backend_example_is_a_valid_configuration() -> None:
    path = ROOT / "conf" / "bolt-backend.toml"
    cfg = load_config(path)
    assert cfg.backend["cypher"].startswith("bolt://")
    assert cfg.backend["credentials"] == "configured" and cfg.backend["password_env"]
    assert cfg.server["http"] and cfg.guard.read_only
    build_guard(cfg)  # its rule tables and disable list are valid too
    assert "NEO4J_PASSWORD" in path.read_text(encoding="utf-8")
    assert tomllib.loads(path.read_text(encoding="utf-8"))["backend"]["database"]


@pytest.mark.parametrize(
    ("name", "table", "key", "scheme"),
    [("falkordb", "backend", "cypher", "falkordb://"), ("gremlin", "backend", "gremlin", "ws://"),
     ("postgres", "backend", "sql", "postgresql://")],
)  # fmt: skip
def test_backend_examples_are_valid_configurations(
    name: str, table: str, key: str, scheme: str
) -> None:
    """The full examples docs/backends.md includes: valid, read-only, and each names its
    database the way the configuration reference says."""
    path = ROOT / "conf" / f"{name}-backend.toml"
    cfg = load_config(path)
    assert str(getattr(cfg, table)[key]).startswith(scheme)
    assert cfg.guard.read_only and cfg.audit["path"]
    build_guard(cfg)
    assert f'--8<-- "conf/{name}-backend.toml"' in (ROOT / "docs" / "backends.md").read_text(
        encoding="utf-8"
    )
