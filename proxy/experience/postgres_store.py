"""The shared experience store (`[experience] store = "postgresql://…"`): one library for
every proxy that names the same database. Same tables and ranking as the embedded store
(`query_guard.experience.store`), with PostgreSQL's full text in place of FTS5: a generated
`tsvector` over the question's shape and the schema names its query uses (English stemming, a GIN
index), matched by any word of the question and ranked by `ts_rank`.

Proxies write concurrently: a deposit inserts or updates its example under a row lock, and an
element's weight is decayed and raised in one `INSERT … ON CONFLICT DO UPDATE`, so no update
is lost. asyncpg is asynchronous while stores are called from the library's worker thread:
the store runs its own event loop, one call at a time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine, Iterable, Iterator
from typing import Any, TypeVar

import asyncpg

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

T = TypeVar("T")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS qg_examples (
    id BIGSERIAL PRIMARY KEY, database TEXT NOT NULL, language TEXT NOT NULL,
    question TEXT NOT NULL, query TEXT NOT NULL, template TEXT NOT NULL,
    fingerprint TEXT NOT NULL, codes TEXT NOT NULL, rows BIGINT NOT NULL,
    weight DOUBLE PRECISION NOT NULL, stamp DOUBLE PRECISION NOT NULL, uses BIGINT NOT NULL,
    created DOUBLE PRECISION NOT NULL, last_used DOUBLE PRECISION NOT NULL, names TEXT NOT NULL,
    pinned INTEGER NOT NULL DEFAULT 0, banned INTEGER NOT NULL DEFAULT 0,
    wrong INTEGER NOT NULL DEFAULT 0, stale INTEGER NOT NULL DEFAULT 0, vector TEXT,
    shape TEXT NOT NULL DEFAULT '',
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', shape || ' ' || names)) STORED,
    UNIQUE (database, language, template, question)
);
CREATE INDEX IF NOT EXISTS qg_examples_tsv ON qg_examples USING GIN (tsv);
CREATE TABLE IF NOT EXISTS qg_elements (
    database TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
    weight DOUBLE PRECISION NOT NULL, stamp DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (database, kind, name)
);
CREATE TABLE IF NOT EXISTS qg_runs (
    seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, example_id BIGINT,
    database TEXT NOT NULL, elements TEXT NOT NULL
);
"""
_KEY = "database=$1 AND language=$2 AND template=$3 AND question=$4"
_LOCK = 0x7167_6578  # advisory lock key: one proxy creates the tables at a time


class PostgresStore:
    """A store in a PostgreSQL database (one connection, its own event loop)."""

    def __init__(self, url: str, decay: Decay | None = None) -> None:
        self.decay = decay or Decay()
        self.loop = asyncio.new_event_loop()
        self.db: asyncpg.Connection = self._run(asyncpg.connect(url))
        self._run(self._create())

    async def _create(self) -> None:
        async with self.db.transaction():
            await self.db.execute("SELECT pg_advisory_xact_lock($1)", _LOCK)
            await self.db.execute(_SCHEMA)

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        if self.loop.is_closed():
            return
        self._run(self.db.close())
        self.loop.close()

    # ------------------------------------------------------------------ learning

    def deposit(self, example: NewExample, run_id: str, now: float, limit: int) -> int | None:
        """Store or reinforce the example of a verified run; None when it is banned."""
        return self._run(self._deposit(example, run_id, now, limit))

    async def _deposit(self, ex: NewExample, run_id: str, now: float, limit: int) -> int | None:
        key = (ex.database, ex.language, ex.template, ex.question)
        async with self.db.transaction():
            example_id = await self.db.fetchval(
                "INSERT INTO qg_examples (database, language, template, question, query, "
                "fingerprint, codes, rows, weight, stamp, uses, created, last_used, names, "
                "shape) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,1,$10,$10,$11,$12) "
                "ON CONFLICT (database, language, template, question) DO NOTHING RETURNING id",
                *key, ex.query, ex.fingerprint, json.dumps(ex.codes), ex.rows,
                self.decay.deposit, now, ex.names, ex.shape,
            )  # fmt: skip
            if example_id is None:
                row = await self.db.fetchrow(
                    f"SELECT * FROM qg_examples WHERE {_KEY} FOR UPDATE", *key
                )
                if row["banned"]:
                    return None
                example_id = row["id"]
                weight = self.decay.now(row["weight"], row["stamp"], now) + self.decay.deposit
                await self.db.execute(
                    "UPDATE qg_examples SET weight=$1, stamp=$2, uses=uses+1, last_used=$2, "
                    "query=$3, rows=$4, fingerprint=$5, stale=0 WHERE id=$6",
                    weight, now, ex.query, ex.rows, ex.fingerprint, example_id,
                )  # fmt: skip
            await self._reinforce(ex.database, ex.elements, self.decay.deposit, now)
            await self.db.execute(
                "INSERT INTO qg_runs (id, example_id, database, elements) VALUES ($1,$2,$3,$4) "
                "ON CONFLICT (id) DO UPDATE SET example_id=$2, database=$3, elements=$4",
                run_id, example_id, ex.database, json.dumps(sorted(ex.elements)),
            )  # fmt: skip
            await self.db.execute(
                "DELETE FROM qg_runs WHERE seq <= (SELECT max(seq) FROM qg_runs) - $1", MAX_RUNS
            )
            await self._evict(ex.database, limit, now)
        return int(example_id)

    def reinforce(
        self, database: str, elements: Iterable[tuple[str, str]], delta: float, now: float
    ) -> None:
        self._run(self._reinforce(database, elements, delta, now))

    async def _reinforce(
        self, database: str, elements: Iterable[tuple[str, str]], delta: float, now: float
    ) -> None:
        """Decay and raise in one statement (the weight now, computed by the server)."""
        await self.db.executemany(
            "INSERT INTO qg_elements VALUES ($1, $2, $3, greatest(0, $4::float8), $5) "
            "ON CONFLICT (database, kind, name) DO UPDATE SET weight = greatest(0, "
            "CASE WHEN $6::float8 > 0 THEN qg_elements.weight * power(0.5, "
            "greatest(0, $5 - qg_elements.stamp) / $6) ELSE qg_elements.weight END + $4), "
            "stamp = greatest(qg_elements.stamp, $5)",
            [(database, kind, name, delta, now, self.decay.half_life) for kind, name in elements],
        )

    async def _evict(self, database: str, limit: int, now: float) -> None:
        """Keep at most `limit` examples of `database`: the lowest weights go (pins stay)."""
        if limit <= 0:
            return
        rows = await self.db.fetch(
            "SELECT id, weight, stamp, pinned FROM qg_examples WHERE database=$1", database
        )
        if len(rows) <= limit:
            return
        unpinned = sorted((r for r in rows if not r["pinned"]),
                          key=lambda r: self.decay.now(r["weight"], r["stamp"], now))  # fmt: skip
        doomed = [r["id"] for r in unpinned[: len(rows) - limit]]
        await self.db.execute("DELETE FROM qg_examples WHERE id = ANY($1::bigint[])", doomed)

    def feedback(self, run_id: str, correct: bool, now: float) -> dict[str, Any] | None:
        """Apply a "correct" / "wrong" report on a query id (None: the id is unknown)."""
        return self._run(self._feedback(run_id, correct, now))

    async def _feedback(self, run_id: str, correct: bool, now: float) -> dict[str, Any] | None:
        run = await self.db.fetchrow("SELECT * FROM qg_runs WHERE id=$1", run_id)
        if run is None:
            return None
        delta = self.decay.deposit if correct else -self.decay.deposit
        out: dict[str, Any] = {"example": run["example_id"]}
        async with self.db.transaction():
            elements = [tuple(e) for e in json.loads(run["elements"])]
            await self._reinforce(run["database"], elements, delta, now)
            row = await self.db.fetchrow(
                "SELECT * FROM qg_examples WHERE id=$1 FOR UPDATE", run["example_id"]
            )
            if row is not None:
                weight = max(0.0, self.decay.now(row["weight"], row["stamp"], now) + delta)
                wrong = max(0, row["wrong"] - 1) if correct else row["wrong"] + 1
                await self.db.execute(
                    "UPDATE qg_examples SET weight=$1, stamp=$2, wrong=$3 WHERE id=$4",
                    weight, now, wrong, row["id"],
                )  # fmt: skip
                out["weight"] = round(weight, 6)
        return out

    # ------------------------------------------------------------------ retrieval

    def candidates(self, database: str, question: str, now: float) -> list[dict[str, Any]]:
        """The examples of `database` matching a word of `question` (`ts_rank` relevance),
        best first; banned, withheld and stale ones never."""
        words = match_words(question)
        if not words:
            return []
        rows = self._run(self.db.fetch(
            "SELECT e.*, ts_rank(e.tsv, q) AS relevance FROM qg_examples e, "
            "to_tsquery('english', $1) q WHERE e.tsv @@ q AND e.database=$2 AND e.banned=0 "
            "AND e.stale=0 AND e.wrong < $3 ORDER BY relevance DESC LIMIT $4",
            " | ".join(f"'{w}'" for w in words), database, WITHHELD_AFTER, CANDIDATES,
        ))  # fmt: skip
        return [{k: v for k, v in row.items() if k != "tsv"} for row in rows]

    def weights(self, database: str, now: float) -> dict[tuple[str, str], float]:
        rows = self._run(self.db.fetch(
            "SELECT kind, name, weight, stamp FROM qg_elements WHERE database=$1", database
        ))  # fmt: skip
        return {(r[0], r[1]): self.decay.now(r[2], r[3], now) for r in rows}

    def refingerprint(self, example_id: int, fingerprint: str) -> None:
        self._run(self.db.execute("UPDATE qg_examples SET fingerprint=$1 WHERE id=$2",
                                  fingerprint, example_id))  # fmt: skip

    def set_vector(self, example_id: int, vector: list[float]) -> None:
        self._run(self.db.execute("UPDATE qg_examples SET vector=$1 WHERE id=$2",
                                  json.dumps(vector), example_id))  # fmt: skip

    # ------------------------------------------------------------------ operator

    def count(self) -> int:
        return int(self._run(self.db.fetchval("SELECT count(*) FROM qg_examples")))

    def recent(self, limit: int, now: float) -> list[dict[str, Any]]:
        """The `limit` examples served or learnt last, with their weight now (the console)."""
        rows = self._run(self.db.fetch(
            "SELECT * FROM qg_examples ORDER BY last_used DESC, id DESC LIMIT $1", limit
        ))  # fmt: skip
        return [{**full(r), "weight": self.decay.now(r["weight"], r["stamp"], now)} for r in rows]

    def examples(self, database: str | None = None) -> Iterator[dict[str, Any]]:
        if database is None:
            rows = self._run(self.db.fetch("SELECT * FROM qg_examples ORDER BY id"))
        else:
            rows = self._run(self.db.fetch(
                "SELECT * FROM qg_examples WHERE database=$1 ORDER BY id", database
            ))  # fmt: skip
        for row in rows:
            yield full(row)

    def example(self, example_id: int) -> dict[str, Any] | None:
        row = self._run(self.db.fetchrow("SELECT * FROM qg_examples WHERE id=$1", example_id))
        return full(row) if row is not None else None

    def mark(self, example_id: int, flag: str, value: bool = True) -> bool:
        """Set `pinned`, `banned` or `stale` (False: no such example)."""
        assert flag in FLAGS, flag
        done = self._run(self.db.execute(
            f"UPDATE qg_examples SET {flag}=$1 WHERE id=$2", int(value), example_id
        ))  # fmt: skip
        return done != "UPDATE 0"

    def forget(self, example_id: int) -> bool:
        async def go() -> str:
            async with self.db.transaction():
                done = await self.db.execute("DELETE FROM qg_examples WHERE id=$1", example_id)
                await self.db.execute(
                    "UPDATE qg_runs SET example_id=NULL WHERE example_id=$1", example_id
                )
            return str(done)

        return self._run(go()) != "DELETE 0"

    def load(self, example: dict[str, Any]) -> int:
        """An exported example read back (`import`): replaces one with the same key."""
        row = loadable(example)
        row.setdefault("names", "")
        row.setdefault("shape", question_shape(row["question"]))

        async def go() -> int:
            async with self.db.transaction():
                key = (row["database"], row["language"], row["template"], row["question"])
                await self.db.execute(f"DELETE FROM qg_examples WHERE {_KEY}", *key)
                marks = ", ".join(f"${i}" for i in range(1, len(row) + 1))
                return int(await self.db.fetchval(
                    f"INSERT INTO qg_examples ({', '.join(row)}) VALUES ({marks}) RETURNING id",
                    *row.values(),
                ))  # fmt: skip

        return self._run(go())
