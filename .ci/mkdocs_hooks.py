"""MkDocs hook (mkdocs.yml `hooks`): the Security page is the repository's `SECURITY.md`, whose
links into `docs/` are written from the repository root; inside the site they are relative to
`docs/`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri != "security.md":
        return markdown
    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    return text.replace("](docs/", "](")
