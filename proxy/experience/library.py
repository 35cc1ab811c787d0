"""The experience library of one proxy: the runner's `on_result` hook (verified runs become
examples), few-shot examples for a question, and feedback on query ids (DESIGN §10).

The hook runs on the event loop and only decides (`verify.unverified`, cheap); templating,
parsing and every store call run on one dedicated worker thread, in the order they were asked
for — so an example learnt from a response is there for the next request. Runs that become no
example are remembered in memory (a bounded map of recent ids), so feedback on them still
reaches the schema elements their query used.

`weigher` hands the repair loop a snapshot of the element weights (DESIGN §10: weights break
ties between admissible repair candidates), read on the same worker and kept until the next
deposit, feedback or `SNAPSHOT_SECONDS` (other proxies may share the store): a repair pays
for no store read in the common case, and the loop itself never reads the store."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from query_guard.config.load import Config
from query_guard.errors import ConfigError
from query_guard.experience.embeddings import Embeddings, blend
from query_guard.experience.schema_order import candidate_weight
from query_guard.experience.sqlite_store import SqliteStore
from query_guard.experience.store import (
    Decay,
    ExperienceStore,
    NewExample,
    query_hints,
    question_shape,
    rank,
)
from query_guard.experience.templates import Template, template_of
from query_guard.experience.verify import left_warnings, unverified
from query_guard.run.seen import Seen

log = logging.getLogger("query_guard.experience")
T = TypeVar("T")
MAX_RECENT = 10_000  # ids of runs that became no example, kept for feedback
OUTCOMES = ("correct", "wrong")
EMBEDDED = 50  # lexical candidates that get a vector, best first
SERVED = ("id", "question", "query", "template", "weight", "uses")
SNAPSHOT_SECONDS = 60.0  # a weights snapshot for repair is re-read after this long


class UnknownQueryId(LookupError):
    """Feedback on an id this proxy never gave out (or long forgot)."""


def open_experience(config: Config, guard: Any, metrics: Any = None) -> Experience | None:
    """The proxy's library, unless `[experience] enabled` is false; `guard` (the pipeline)
    holds the schema catalog of the moment, for the fingerprint."""
    table = config.experience
    if not table["enabled"]:
        return None
    return Experience(
        open_store(table, str(config.server["data_dir"])),
        max_examples=int(table["max_examples"]), store_literals=bool(table["store_literals"]),
        catalog=lambda language: guard.ctx.schema, dialect=config.guard.sql_dialect,
        metrics=metrics, recheck=lambda language, query: passes(guard, language, query),
        embeddings=Embeddings.from_config(table.get("embeddings")),
    )  # fmt: skip


def open_store(config: Mapping[str, Any], data_dir: str) -> ExperienceStore:
    """The store `[experience]` names: a PostgreSQL database (`postgresql://…`, shared by
    every proxy that names it), a SQLite file, else `experience.sqlite3` in `data_dir`."""
    target = str(config["store"]) or str(Path(data_dir).expanduser() / "experience.sqlite3")
    decay = Decay(half_life=float(config["half_life_hours"]) * 3600.0)
    if target.startswith(("postgresql://", "postgres://")):
        try:
            from query_guard.experience.postgres_store import PostgresStore
        except ModuleNotFoundError as exc:  # asyncpg: the `postgres` extra
            raise ConfigError(
                "experience.store", f"a PostgreSQL store needs the postgres extra ({exc}): "
                "pip install 'query-guard[postgres]'"
            ) from exc
        return PostgresStore(target, decay)
    return SqliteStore(target.removeprefix("sqlite:///"), decay)


def passes(guard: Any, language: str, query: str) -> bool:
    """Whether `query` still passes the guard as it is now: let through unchanged (no fix
    needed, e.g. a relationship type renamed away), no warning left — an example learnt
    under an earlier schema is re-checked so before it is served."""
    try:
        verdict = guard.check(query, language)
    except Exception:  # a query the guard can no longer read does not pass
        return False
    return str(verdict.action) == "allow" and not left_warnings(verdict)


def schema_fingerprint(catalog: Any) -> str:
    """A stable hash of a schema catalog (its JSON form, keys sorted); "" without one."""
    if catalog is None:
        return ""
    to_dict = getattr(catalog, "to_dict", None)
    form = to_dict() if callable(to_dict) else repr(catalog)
    text = json.dumps(form, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Experience:
    """`__call__` is the runner's `on_result` hook; `examples` and `feedback` serve the
    fronts; `close` waits for pending writes."""

    def __init__(
        self,
        store: ExperienceStore,
        *,
        max_examples: int = 10_000,
        store_literals: bool = True,
        catalog: Callable[[str], Any] = lambda language: None,
        dialect: str = "postgres",
        clock: Callable[[], float] = time.time,
        metrics: Any = None,
        recheck: Callable[[str, str], bool] | None = None,
        embeddings: Embeddings | None = None,
    ) -> None:
        self.store = store
        self.max_examples = max_examples
        self.store_literals = store_literals
        self.catalog = catalog  # language -> its schema catalog (for the fingerprint)
        self.dialect = dialect
        self.clock = clock
        self.metrics = metrics
        self.recheck = recheck  # (language, query) -> still passes the guard (schema drift)
        self.embeddings = embeddings
        self.size = store.count()
        self._recent: OrderedDict[str, tuple[str, str, str]] = OrderedDict()
        self._fingerprints: dict[int, str] = {}
        self._snapshots: dict[str, tuple[float, dict[tuple[str, str], float]]] = {}
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="query-guard-experience")
        if metrics is not None:
            metrics.experience_examples.set_function(lambda: self.size)

    def close(self) -> None:
        self._worker.shutdown(wait=True)
        self.store.close()

    # ------------------------------------------------------------------ learning

    def __call__(self, seen: Seen) -> None:
        req = seen.request
        database = req.database or ""
        query = seen.outcome.ran or seen.outcome.verdict.to_run
        if unverified(seen) is not None:
            self._recent[req.id] = (database, req.language, query)
            while len(self._recent) > MAX_RECENT:
                self._recent.popitem(last=False)
            return
        fingerprint = self.fingerprint(req.language)
        codes = seen.outcome.verdict.codes
        learn = (req.id, database, req.language, str(req.question), query, fingerprint, codes,
                 seen.rows)  # fmt: skip
        self._worker.submit(self._learn, *learn)

    def fingerprint(self, language: str) -> str:
        """The fingerprint of `language`'s schema catalog now (cached per catalog object)."""
        catalog = self.catalog(language)
        fingerprint = self._fingerprints.get(id(catalog))
        if fingerprint is None:
            self._fingerprints.clear()  # catalogs are replaced, never changed in place
            fingerprint = self._fingerprints[id(catalog)] = schema_fingerprint(catalog)
        return fingerprint

    def _learn(
        self, run_id: str, database: str, language: str, question: str, query: str,
        fingerprint: str, codes: list[str], rows: int,
    ) -> None:  # fmt: skip
        try:
            template = template_of(language, query, self.dialect)
            if not self.store_literals:
                question, query = masked(question, template), template.text
            shape = question_shape(masked(question, template))
            example = NewExample(database, language, question.strip(), query, template.text,
                                 fingerprint, codes, rows, sorted(template.elements),
                                 shape, query_hints(template.text))  # fmt: skip
            self.store.deposit(example, run_id, self.clock(), self.max_examples)
            self._snapshots.clear()
            self.size = self.store.count()
        except Exception:  # learning must never disturb serving
            log.exception("experience: could not store a verified run")

    # ------------------------------------------------------------------ serving

    async def examples(self, question: str, k: int, database: str = "") -> list[dict[str, Any]]:
        """At most `k` examples for `question`, best first: the store's full-text candidates
        (blended with embeddings when configured), ranked by relevance times weight, one per
        template; an example learnt under another schema is re-checked first."""
        if k <= 0:
            return []
        now = self.clock()
        rows = await self._call(self.store.candidates, database, question, now)
        if self.embeddings is not None and rows:
            await self._semantic(question, rows)
        found = await self._call(self._current, rank(rows, len(rows), self.store.decay, now), k)
        if self.metrics is not None and found:
            self.metrics.experience_hits.inc(len(found))
        return found

    async def listing(self, limit: int) -> list[dict[str, Any]]:
        """The `limit` examples served or learnt last (the operator console)."""
        return await self._call(self.store.recent, limit, self.clock())
    async def weights(self, database: str = "") -> dict[tuple[str, str], float]:
        """The weight now of each schema element verified runs used (label, pattern,
        property)."""
        return await self._call(self.store.weights, database, self.clock())

    def _current(self, ranked: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
        """The first `k` of `ranked` that still pass the guard under today's schema: one whose
        fingerprint differs is re-checked — passing, it takes today's fingerprint; failing,
        it is flagged stale and never served again (the operator still sees it)."""
        out = []
        for example in ranked:
            now = self.fingerprint(example["language"])
            if example["fingerprint"] != now and self.recheck is not None:
                if self.recheck(example["language"], example["query"]):
                    self.store.refingerprint(example["id"], now)
                else:
                    self.store.mark(example["id"], "stale")
                    continue
            out.append({key: example[key] for key in SERVED})
            if len(out) == k:
                break
        return out

    async def _semantic(self, question: str, rows: list[dict[str, Any]]) -> None:
        """Blend cosine similarity into the relevance of the best `EMBEDDED` candidates."""
        assert self.embeddings is not None
        rows[:] = rows[:EMBEDDED]
        for row in rows:
            row["vector"] = json.loads(row["vector"]) if row.get("vector") else None
        missing = [row for row in rows if row["vector"] is None]
        vectors = await self.embeddings.vectors([question, *(r["question"] for r in missing)])
        if vectors is None:
            return
        for row, vector in zip(missing, vectors[1:], strict=True):
            row["vector"] = vector
            self._worker.submit(self.store.set_vector, row["id"], vector)
        blend(rows, vectors[0])

    async def feedback(self, run_id: str, outcome: str) -> dict[str, Any]:
        """Apply a "correct" or "wrong" report on a query id; `UnknownQueryId` when this
        proxy does not know the id."""
        assert outcome in OUTCOMES, outcome
        correct = outcome == "correct"
        done = await self._call(self._feedback, run_id, correct)
        if done is None:
            recent = self._recent.get(run_id)
            if recent is None:
                raise UnknownQueryId(run_id)
            await self._call(self._reinforce_run, *recent, correct)
            done = {"example": None}
        if self.metrics is not None:
            self.metrics.experience_feedback.labels(outcome=outcome).inc()
        return {"id": run_id, "outcome": outcome, **done}

    def _reinforce_run(self, database: str, language: str, query: str, correct: bool) -> None:
        """Feedback on a run that is no example: on the schema elements its query used."""
        try:
            elements = template_of(language, query, self.dialect).elements
        except Exception:  # a query that does not parse used no element we can name
            return
        delta = self.store.decay.deposit * (1 if correct else -1)
        self.store.reinforce(database, elements, delta, self.clock())
        self._snapshots.clear()

    def _feedback(self, run_id: str, correct: bool) -> dict[str, Any] | None:
        done = self.store.feedback(run_id, correct, self.clock())
        self._snapshots.clear()
        return done

    async def weigher(self, database: str, language: str) -> Callable[[str], float] | None:
        """The repair loop's tie-breaker for `database`: a candidate query's text -> the
        weight of the schema elements it uses (`candidate_weight`); None while no element of
        `database` has a weight (the loop then keeps its own order)."""
        weights = await self._call(self._snapshot, database)
        if not any(weights.values()):
            return None
        dialect = self.dialect
        return lambda text: candidate_weight(weights, language, text, dialect)

    def _snapshot(self, database: str) -> dict[tuple[str, str], float]:
        now = self.clock()
        kept = self._snapshots.get(database)
        if kept is None or not 0 <= now - kept[0] < SNAPSHOT_SECONDS:
            kept = self._snapshots[database] = (now, self.store.weights(database, now))
        return kept[1]

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.wrap_future(self._worker.submit(fn, *args))


def masked(question: str, template: Template) -> str:
    """The question with the query's literal values replaced by their slots (`store_literals
    = false`): "movies of Tom Hanks" with `$s1 = 'Tom Hanks'` -> "movies of $s1"."""
    for slot, value in template.literals.items():
        text = str(value)
        if len(text) >= 2:
            question = re.sub(re.escape(text), slot, question, flags=re.IGNORECASE)
    return question
