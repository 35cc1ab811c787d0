"""The IT-support demo graph the embedded Gremlin engine loads on first start (SEGRA's case
graph, DESIGN §5, matching `conf/segra-similarity.toml`).

Cases (`case`: title, createdAt as an ISO date string, status, category) reach their
content vertices through within-case edges — `hasReason` → `reason`, `exhibits` → `symptom`,
`attributedTo` → `rootCause` — and content vertices of one kind are joined by similarity edges
(`similarReason`, `similarSymptoms`, `similarRootCause`) carrying a `similarityScore`, stored
once per pair. Generated deterministically (a seeded RNG), written as GraphSON 3 lines.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path
from typing import Any

REASONS = [
    "expired TLS certificate", "certificate expired on the gateway", "password expired",
    "account locked after failed logins", "disk full on the mail server", "log volume full",
    "DNS record removed", "DNS cache poisoned", "driver update broke the dock",
    "outdated printer driver", "VPN client version mismatch", "VPN profile missing",
]  # fmt: skip
SYMPTOMS = [
    "cannot connect to VPN", "VPN disconnects every few minutes", "cannot log in",
    "login loops back to the prompt", "emails not arriving", "emails delayed by hours",
    "website not found", "intranet pages time out", "external monitor stays black",
    "printer queue stuck", "laptop fan loud", "slow file shares",
]  # fmt: skip
ROOT_CAUSES = [
    "certificate lifecycle not monitored", "identity policy too strict", "capacity planning gap",
    "change without review", "unsupported hardware", "stale client configuration",
    "monitoring alert missed", "vendor update regression",
]  # fmt: skip
CATEGORIES = ["network", "access", "email", "hardware", "software"]
STATUSES = ["open", "pending", "closed"]
CASES = 48
SIMILAR = {
    "reason": ("similarReason", REASONS),
    "symptom": ("similarSymptoms", SYMPTOMS),
    "rootCause": ("similarRootCause", ROOT_CAUSES),
}
WITHIN = {"reason": "hasReason", "symptom": "exhibits", "rootCause": "attributedTo"}


def vertices(seed: int = 7) -> Iterator[dict[str, Any]]:
    """The graph as GraphSON 3 adjacency lines (out-edges only)."""
    rng = random.Random(seed)
    ids = _Ids()
    start = dt.datetime(2023, 10, 1, tzinfo=dt.UTC)
    for n in range(1, CASES + 1):
        created = start + dt.timedelta(days=rng.randrange(0, 365), hours=rng.randrange(24))
        out: dict[str, list[dict[str, Any]]] = {}
        picks = {"reason": 1, "symptom": rng.choice((1, 2)), "rootCause": 1}
        for kind, count in picks.items():
            texts = SIMILAR[kind][1]
            for index in rng.sample(range(len(texts)), count):
                out.setdefault(WITHIN[kind], []).append(
                    {"id": ids.next("e"), "inV": f"{kind}-{index + 1}"}
                )
        yield {
            "id": f"case-{n}",
            "label": "case",
            "outE": out,
            "properties": ids.props(
                title=f"{rng.choice(SYMPTOMS)} ({rng.choice(CATEGORIES)} desk)",
                createdAt=created.date().isoformat(),  # ISO text: the window compares as text
                status=rng.choice(STATUSES),
                category=rng.choice(CATEGORIES),
            ),
        }
    for kind, (edge, texts) in SIMILAR.items():
        similar: dict[int, list[dict[str, Any]]] = {}
        for a, b in combinations(range(len(texts)), 2):
            if rng.random() < 0.3:  # stored once per pair, from the lower index
                score = round(rng.uniform(0.55, 0.99), 2)
                similar.setdefault(a, []).append(
                    {
                        "id": ids.next("e"),
                        "inV": f"{kind}-{b + 1}",
                        "properties": {"similarityScore": {"@type": "g:Double", "@value": score}},
                    }
                )
        for index, text in enumerate(texts):
            line: dict[str, Any] = {
                "id": f"{kind}-{index + 1}",
                "label": kind,
                "properties": ids.props(text=text),
            }
            if index in similar:
                line["outE"] = {edge: similar[index]}
            yield line


def write(path: Path, seed: int = 7) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fp:
        for line in vertices(seed):
            fp.write(json.dumps(line) + "\n")
    return path


class _Ids:
    def __init__(self) -> None:
        self._n = 0

    def next(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def props(self, **values: Any) -> dict[str, list[dict[str, Any]]]:
        return {k: [{"id": self.next("p"), "value": v}] for k, v in values.items()}
