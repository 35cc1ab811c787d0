"""What the console shows, kept from the audit records (`query_guard.run.record.KEYS`): the
server's `on_query` hook feeds a `QueryFeed`, one per server, which keeps the last
`[console] recent_queries` queries in a ring and counts finding codes per minute for the last
`[console] history_minutes` minutes. Nothing here does I/O; `snapshot` is what a page shows."""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_TEXT = 4000  # characters of a query kept (the ring's memory stays bounded)
TOP = 10  # rows of the "top blocked" and "codes" tables


@dataclass(frozen=True, slots=True)
class Attempt:
    """One query the repair loop tried (`query_guard.repair.model.Attempt.to_dict`)."""

    query: str
    source: str
    code: str | None
    outcome: str
    rows: int
    error: str | None
    ms: float


@dataclass(frozen=True, slots=True)
class Entry:
    """One query as the console shows it (the audit record less its parameters)."""

    seq: int
    at: float  # wall clock, seconds
    id: str
    front: str
    client: str
    user: str | None
    language: str
    database: str | None
    question: str | None
    query: str  # the client's text
    forwarded: str | None  # what reached the database (None: nothing did)
    action: str  # allow | rewrite | block | error
    codes: tuple[str, ...]
    error: str | None
    guard_ms: int | None
    backend_ms: int | None
    attempts: tuple[Attempt, ...]
    repaired: bool

    @property
    def changed(self) -> bool:
        """Whether what was forwarded differs from what the client sent."""
        return self.forwarded is not None and self.forwarded != self.query


@dataclass(frozen=True, slots=True)
class Blocked:
    """A query text refused more than once is one row, with how often and why."""

    language: str
    query: str
    count: int
    codes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CodeSeries:
    """Queries per minute that carried `code`, oldest minute first."""

    code: str
    counts: tuple[int, ...]

    @property
    def total(self) -> int:
        return sum(self.counts)


@dataclass(frozen=True, slots=True)
class Snapshot:
    seq: int  # changes whenever a query arrives
    total: int  # queries seen since start
    verdicts: Mapping[str, int]  # since start, by action
    entries: tuple[Entry, ...]  # newest first
    blocked: tuple[Blocked, ...]
    codes: tuple[CodeSeries, ...]
    minutes: int


@dataclass
class _Minutes:
    """Finding codes counted per whole minute, the last `size` minutes."""

    size: int
    counts: dict[int, Counter[str]] = field(default_factory=dict)

    def add(self, minute: int, codes: tuple[str, ...]) -> None:
        self.counts.setdefault(minute, Counter()).update(set(codes))
        for old in [m for m in self.counts if m <= minute - self.size]:
            del self.counts[old]

    def series(self, now_minute: int) -> tuple[CodeSeries, ...]:
        span = range(now_minute - self.size + 1, now_minute + 1)
        totals: Counter[str] = Counter()
        for minute in span:
            totals.update(self.counts.get(minute, Counter()))
        return tuple(
            CodeSeries(code, tuple(self.counts.get(m, Counter())[code] for m in span))
            for code, _ in totals.most_common(TOP)
        )


class QueryFeed:
    """The `on_query` hook of one server; `snapshot()` for the console. Thread-safe (fronts
    call it on the event loop, tests and other callers may not)."""

    def __init__(
        self, recent: int = 200, minutes: int = 60, clock: Callable[[], float] = time.time
    ) -> None:
        self.clock = clock
        self._ring: deque[Entry] = deque(maxlen=recent)
        self._minutes = _Minutes(minutes)
        self._verdicts: Counter[str] = Counter()
        self._seq = 0
        self._lock = threading.Lock()

    @property
    def seq(self) -> int:
        return self._seq

    def __call__(self, record: Mapping[str, Any]) -> None:
        at = self.clock()
        with self._lock:
            self._seq += 1
            entry = entry_of(self._seq, at, record)
            self._ring.append(entry)
            self._verdicts[entry.action] += 1
            self._minutes.add(int(at // 60), entry.codes)

    @property
    def recent(self) -> int:
        return self._ring.maxlen or 0

    def snapshot(self) -> Snapshot:
        return self.state().snapshot(int(self.clock() // 60))

    def state(self) -> FeedState:
        """What this feed holds, as plain data (`query_guard.console.peers` sends it between
        workers and merges the states of all of them)."""
        with self._lock:
            return FeedState(
                self._seq, dict(self._verdicts), tuple(reversed(self._ring)),
                {minute: dict(counts) for minute, counts in self._minutes.counts.items()},
                self._minutes.size, self.recent,
            )  # fmt: skip


@dataclass(frozen=True, slots=True)
class FeedState:
    """A feed's contents; `merge` adds the states of several workers' feeds into one."""

    seq: int
    verdicts: Mapping[str, int]
    entries: tuple[Entry, ...]  # newest first
    minutes: Mapping[int, Mapping[str, int]]  # whole minute -> code -> queries that carried it
    size: int  # minutes kept
    recent: int  # entries kept

    def snapshot(self, now_minute: int) -> Snapshot:
        counts = _Minutes(self.size, {m: Counter(c) for m, c in self.minutes.items()})
        return Snapshot(self.seq, sum(self.verdicts.values()), dict(self.verdicts),
                        self.entries, top_blocked(self.entries), counts.series(now_minute),
                        self.size)  # fmt: skip

    @staticmethod
    def merge(states: list[FeedState]) -> FeedState:
        """One state of several feeds: the newest entries of all (as many as one keeps),
        verdicts and per-minute codes added up, the sequence numbers summed (the console's
        page reloads when the sum changes)."""
        verdicts: Counter[str] = Counter()
        minutes: dict[int, Counter[str]] = {}
        for state in states:
            verdicts.update(state.verdicts)
            for minute, counts in state.minutes.items():
                minutes.setdefault(minute, Counter()).update(counts)
        recent = max((s.recent for s in states), default=0)
        entries = sorted((e for s in states for e in s.entries), key=lambda e: e.at, reverse=True)
        return FeedState(sum(s.seq for s in states), dict(verdicts), tuple(entries[:recent]),
                         minutes, max((s.size for s in states), default=0), recent)  # fmt: skip


def console_feed(server: Mapping[str, Any]) -> QueryFeed | None:
    """The feed of a proxy with `[server]` table `server` (None: no HTTP listener, or
    `console = false`)."""
    if not server["http"] or not server["console"]:
        return None
    return QueryFeed(int(server["console_queries"]), int(server["console_minutes"]))


def top_blocked(entries: tuple[Entry, ...]) -> tuple[Blocked, ...]:
    """The query texts refused most often among `entries`, most often first."""
    counts: Counter[tuple[str, str]] = Counter()
    why: dict[tuple[str, str], tuple[str, ...]] = {}
    for entry in entries:
        if entry.action == "block":
            key = (entry.language, entry.query)
            counts[key] += 1
            why.setdefault(key, entry.codes)  # the newest refusal's codes
    return tuple(Blocked(lang, text, n, why[(lang, text)])
                 for (lang, text), n in counts.most_common(TOP))  # fmt: skip


def entry_of(seq: int, at: float, record: Mapping[str, Any]) -> Entry:
    """An audit record as the console keeps it: no parameters, texts cut to `MAX_TEXT`."""
    detail = record.get("detail") or {}
    forwarded = record.get("final_query")
    action = str(record.get("action") or "error")
    attempts = tuple(_attempt(a) for a in record.get("repair") or () if isinstance(a, Mapping))
    repaired = record.get("repaired")
    return Entry(
        seq=seq, at=at, id=str(detail.get("id") or ""), front=str(record.get("front") or ""),
        client=str(record.get("client") or ""), user=_text(record.get("user")),
        language=str(record.get("language") or "cypher"), database=_text(record.get("database")),
        question=_text(record.get("question")), query=_cut(str(record.get("query") or "")),
        forwarded=None if forwarded is None or action == "block" else _cut(str(forwarded)),
        action=action, codes=tuple(str(c) for c in record.get("codes") or ()),
        error=_text(record.get("error")), guard_ms=_ms(record.get("guard_ms")),
        backend_ms=_ms(record.get("backend_ms")), attempts=attempts,
        repaired=bool(repaired) if repaired is not None else bool(attempts) and any(
            a.source != "client" and a.query == forwarded for a in attempts),
    )  # fmt: skip


def _attempt(raw: Mapping[str, Any]) -> Attempt:
    return Attempt(_cut(str(raw.get("query") or "")), str(raw.get("source") or ""),
                   _text(raw.get("code")), str(raw.get("outcome") or ""),
                   int(raw.get("rows") or 0), _text(raw.get("error")),
                   float(raw.get("ms") or 0.0))  # fmt: skip


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + " … (cut)"


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _ms(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None
