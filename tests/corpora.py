"""Test data: the small sets the core tests need live in tests/data/ (provenance in its
README); the large shared corpora are read from ../shared/corpora and their tests skip, with
a message, when that folder is absent (a fresh clone on its own)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT.parent / "shared" / "corpora"
DATA = ROOT / "tests" / "data"


def corpus(*parts: str) -> Path:
    path = CORPORA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"corpus file {path} is absent (expected ../shared/corpora beside the project)")
    return path


def read_jsonl(*parts: str) -> list[dict[str, Any]]:
    with corpus(*parts).open(encoding="utf-8") as fp:
        return [json.loads(line) for line in fp if line.strip()]


def read_csv(*parts: str) -> list[dict[str, str]]:
    csv.field_size_limit(1 << 24)
    with corpus(*parts).open(encoding="utf-8", newline="") as fp:
        return list(csv.DictReader(fp))


def read_data_csv(name: str) -> list[dict[str, str]]:
    """A CSV checked into tests/data/ (always present: no skip)."""
    with (DATA / name).open(encoding="utf-8", newline="") as fp:
        return list(csv.DictReader(fp))
