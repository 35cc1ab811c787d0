"""The shell examples of README.md and docs/*.md, as tests/e2e/test_readme.py runs them.

A shell example is a fenced `console`/`bash`/`sh`/`shell` block, or an indented block whose
first line is a `$ ` prompt or starts with a command (`.venv/bin/…`, `curl`, `python3`, …).
In a block with `$ ` prompts the lines under a command are the output the page promises (`…`
stands for anything); without prompts every line is a command (a trailing backslash continues
it) whose exit status must be 0. A `"…"` inside a command is a value the reader fills in (a
query id): the proxy must answer that it does not know it.

A block that cannot run in CI says so right above it, visibly in the page's source:

    <!-- not run in CI: needs a real Neo4j -->

and the test lists every such block (a skip with its reason) and counts them.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOT_RUN = re.compile(r"<!--\s*not run in CI:\s*(.+?)\s*-->")
SHELL_FENCES = ("```console", "```bash", "```sh", "```shell")
COMMAND_START = re.compile(r"(\$ |\.venv\S*/bin/|curl |python3 |query-guard |printf |echo |head )")
# the proxy's listeners as the pages name them: a block that talks to them needs `serve` up
NEEDS_PROXY = re.compile(r"(localhost|127\.0\.0\.1):(7474|7687)")
# with no --uri these start the embedded FalkorDB on serve's data: serve must be stopped
NEEDS_DATA = re.compile(r"query-guard (schema|export)\b")


@dataclass(frozen=True)
class Command:
    text: str
    expected: tuple[str, ...] | None  # None: the page shows no output (exit status 0 expected)


@dataclass(frozen=True)
class Block:
    page: str  # relative to the project root
    line: int  # 1-based line of the block's first line
    lines: tuple[str, ...]
    not_run: str | None  # the reason of a `<!-- not run in CI: … -->` marker

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def needs_proxy(self) -> bool:
        return bool(NEEDS_PROXY.search("\n".join(self.lines)))

    @property
    def needs_data(self) -> bool:
        return bool(NEEDS_DATA.search("\n".join(self.lines)))

    def commands(self) -> list[Command]:
        prompted = any(line.startswith("$ ") for line in self.lines)
        out: list[tuple[str, list[str]]] = []
        lines = iter(self.lines)
        for line in lines:
            if prompted and not line.startswith("$ "):
                if out:
                    out[-1][1].append(line)
                continue
            command = line[2:] if prompted else line
            if not command.strip():
                continue
            while command.endswith("\\") or not _closed(command):
                more = next(lines)
                command = (
                    command[:-1] + " " + more.strip() if command.endswith("\\")
                    else command + "\n" + more
                )  # fmt: skip
            out.append((command, []))
        return [Command(c, tuple(e) if prompted else None) for c, e in out]


def _closed(command: str) -> bool:
    """False while a quoted string runs on to the next line."""
    try:
        shlex.split(command, comments=True)
    except ValueError:
        return False
    return True


def _is_shell(lines: list[str]) -> bool:
    first = next((line for line in lines if line.strip()), "")
    return bool(COMMAND_START.match(first))


def blocks(page: Path) -> list[Block]:
    """The shell examples of one page, in order."""
    found: list[Block] = []
    text = page.read_text(encoding="utf-8").splitlines()
    name = page.relative_to(ROOT).as_posix()
    i = 0
    while i < len(text):
        line = text[i]
        above = text[i - 1] if i and text[i - 1].strip() else text[i - 2] if i > 1 else ""
        marker = NOT_RUN.search(above)
        reason = marker.group(1) if marker else None
        if line.startswith("```"):
            end = next(j for j in range(i + 1, len(text)) if text[j].startswith("```"))
            if line.rstrip() in SHELL_FENCES:
                found.append(Block(name, i + 2, tuple(text[i + 1 : end]), reason))
            i = end + 1
            continue
        if line.startswith("    ") and (i == 0 or not text[i - 1].strip() or marker):
            j = i
            while j < len(text) and (text[j].startswith("    ") or not text[j].strip()):
                j += 1
            body = [x[4:] for x in text[i:j]]
            while body and not body[-1].strip():
                body.pop()
            if _is_shell(body):
                found.append(Block(name, i + 1, tuple(body), reason))
            i = j
            continue
        i += 1
    return found


def all_blocks() -> list[Block]:
    return [block for page in PAGES for block in blocks(page)]


def output_matches(expected: tuple[str, ...], actual: str) -> bool:
    """Exact lines (trailing spaces and blank lines at the end aside); with `…`, the page's
    text with `…` standing for anything and any run of white space for any other (a page
    may break one long JSON line into several)."""
    if not any("…" in line for line in expected):
        return _normal(list(expected)) == _normal(actual.splitlines())
    words = " ".join(" ".join(expected).split())
    pattern = ".*".join(re.escape(part) for part in words.split("…"))
    return re.fullmatch(pattern, " ".join(actual.split()), re.DOTALL) is not None


def _normal(lines: list[str]) -> list[str]:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines
