"""The security suite's inputs (tests/data/security/*.jsonl): attacks that must be blocked, each
with the finding codes that are an acceptable reason, and ordinary reads that must pass.

One JSON object per line: `id`, `class`, `query`, `expect` ("block" or "allow"), `codes` (for
attacks), and optionally `expand` — `[[marker, unit, times], …]`: each marker in `query` is
replaced by `unit * times` (how multi-megabyte and deeply nested inputs are kept small on
disk) — `params` (Bolt parameters for the serve test) and `reads_file` (the attack tries to
read a server file: its content must never come back).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data" / "security"


@dataclass(frozen=True)
class Case:
    id: str
    cls: str
    query: str
    expect: str
    codes: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    reads_file: bool = False

    def __repr__(self) -> str:  # pytest prints this for a failing parameter: keep it short
        return f"Case({self.id})"


def load(name: str) -> list[Case]:
    """The cases of `tests/data/security/<name>.jsonl`, expanded, in file order."""
    cases = []
    for line in (DATA / f"{name}.jsonl").read_text("utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        query = row["query"]
        for marker, unit, times in row.get("expand", []):
            assert marker in query, f"{row['id']}: marker {marker!r} not in the query"
            query = query.replace(marker, unit * times, 1)
        cases.append(
            Case(
                row["id"],
                row["class"],
                query,
                row["expect"],
                tuple(row.get("codes", ())),
                row.get("params", {}),
                bool(row.get("reads_file", False)),
            )
        )
    return cases


CYPHER_ATTACKS = load("cypher_attacks")
GREMLIN_ATTACKS = load("gremlin_attacks")
ORDINARY_READS = load("ordinary_reads")
