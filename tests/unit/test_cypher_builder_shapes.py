"""The Cypher AST builder reads its rules' children by name, from shapes checked against the
compiled grammar (proxy/cypher/build_children.py): a grammar edit fails in one place, loudly,
instead of shifting what a callback reads."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
from pathlib import Path

import pytest

from query_guard.cypher import builders
from query_guard.cypher.build_children import Shape, Slots
from query_guard.cypher.parser import _parser

ROOT = Path(__file__).resolve().parents[2]
BUILDER_MODULES = sorted((ROOT / "proxy" / "cypher").glob("transform*.py"))


def test_every_grammar_rule_has_a_callback_of_its_shape() -> None:
    builders.check_grammar(_parser().rules)


@pytest.mark.parametrize(
    ("shape", "complaint"),
    [
        ("UNION all=ALL|DISTINCT", "slot all may be absent"),
        ("UNION all=ALL|DISTINCT? extra=UNION", "2 children"),
        ("all=ALL|DISTINCT? UNION", "slot all is UNION"),
        ("UNION all=ALL|DISTINCT? ", None),
        ("UNION? all=ALL|DISTINCT?", "marked `?` but is never absent"),
    ],
)
def test_a_shape_that_does_not_fit_the_grammar_is_refused(
    shape: str, complaint: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = dict(builders.TABLE)
    table["union_op"] = dataclasses.replace(table["union_op"], shape=Shape.parse(shape))
    monkeypatch.setattr(builders, "TABLE", table)
    if complaint is None:
        builders.check_grammar(_parser().rules)
        return
    with pytest.raises(ValueError, match=re.escape(complaint)):
        builders.check_grammar(_parser().rules)


def test_a_rule_without_a_callback_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    table = {k: v for k, v in builders.TABLE.items() if k != "where"}
    monkeypatch.setattr(builders, "TABLE", table)
    with pytest.raises(ValueError, match="where: no callback"):
        builders.check_grammar(_parser().rules)


def test_children_are_read_by_name_not_position() -> None:
    """No `c[3]` / `c[-1]` in the builders: they read `c[RULE.name]`, named by the shapes."""
    assert BUILDER_MODULES
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in BUILDER_MODULES
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bc\s*\[\s*-?\s*\d", line)
    ]
    assert not found, "positional children (declare a named slot in the rule's shape):\n" + (
        "\n".join(found)
    )


def test_every_slot_a_builder_reads_is_declared() -> None:
    """`c[MATCH_CLAUSE.wehre]` fails here, not on the first query that reaches it."""
    missing = []
    for path in BUILDER_MODULES:
        module = importlib.import_module(f"query_guard.cypher.{path.stem}")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
                continue
            slots = getattr(module, node.value.id, None)
            if isinstance(slots, Slots) and not hasattr(slots, node.attr):
                missing.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    assert not missing, "slots not in the rule's shape:\n" + "\n".join(missing)
