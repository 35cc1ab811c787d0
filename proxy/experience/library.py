"""The experience library of one proxy: the runner's `on_result` hook (verified runs become
examples), few-shot examples for a question, and feedback on query ids (DESIGN §10).

The hook runs on the event loop and only decides (`verify.unverified`, cheap); templating,
parsing and every store call run on one dedicated worker thread, in the order they were asked
for — so an example learnt from a response is there for the next request. Runs that become no
example are remembered in memory (a bounded map of recent ids), so feedback on them still
reaches the schema elements their query used."""

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
from query_guard.experience.store import Decay, ExperienceStore, NewExample, SqliteStore
from query_guard.experience.templates import Template, template_of
from query_guard.experience.verify import unverified
from query_guard.run.seen import Seen

log = logging.getLogger("query_guard.experience")
T = TypeVar("T")
MAX_RECENT = 10_000  # ids of runs that became no example, kept for feedback
OUTCOMES = ("correct", "wrong")


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
        metrics=metrics,
    )  # fmt: skip


def open_store(config: Mapping[str, Any], data_dir: str) -> SqliteStore:
    """The store `[experience]` names: a SQLite file (`store`), else `experience.sqlite3` in
    `[server] data_dir`."""
    target = str(config["store"]) or str(Path(data_dir).expanduser() / "experience.sqlite3")
    decay = Decay(half_life=float(config["half_life_hours"]) * 3600.0)
    return SqliteStore(target.removeprefix("sqlite:///"), decay)


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
    ) -> None:
        self.store = store
        self.max_examples = max_examples
        self.store_literals = store_literals
        self.catalog = catalog  # language -> its schema catalog (for the fingerprint)
        self.dialect = dialect
        self.clock = clock
        self.metrics = metrics
        self.size = store.count()
        self._recent: OrderedDict[str, tuple[str, str, str]] = OrderedDict()
        self._fingerprints: dict[int, str] = {}
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
        catalog = self.catalog(req.language)
        fingerprint = self._fingerprints.get(id(catalog))
        if fingerprint is None:
            fingerprint = self._fingerprints[id(catalog)] = schema_fingerprint(catalog)
        codes = seen.outcome.verdict.codes
        learn = (req.id, database, req.language, str(req.question), query, fingerprint, codes,
                 seen.rows)  # fmt: skip
        self._worker.submit(self._learn, *learn)

    def _learn(
        self, run_id: str, database: str, language: str, question: str, query: str,
        fingerprint: str, codes: list[str], rows: int,
    ) -> None:  # fmt: skip
        try:
            template = template_of(language, query, self.dialect)
            if not self.store_literals:
                question, query = masked(question, template), template.text
            example = NewExample(database, language, question.strip(), query, template.text,
                                 fingerprint, codes, rows, sorted(template.elements))  # fmt: skip
            self.store.deposit(example, run_id, self.clock(), self.max_examples)
            self.size = self.store.count()
        except Exception:  # learning must never disturb serving
            log.exception("experience: could not store a verified run")

    # ------------------------------------------------------------------ serving

    async def examples(self, question: str, k: int, database: str = "") -> list[dict[str, Any]]:
        """At most `k` examples for `question`, best first."""
        found = await self._call(self.store.search, database, question, k, self.clock())
        if self.metrics is not None and found:
            self.metrics.experience_hits.inc(len(found))
        return found

    async def listing(self, limit: int) -> list[dict[str, Any]]:
        """The `limit` examples served or learnt last (the operator console)."""
        return await self._call(self.store.recent, limit, self.clock())

    async def feedback(self, run_id: str, outcome: str) -> dict[str, Any]:
        """Apply a "correct" or "wrong" report on a query id; `UnknownQueryId` when this
        proxy does not know the id."""
        assert outcome in OUTCOMES, outcome
        correct = outcome == "correct"
        done = await self._call(self.store.feedback, run_id, correct, self.clock())
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
