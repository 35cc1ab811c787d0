"""pyproject.toml declares what the code imports: the product's imports are runtime
dependencies (or an optional feature's extra), the tests' imports are in the test extra, and
every runtime dependency is imported by the product (or says why not)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

from query_guard.backends.factory import make_sql_backend
from query_guard.errors import ConfigError
from tests.sources import python_files

ROOT = Path(__file__).resolve().parents[2]
OWN = {"query_guard", "tests", "benchmarks"}  # the one import package, and the checkout's own
# runtime dependencies the product needs without importing them
NOT_IMPORTED = {"interegular": "lark uses it for strict=True grammar checks"}
# modules of an extra that is not installed beside the test extra (compat-llama's neo4j<6 pin
# keeps it in a venv of its own): the distribution that provides them
NOT_INSTALLED_HERE = {"llama_index": "llama-index-core"}


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement string (`aiohttp-asgi>=0.7; …`)."""
    bare = re.split(r"[\s<>=!~;\[]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", bare).lower()


def _project() -> dict:
    with (ROOT / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)["project"]


def _extra(project: dict, extra: str, seen: frozenset[str] = frozenset()) -> set[str]:
    """The distributions of an extra, self-references (`query-guard[compat]`) followed."""
    names: set[str] = set()
    for req in project["optional-dependencies"][extra]:
        if _name(req) == _name(project["name"]):
            inner = re.search(r"\[(.*)\]", req)
            for sub in (inner.group(1).split(",") if inner else ()):
                if sub.strip() not in seen:
                    names |= _extra(project, sub.strip(), seen | {extra})
        else:
            names.add(_name(req))
    return names


def _imported(*folders: str) -> dict[str, set[str]]:
    """Distribution name -> files importing it, over every import (lazy ones too)."""
    dists = importlib.metadata.packages_distributions()
    out: dict[str, set[str]] = {}
    for path in python_files(*folders):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top in OWN or top in sys.stdlib_module_names or _local(path, top):
                    continue
                names = [_name(d) for d in dists.get(top, [])] or [
                    NOT_INSTALLED_HERE.get(top, f"{top} (not installed)")
                ]
                if _name(top) in names:  # `sqlglot` is also filled in by sqlglotc: its namesake
                    names = [_name(top)]
                for name in names:
                    out.setdefault(name, set()).add(path.relative_to(ROOT).as_posix())
    return out


def _local(path: Path, module: str) -> bool:
    """A benchmark script's sibling module (they run with their folder on sys.path)."""
    folder = ROOT / "benchmarks"
    return path.is_relative_to(folder) and (
        (folder / f"{module}.py").exists() or (folder / module).is_dir()
    )


def test_the_product_imports_only_declared_dependencies() -> None:
    project = _project()
    runtime = {_name(r) for r in project["dependencies"]}
    optional = set().union(
        *(_extra(project, e) for e in project["optional-dependencies"] if e != "test")
    )
    undeclared = {
        dist: sorted(files)
        for dist, files in _imported("proxy", "plugins").items()
        if dist not in runtime | optional
    }
    assert not undeclared, f"imported but not declared in [project] dependencies: {undeclared}"


def test_every_runtime_dependency_is_imported() -> None:
    imported = set(_imported("proxy", "plugins"))
    unused = [
        name
        for name in (_name(r) for r in _project()["dependencies"])
        if name not in imported and name not in NOT_IMPORTED
    ]
    assert not unused, f"declared but never imported by proxy/ or plugins/: {unused}"


def test_the_tests_import_only_what_the_test_extra_installs() -> None:
    project = _project()
    installed = {_name(r) for r in project["dependencies"]} | _extra(project, "test")
    # the llama-index compat tests skip without their own extra (its neo4j<6 pin)
    installed |= _extra(project, "compat-llama")
    undeclared = {
        dist: sorted(files)
        for dist, files in _imported("tests", "benchmarks").items()
        if dist not in installed
    }
    assert not undeclared, f"imported by tests but not in the test extra: {undeclared}"


def test_postgresql_without_its_extra_is_a_config_error_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "asyncpg", None)  # as if the extra were not installed
    monkeypatch.delitem(sys.modules, "query_guard.backends.sql_postgres", raising=False)
    with pytest.raises(ConfigError, match=r"backend\.sql.*query-guard\[postgres\]"):
        make_sql_backend("postgresql://localhost/db", ROOT)
