"""The rule fixture format shared by the Cypher and Gremlin fixture runners.

A fixture file starts with header lines `//! key: value` (a key may repeat), then the input
query, a line `//=>`, and the expected output query."""

from __future__ import annotations

from pathlib import Path


def parse_fixture(path: Path) -> tuple[dict[str, list[str]], str, str]:
    headers: dict[str, list[str]] = {}
    body: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith("//! ") and not body:
            key, _, value = line[4:].partition(":")
            headers.setdefault(key.strip(), []).append(value.strip())
        else:
            body.append(line)
    source, sep, expected = "".join(body).partition("//=>\n")
    assert sep, f"{path}: missing the //=> separator"
    return headers, source.rstrip("\n"), expected.rstrip("\n")


def guard_settings(lines: list[str]) -> dict[str, object]:
    """The `config:` header lines — `key=value, …` pairs for `[guard]` — as a TOML-like table
    (`true`/`false` become booleans, digits integers)."""
    table: dict[str, object] = {}
    for line in lines:
        for pair in filter(None, (p.strip() for p in line.split(","))):
            key, _, value = pair.partition("=")
            table[key.strip()] = _value(value.strip())
    return table


def _value(text: str) -> object:
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        return text
