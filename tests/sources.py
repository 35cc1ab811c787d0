"""The project's own Python files, for the tests that read code as text (module length,
imports, emitted finding codes, config-key readers): every `*.py` below the given folders of
the checkout, hidden folders (a virtual environment such as `benchmarks/.venv`) left out."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def python_files(*folders: str) -> list[Path]:
    """The `*.py` files below `folders` (relative to the checkout), sorted."""
    return [
        path
        for folder in folders
        for path in sorted((ROOT / folder).rglob("*.py"))
        if not any(part.startswith(".") for part in path.relative_to(ROOT).parts)
    ]
