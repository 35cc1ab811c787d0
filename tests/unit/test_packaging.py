"""The distribution installs one import package, `query_guard` (DESIGN §1): the repository's
folders map into it (`proxy/` -> `query_guard`, `plugins/` -> `query_guard.rules`, `grammars/`
and `conf/` as its data), every package folder is listed, and no code imports the folders'
own names (which exist only in a checkout)."""

from __future__ import annotations

import re
import tomllib

from tests.sources import ROOT, python_files

EXAMPLE_RULE = "examples/rule-package/qg_no_cartesian"
FOLDERS = {"proxy": "query_guard", "plugins": "query_guard.rules",
           "grammars": "query_guard.grammars", "conf": "query_guard.conf"}  # fmt: skip


def _setuptools() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]


def test_every_package_folder_is_installed_under_query_guard() -> None:
    setuptools = _setuptools()
    assert setuptools["package-dir"] == {v: k for k, v in FOLDERS.items()}
    expected = set()
    for folder, package in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            inner = init.parent.relative_to(ROOT / folder).parts
            if "__pycache__" not in inner:
                expected.add(".".join((package, *inner)))
    assert set(setuptools["packages"]) == expected  # type: ignore[arg-type]


def test_no_code_imports_a_folder_name() -> None:
    pattern = re.compile(r"^\s*(from|import)\s+(proxy|plugins|grammars|conf)\b", re.M)
    found = [str(p.relative_to(ROOT)) for p in python_files("proxy", "plugins", "tests",
                                                           "benchmarks")
             if pattern.search(p.read_text("utf-8"))]  # fmt: skip
    assert not found, f"import query_guard (the installed name) instead: {found}"


def test_builtin_rules_use_only_the_rule_api() -> None:
    """A built-in rule has the tools a third-party author has: it imports from query_guard
    only `query_guard.api` and its submodules (examples/rule-package/ does the same)."""
    pattern = re.compile(r"^\s*(?:from|import)\s+(query_guard[\w.]*)", re.M)
    found = {
        str(path.relative_to(ROOT)): sorted(set(names) - {"query_guard.api"})
        for path in [*python_files("plugins"), *python_files(EXAMPLE_RULE)]
        if (names := [n if not n.startswith("query_guard.api.") else "query_guard.api"
                      for n in pattern.findall(path.read_text("utf-8"))])
    }
    assert {k: v for k, v in found.items() if v} == {}


def test_the_lock_file_pins_every_runtime_dependency() -> None:
    """requirements.lock (pip-compile of pyproject.toml) pins each declared dependency."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    declared = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower().replace("_", "-")
                for d in project["dependencies"]}  # fmt: skip
    lock = (ROOT / "requirements.lock").read_text("utf-8")
    pinned = {m.lower() for m in re.findall(r"^([A-Za-z0-9_.-]+)==", lock, re.M)}
    pinned = {p.replace("_", "-") for p in pinned}
    platform_only = {"uvloop"}  # pinned by marker; pip-compile on this platform includes it
    assert declared - pinned - platform_only == set()
