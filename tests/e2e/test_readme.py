"""The `check` examples of README and of the documentation print what the page shows: each
`$ …` line of an example block is run by bash (in a scratch directory, in order, so
`echo … > schema.txt` feeds the next command; `.venv` there is the venv running the tests, as
in a checkout after README's commands) and its output is compared with the lines the page
prints under it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *(ROOT / "docs" / n for n in ("getting-started.md", "checking.md"))]
VENV = Path(sys.executable).parent.parent
COMMAND = "$ .venv/bin/query-guard check"


def example_blocks(text: str) -> list[list[str]]:
    """Indented blocks (4 spaces; blank lines inside kept) that run `query-guard check`."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in [*text.splitlines(), "end"]:
        if line.startswith("    ") or (not line.strip() and current):
            current.append(line[4:])
            continue
        while current and not current[-1].strip():
            current.pop()
        if any(x.startswith(COMMAND) for x in current):
            blocks.append(current)
        current = []
    return blocks


def commands(block: list[str]) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) pairs; a trailing backslash continues a command."""
    out: list[tuple[str, list[str]]] = []
    lines = iter(block)
    for line in lines:
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\"):
                command = command[:-1] + " " + next(lines).strip()
            out.append((command, []))
        elif out:
            out[-1][1].append(line)
    return out


def _normal(lines: list[str]) -> list[str]:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


EXAMPLES = [
    (page.relative_to(ROOT).as_posix(), block)
    for page in PAGES
    for block in example_blocks(page.read_text(encoding="utf-8"))
]


def test_readme_and_docs_have_check_examples() -> None:
    pages = [page for page, _ in EXAMPLES]
    assert pages.count("README.md") >= 1 and len(EXAMPLES) >= 5
    assert "$ query-guard" not in (ROOT / "README.md").read_text(encoding="utf-8")  # not on PATH


@pytest.mark.parametrize(
    ("page", "block"),
    EXAMPLES,
    ids=lambda x: re.sub(r"\W+", "-", x if isinstance(x, str) else x[0])[:40],
)
def test_each_example_prints_what_the_page_shows(
    page: str, block: list[str], tmp_path: Path
) -> None:
    (tmp_path / ".venv").symlink_to(VENV)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    for command, expected in commands(block):
        done = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr  # 1 = BLOCK, as the pages say
        assert _normal(done.stdout.splitlines()) == _normal(expected), command
