"""The embedded experience store: one SQLite file (WAL) in `[server] data_dir`, with an FTS5
index over each example's question and the schema names its query uses, ranked by BM25
(`query_guard.experience.store` has the protocol and the ranking both stores share)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from query_guard.experience.store import (
    CANDIDATES,
    FLAGS,
    MAX_RUNS,
    WITHHELD_AFTER,
    Decay,
    NewExample,
    full,
    loadable,
    match_words,
    question_shape,
)  # fmt: skip

_SCHEMA = """
CREATE TABLE IF NOT EXISTS examples (
    id INTEGER PRIMARY KEY, database TEXT NOT NULL, language TEXT NOT NULL,
    question TEXT NOT NULL, query TEXT NOT NULL, template TEXT NOT NULL,
    fingerprint TEXT NOT NULL, codes TEXT NOT NULL, rows INTEGER NOT NULL,
    weight REAL NOT NULL, stamp REAL NOT NULL, uses INTEGER NOT NULL,
    created REAL NOT NULL, last_used REAL NOT NULL, names TEXT NOT NULL,
    pinned INTEGER NOT NULL DEFAULT 0, banned INTEGER NOT NULL DEFAULT 0,
    wrong INTEGER NOT NULL DEFAULT 0, stale INTEGER NOT NULL DEFAULT 0, vector TEXT,
    shape TEXT NOT NULL DEFAULT '',
    UNIQUE (database, language, template, question)
);
CREATE VIRTUAL TABLE IF NOT EXISTS examples_fts USING fts5(
    shape, names, content='examples', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS examples_ai AFTER INSERT ON examples BEGIN
    INSERT INTO examples_fts(rowid, shape, names) VALUES (new.id, new.shape, new.names);
END;
CREATE TRIGGER IF NOT EXISTS examples_ad AFTER DELETE ON examples BEGIN
    INSERT INTO examples_fts(examples_fts, rowid, shape, names)
    VALUES ('delete', old.id, old.shape, old.names);
END;
CREATE TABLE IF NOT EXISTS elements (
    database TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
    weight REAL NOT NULL, stamp REAL NOT NULL, PRIMARY KEY (database, kind, name)
);
CREATE TABLE IF NOT EXISTS runs (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, example_id INTEGER,
    database TEXT NOT NULL, elements TEXT NOT NULL
);
"""
_ADDED = {"stale": "INTEGER NOT NULL DEFAULT 0", "vector": "TEXT",
          "shape": "TEXT NOT NULL DEFAULT ''"}  # fmt: skip
# the index of the first version (over the question itself), replaced by one over the shape
_OLD_INDEX = "DROP TRIGGER IF EXISTS examples_ai; DROP TRIGGER IF EXISTS examples_ad; " \
             "DROP TABLE IF EXISTS examples_fts;"
_KEY = "database=? AND language=? AND template=? AND question=?"


class SqliteStore:
    """The embedded store (one connection; callers serialise access)."""

    def __init__(self, path: str | Path, decay: Decay | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.decay = decay or Decay()
        self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self._upgrade()
        self.db.executescript(_SCHEMA)

    def _upgrade(self) -> None:
        """A library written by an earlier version: new columns, the index over the shape."""
        have = {row[1] for row in self.db.execute("PRAGMA table_info(examples)")}
        if not have:
            return
        for column, kind in _ADDED.items():
            if column not in have:
                self.db.execute(f"ALTER TABLE examples ADD COLUMN {column} {kind}")
        indexed = {row[1] for row in self.db.execute("PRAGMA table_info(examples_fts)")}
        if "shape" not in indexed:
            with self.db:
                self.db.executescript(_OLD_INDEX)
                for row in self.db.execute("SELECT id, question FROM examples").fetchall():
                    self.db.execute("UPDATE examples SET shape=? WHERE id=?",
                                    (question_shape(row[1]), row[0]))  # fmt: skip
            self.db.executescript(_SCHEMA)
            self.db.execute("INSERT INTO examples_fts(examples_fts) VALUES ('rebuild')")

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ learning

    def deposit(self, example: NewExample, run_id: str, now: float, limit: int) -> int | None:
        """Store or reinforce the example of a verified run; None when it is banned."""
        key = (example.database, example.language, example.template, example.question)
        with self.db:
            row = self.db.execute(f"SELECT * FROM examples WHERE {_KEY}", key).fetchone()
            if row is not None and row["banned"]:
                return None
            if row is None:
                cursor = self.db.execute(
                    "INSERT INTO examples (database, language, question, query, template, "
                    "fingerprint, codes, rows, weight, stamp, uses, created, last_used, names, "
                    "shape) VALUES (?,?,?,?,?,?,?,?,?,?,1,?,?,?,?)",
                    (*key[:2], example.question, example.query, example.template,
                     example.fingerprint, json.dumps(example.codes), example.rows,
                     self.decay.deposit, now, now, now, example.names, example.shape),
                )  # fmt: skip
                example_id = int(cursor.lastrowid or 0)
            else:
                example_id = int(row["id"])
                weight = self.decay.now(row["weight"], row["stamp"], now) + self.decay.deposit
                self.db.execute(
                    "UPDATE examples SET weight=?, stamp=?, uses=uses+1, last_used=?, query=?, "
                    "rows=?, fingerprint=?, stale=0 WHERE id=?",
                    (weight, now, now, example.query, example.rows, example.fingerprint,
                     example_id),
                )  # fmt: skip
            self.reinforce(example.database, example.elements, self.decay.deposit, now)
            self._remember(run_id, example_id, example.database, example.elements)
            self._evict(example.database, limit, now)
        return example_id

    def _remember(
        self, run_id: str, example_id: int | None, database: str, elements: list[tuple[str, str]]
    ) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO runs (id, example_id, database, elements) VALUES (?,?,?,?)",
            (run_id, example_id, database, json.dumps(sorted(elements))),
        )
        self.db.execute(
            "DELETE FROM runs WHERE seq <= (SELECT max(seq) FROM runs) - ?", (MAX_RUNS,)
        )

    def reinforce(
        self, database: str, elements: Iterable[tuple[str, str]], delta: float, now: float
    ) -> None:
        for kind, name in elements:
            row = self.db.execute(
                "SELECT weight, stamp FROM elements WHERE database=? AND kind=? AND name=?",
                (database, kind, name),
            ).fetchone()
            weight = self.decay.now(row[0], row[1], now) if row is not None else 0.0
            self.db.execute(
                "INSERT OR REPLACE INTO elements VALUES (?,?,?,?,?)",
                (database, kind, name, max(0.0, weight + delta), now),
            )

    def _evict(self, database: str, limit: int, now: float) -> None:
        """Keep at most `limit` examples of `database`: the lowest weights go (pins stay)."""
        if limit <= 0:
            return
        rows = self.db.execute(
            "SELECT id, weight, stamp, pinned FROM examples WHERE database=?", (database,)
        ).fetchall()
        if len(rows) <= limit:
            return
        unpinned = sorted((r for r in rows if not r["pinned"]),
                          key=lambda r: self.decay.now(r["weight"], r["stamp"], now))  # fmt: skip
        for row in unpinned[: len(rows) - limit]:
            self.db.execute("DELETE FROM examples WHERE id=?", (row["id"],))

    def feedback(self, run_id: str, correct: bool, now: float) -> dict[str, Any] | None:
        """Apply a "correct" / "wrong" report on a query id (None: the id is unknown)."""
        run = self.db.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        if run is None:
            return None
        delta = self.decay.deposit if correct else -self.decay.deposit
        out: dict[str, Any] = {"example": run["example_id"]}
        with self.db:
            self.reinforce(run["database"], map(tuple, json.loads(run["elements"])), delta, now)
            row = self.db.execute(
                "SELECT * FROM examples WHERE id=?", (run["example_id"],)
            ).fetchone()
            if row is not None:
                weight = max(0.0, self.decay.now(row["weight"], row["stamp"], now) + delta)
                wrong = max(0, row["wrong"] - 1) if correct else row["wrong"] + 1
                self.db.execute("UPDATE examples SET weight=?, stamp=?, wrong=? WHERE id=?",
                                (weight, now, wrong, row["id"]))  # fmt: skip
                out["weight"] = round(weight, 6)
        return out

    # ------------------------------------------------------------------ retrieval

    def candidates(self, database: str, question: str, now: float) -> list[dict[str, Any]]:
        """The examples of `database` matching a word of `question` (BM25 `relevance`), best
        first; banned, withheld and stale ones never."""
        match = " OR ".join(f'"{w}"' for w in match_words(question))
        if not match:
            return []
        rows = self.db.execute(
            "SELECT e.*, -bm25(examples_fts) AS relevance FROM examples_fts "
            "JOIN examples e ON e.id = examples_fts.rowid WHERE examples_fts MATCH ? "
            "AND e.database=? AND e.banned=0 AND e.stale=0 AND e.wrong < ? "
            "ORDER BY bm25(examples_fts) LIMIT ?",
            (match, database, WITHHELD_AFTER, CANDIDATES),
        ).fetchall()
        return [dict(row) for row in rows]

    def weights(self, database: str, now: float) -> dict[tuple[str, str], float]:
        """The weight now of every schema element of `database` (label, pattern, property)."""
        rows = self.db.execute(
            "SELECT kind, name, weight, stamp FROM elements WHERE database=?", (database,)
        )
        return {(r[0], r[1]): self.decay.now(r[2], r[3], now) for r in rows}

    def refingerprint(self, example_id: int, fingerprint: str) -> None:
        with self.db:
            self.db.execute("UPDATE examples SET fingerprint=? WHERE id=?",
                            (fingerprint, example_id))  # fmt: skip

    def set_vector(self, example_id: int, vector: list[float]) -> None:
        with self.db:
            self.db.execute("UPDATE examples SET vector=? WHERE id=?",
                            (json.dumps(vector), example_id))  # fmt: skip

    # ------------------------------------------------------------------ operator

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM examples").fetchone()[0])

    def recent(self, limit: int, now: float) -> list[dict[str, Any]]:
        """The `limit` examples served or learnt last, with their weight now (the console)."""
        rows = self.db.execute(
            "SELECT * FROM examples ORDER BY last_used DESC, id DESC LIMIT ?", (limit,)
        ).fetchall()
        return [{**full(r), "weight": self.decay.now(r["weight"], r["stamp"], now)} for r in rows]

    def examples(self, database: str | None = None) -> Iterator[dict[str, Any]]:
        where, args = ("WHERE database=?", (database,)) if database is not None else ("", ())
        for row in self.db.execute(f"SELECT * FROM examples {where} ORDER BY id", args):
            yield full(row)

    def example(self, example_id: int) -> dict[str, Any] | None:
        row = self.db.execute("SELECT * FROM examples WHERE id=?", (example_id,)).fetchone()
        return full(row) if row is not None else None

    def mark(self, example_id: int, flag: str, value: bool = True) -> bool:
        """Set `pinned`, `banned` or `stale` (False: no such example)."""
        assert flag in FLAGS, flag
        with self.db:
            done = self.db.execute(
                f"UPDATE examples SET {flag}=? WHERE id=?", (int(value), example_id)
            )
        return done.rowcount > 0

    def forget(self, example_id: int) -> bool:
        with self.db:
            done = self.db.execute("DELETE FROM examples WHERE id=?", (example_id,))
            self.db.execute("UPDATE runs SET example_id=NULL WHERE example_id=?", (example_id,))
        return done.rowcount > 0

    def load(self, example: dict[str, Any]) -> int:
        """An exported example read back (`import`): replaces one with the same key."""
        row = loadable(example)
        row.setdefault("names", "")
        row.setdefault("shape", question_shape(row["question"]))
        with self.db:
            key = (row["database"], row["language"], row["template"], row["question"])
            self.db.execute(f"DELETE FROM examples WHERE {_KEY}", key)
            cursor = self.db.execute(
                f"INSERT INTO examples ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                tuple(row.values()),
            )
        return int(cursor.lastrowid or 0)
