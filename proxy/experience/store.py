"""What every experience store shares: the examples and weights they keep (`NewExample`,
`Decay`), the protocol the library calls (`ExperienceStore`), and the ranking both stores
apply to their full-text matches (`rank`), so SQLite and PostgreSQL serve alike.

Two stores implement it: `SqliteStore` (`sqlite_store`, the embedded default: FTS5 and BM25)
and `PostgresStore` (`postgres_store`, one library shared by many proxies: tsvector and
ts_rank). Weights decay lazily: each row keeps its weight and the time it was last set
(`stamp`); its weight now is `weight · ½^(elapsed / half_life)`, so no background thread is
needed. Stores are synchronous and do I/O: the library calls them from its one worker thread."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

MAX_RUNS = 10_000  # query ids remembered for feedback
WITHHELD_AFTER = 3  # "wrong" reports (net of "correct" ones) that withhold an example
CANDIDATES = 200  # full-text matches re-ranked by weight
FIELDS = ("id", "database", "language", "question", "query", "template", "fingerprint",
          "codes", "rows", "weight", "stamp", "uses", "created", "last_used", "names",
          "pinned", "banned", "wrong", "stale", "shape")  # fmt: skip
FLAGS = ("pinned", "banned", "stale")


@dataclass(frozen=True)
class NewExample:
    """A verified run, as the library hands it to the store."""

    database: str
    language: str
    question: str
    query: str
    template: str
    fingerprint: str
    codes: list[str]
    rows: int
    elements: list[tuple[str, str]]
    shape: str = ""  # what the index holds of the question (`question_shape`)

    hints: str = ""  # words for what its query does (`query_hints`)

    @property
    def names(self) -> str:
        """The schema names its query uses, and what it does, as words for the index."""
        names = " ".join(sorted({index_words(n) for _, n in self.elements}))
        return f"{names} {self.hints}".strip()


@dataclass(frozen=True)
class Decay:
    """Δ per deposit and the half-life of every weight (seconds; 0: weights never decay)."""

    deposit: float = 1.0
    half_life: float = 0.0

    def now(self, weight: float, stamp: float, now: float) -> float:
        if self.half_life <= 0 or now <= stamp:
            return weight
        return float(weight * 0.5 ** ((now - stamp) / self.half_life))


class ExperienceStore(Protocol):
    """What the library and the operator's CLI need of a store."""

    decay: Decay

    def deposit(self, example: NewExample, run_id: str, now: float, limit: int) -> int | None: ...

    def candidates(self, database: str, question: str, now: float) -> list[dict[str, Any]]: ...

    def feedback(self, run_id: str, correct: bool, now: float) -> dict[str, Any] | None: ...

    def reinforce(
        self, database: str, elements: Iterable[tuple[str, str]], delta: float, now: float
    ) -> None: ...

    def weights(self, database: str, now: float) -> dict[tuple[str, str], float]: ...

    def refingerprint(self, example_id: int, fingerprint: str) -> None: ...

    def set_vector(self, example_id: int, vector: list[float]) -> None: ...

    def count(self) -> int: ...

    def recent(self, limit: int, now: float) -> list[dict[str, Any]]: ...

    def examples(self, database: str | None = None) -> Iterator[dict[str, Any]]: ...

    def example(self, example_id: int) -> dict[str, Any] | None: ...

    def mark(self, example_id: int, flag: str, value: bool = True) -> bool: ...

    def forget(self, example_id: int) -> bool: ...

    def load(self, example: dict[str, Any]) -> int: ...

    def close(self) -> None: ...


def rank(rows: Iterable[Mapping[str, Any]], k: int, decay: Decay, now: float
         ) -> list[dict[str, Any]]:  # fmt: skip
    """At most `k` of `rows` (each with its full-text `relevance`), best first, one per
    template: pinned ones first, then relevance times the square root of the weight (weight
    breaks near ties and lifts what worked, without drowning relevance), the older on a tie."""
    best: dict[tuple[str, str], tuple[bool, float, Mapping[str, Any]]] = {}
    for row in rows:
        weight = decay.now(row["weight"], row["stamp"], now)
        score = max(float(row["relevance"]), 1e-9) * weight**0.5
        key = (row["language"], row["template"])
        candidate = (bool(row["pinned"]), score, row)
        held = best.get(key)
        if held is None or (candidate[0], score, -row["id"]) > (held[0], held[1], -held[2]["id"]):
            best[key] = candidate
    ordered = sorted(best.values(), key=lambda b: (b[0], b[1], -b[2]["id"]), reverse=True)
    return [served(row, decay.now(row["weight"], row["stamp"], now)) for _, _, row in ordered[:k]]


# words that say how to ask, not what: function words and the requests every question makes
UNASKED = frozenset({
    "a", "all", "an", "and", "are", "as", "at", "be", "been", "by", "first", "find", "for",
    "from", "has", "have", "in", "is", "it", "its", "list", "me", "name", "of", "on", "or",
    "show", "that", "the", "their", "to", "top", "was", "were", "what", "with",
})  # fmt: skip


def match_words(question: str) -> list[str]:
    """The words of the question's shape, each once, but those in `UNASKED` (what the
    full-text query matches); its plain words when that leaves none ("Tom Hanks?")."""
    words = set(question_shape(question).split() or re.findall(r"\w+", question.lower()))
    return sorted(words - UNASKED) or sorted(words)


def question_shape(question: str) -> str:
    """The words that say what a question asks, not about whom: lower case, without quoted
    values, numbers, slots (`$s1`) and capitalised words after the first (names). Two
    questions of one template differ mostly in those, so the index and the search use the
    shape ("Who directed 'Speed Racer'?" and "Who directed The Matrix?" -> "who directed")."""
    text = re.sub(r"(?<!\w)(['\"])[^'\"]+\1(?!\w)|\$s\d+\w*", " qgstr ", question)
    text = re.sub(r"\$n\d+\w*|\b\d[\w.]*", " qgnum ", text)
    words = re.findall(r"\w+", text)
    kept, name = [], False
    for i, word in enumerate(words):
        if i and word[0].isupper():  # a name: one slot for its words
            if not name:
                kept.append("qgstr")
            name = True
            continue
        name = False
        kept.append(word.lower())
    return " ".join(kept)


# what a query does, in the words a question uses for it (matched against the question)
_HINTS = (
    (r"\bCONTAINS\b", "contain contains containing include includes including mention"),
    (r"\bSTARTS\s+WITH\b", "start starts starting begin begins beginning"),
    (r"\bENDS\s+WITH\b", "end ends ending"),
    (r"\bcount\s*\(", "count number many"),
    (r"\bavg\s*\(", "average mean"),
    (r"\bsum\s*\(", "total sum"),
    (r"\bmin\s*\(", "minimum lowest least"),
    (r"\bmax\s*\(", "maximum highest most"),
    (r"\bDESC(ENDING)?\b", "most highest top latest newest largest"),
    (r"\bORDER\s+BY\b(?![^;]*\bDESC)", "least lowest earliest oldest"),
    (r"\bDISTINCT\b", "different distinct unique"),
    (r"\bNOT\b", "not never without"),
)


def query_hints(query: str) -> str:
    """English words for the operations `query` uses (`CONTAINS` -> "contain include …"),
    for the index beside its schema names."""
    return " ".join(words for pattern, words in _HINTS
                    if re.search(pattern, query, re.IGNORECASE))  # fmt: skip


def index_words(name: str) -> str:
    """A schema name as words for the index: `ACTED_IN` -> `ACTED IN`, `(A)-[:T]->(B)` ->
    `A T B`, `releaseYear` -> `release Year releaseYear`."""
    parts = re.findall(r"[A-Za-z0-9]+", name)
    split = [p for w in parts for p in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", w)]
    return " ".join(dict.fromkeys([*parts, *split]))


def served(row: Mapping[str, Any], weight: float) -> dict[str, Any]:
    """An example as the fronts serve it (+ `language` and `fingerprint`, for the library)."""
    keys = ("id", "question", "query", "template", "uses", "language", "fingerprint")
    return {**{k: row[k] for k in keys}, "weight": round(weight, 6)}


def full(row: Mapping[str, Any]) -> dict[str, Any]:
    """An example as the operator sees it (`show`, `export`)."""
    out = {k: row[k] for k in FIELDS}
    out["codes"] = json.loads(out["codes"])
    for flag in FLAGS:
        out[flag] = bool(out[flag])
    return out


def loadable(example: Mapping[str, Any]) -> dict[str, Any]:
    """An exported example as the columns to insert (`import`)."""
    row = {k: example[k] for k in FIELDS if k != "id" and k in example}
    row["codes"] = json.dumps(row.get("codes", []))
    for flag in FLAGS:
        if flag in row:
            row[flag] = int(bool(row[flag]))
    return row
