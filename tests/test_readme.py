"""README's `query-guard check` examples print what README shows: each `$ …` line of an
example block is run by bash (in a scratch directory, in order, so `echo … > schema.txt` feeds
the next command) and its output is compared with the lines README prints under it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BIN = Path(sys.executable).parent


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
        if any(x.startswith("$ query-guard check") for x in current):
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


EXAMPLES = example_blocks(README.read_text(encoding="utf-8"))


def test_readme_has_check_examples() -> None:
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("block", EXAMPLES, ids=lambda b: re.sub(r"\W+", "-", b[0])[:40])
def test_each_example_prints_what_the_readme_shows(block: list[str], tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    for command, expected in commands(block):
        done = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr  # 1 = BLOCK, as README says
        assert _normal(done.stdout.splitlines()) == _normal(expected), command
