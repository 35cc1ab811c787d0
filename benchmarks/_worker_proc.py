"""A worker process of a paired comparison (guard_compare.py, parse_compare.py,
accel_compare.py): each side's code runs in its own process, asked line by line. Imports no
query_guard, so a worker may load another copy of it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any


class Worker:
    """A worker process of a paired comparison: `argv` run in `root` with `env` added to this
    process's environment; it answers each line written to it with one JSON line, and first
    with a ready line (`.ready`)."""

    def __init__(self, argv: list[str], root: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            argv, cwd=root, env={**os.environ, **env},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.ready = self.read()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        return json.loads(self.proc.stdout.readline())  # type: ignore[no-any-return]

    def ask(self, line: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(60)
