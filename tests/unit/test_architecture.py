"""The shape of the code: no import cycles in `proxy` and `plugins`, no unused code, and
small modules.

The list of long modules may only shrink: one that is split must leave it, so it cannot grow
back unnoticed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest
import vulture

from tests.sources import python_files
from tests.vulture_whitelist import ALLOWED, IGNORE_DECORATORS

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 400

# Modules at or over MAX_LINES, with their length when this list was made: they may shrink,
# never grow; one under MAX_LINES must be taken off the list.
LONG_MODULES: dict[str, int] = {
    # one family of mutually recursive node types (expressions hold patterns and subqueries,
    # patterns hold expressions): split, its parts would import each other
    "proxy/cypher/ast.py": 441,
}


def import_cycles(graph: grimp.ImportGraph) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), lazy
    and TYPE_CHECKING imports included: each is a set of modules that import each other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[frozenset[str]] = []
    work: list[tuple[str, Iterator[str]]] = []

    def enter(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        work.append((module, iter(sorted(graph.find_modules_directly_imported_by(module)))))

    for root in sorted(graph.modules):
        if root not in index:
            enter(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    enter(child)
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == module:
                        break
                if len(component) > 1:
                    cycles.append(frozenset(component))
    return cycles


def add_rules(graph: grimp.ImportGraph) -> None:
    """The built-in rules (`plugins/`, installed as `query_guard.rules`): grimp reads the
    folder that holds `query_guard` only, so their imports are read here, lazy ones too."""
    for path in python_files("plugins"):
        name = "query_guard.rules" + ("" if path.stem == "__init__" else f".{path.stem}")
        graph.add_module(name)
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                if target in graph.modules and target != name:
                    graph.add_import(importer=name, imported=target)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    graph = grimp.build_graph("query_guard", cache_dir=None)
    add_rules(graph)
    return graph


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(module)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.x")
    graph.add_import(importer="a.z", imported="a.x")
    assert import_cycles(graph) == [frozenset({"a.x", "a.y"})]


def test_no_import_cycles(graph: grimp.ImportGraph) -> None:
    cycles = [sorted(c) for c in import_cycles(graph)]
    assert not cycles, f"modules that import each other (lazy imports count too): {cycles}"


def _modules() -> dict[str, int]:
    return {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in python_files("proxy", "plugins", "benchmarks")
    }


def test_modules_are_short() -> None:
    lengths = _modules()
    too_long = {
        name: n for name, n in lengths.items() if n >= MAX_LINES and n > LONG_MODULES.get(name, 0)
    }
    assert not too_long, f"modules of {MAX_LINES}+ lines (split them): {too_long}"
    shrunk = [name for name in LONG_MODULES if lengths.get(name, 0) < MAX_LINES]
    assert not shrunk, f"under {MAX_LINES} lines now: take them off LONG_MODULES: {shrunk}"


def grammar_rule_names() -> set[str]:
    """Rule names and aliases of our Lark grammars: the transformers' methods of those names
    are called by Lark, never by our code."""
    names: set[str] = set()
    for grammar in (ROOT / "grammars").glob("*.lark"):
        text = grammar.read_text(encoding="utf-8")
        names |= set(re.findall(r"^\s*[?!]?([a-z_][a-z_0-9]*)\s*(?:\.\d+)?\s*:", text, re.M))
        names |= set(re.findall(r"->\s*([a-z_][a-z_0-9]*)", text))
    return names


def config_key_names() -> set[str]:
    """The configuration keys: read by name from their TOML table (`config.server["key"]`),
    never as attributes of the schema's models (tests/unit/test_config.py checks each has a
    reader)."""
    from query_guard.config.load import declared_keys

    return {str(path[-1]) for path in declared_keys()}


def test_no_unused_code() -> None:
    """Every function, class, method, attribute and variable in the product is used by the
    product (tests do not count: code only tests call is dead code with a test)."""
    scan = vulture.Vulture(
        ignore_names=[*ALLOWED, *sorted(grammar_rule_names() | config_key_names())],
        ignore_decorators=IGNORE_DECORATORS,
    )
    scan.scavenge([str(ROOT / "proxy"), str(ROOT / "plugins")])
    unused = [
        f"{Path(item.filename).relative_to(ROOT)}:{item.first_lineno}: {item.message}"
        for item in scan.get_unused_code(min_confidence=60)
    ]
    advice = "delete it, or say in tests/vulture_whitelist.py why it is used"
    assert not unused, f"unused code ({advice}):\n" + "\n".join(unused)


def test_no_circles_between_packages(graph: grimp.ImportGraph) -> None:
    """Each package (and each top-level module) of query_guard as one unit: no units import
    each other in a circle, through any chain of modules (DESIGN §1: one package per stage,
    dependencies pointing one way; a module that needs something from a higher stage gets it
    passed in, never imported)."""

    def unit(module: str) -> str:
        return ".".join(module.split(".")[:2])

    squashed = grimp.ImportGraph()
    for module in graph.modules:
        squashed.add_module(unit(module))
        for dep in graph.find_modules_directly_imported_by(module):
            a, b = unit(module), unit(dep)
            if a != b and "query_guard" not in (a, b):
                squashed.add_import(importer=a, imported=b)
    assert "query_guard.rules" in squashed.modules
    circles = [sorted(m.removeprefix("query_guard.") for m in c) for c in import_cycles(squashed)]
    assert not circles, f"packages that import each other: {circles}"


def test_the_top_level_is_small() -> None:
    """query_guard's top level holds the entry points and the vocabulary every stage shares;
    the rest lives in the stage packages (DESIGN §1)."""
    top = sorted(p.name for p in (ROOT / "proxy").glob("*.py"))
    modules = [name for name in top if name not in ("__init__.py", "__main__.py")]
    assert len(modules) <= 10, modules
