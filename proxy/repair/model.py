"""The repair loop's vocabulary (DESIGN §6): settings, attempt records, a deterministic
candidate, what a `guard_repair` plugin is asked and answers, the loop's outcome, and the
peeked result stream."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from query_guard.backend import BackendError, ResultStream, ResultSummary
from query_guard.errors import ConfigError
from query_guard.model import Action, Edit, Finding, Verdict, apply_edits

ROWS, EMPTY, ERROR, BLOCKED = "rows", "empty", "error", "blocked"
SPECULATIVE_MODES = ("suggest", "apply")
OPT_IN = (
    'to have such repairs applied, send the question as transaction metadata ("question") '
    'or set [repair] speculative = "apply"'
)


async def await_me_maybe(value: Any) -> Any:
    """A hook result that may be a value, a coroutine or another awaitable (datasette's)."""
    if callable(value):
        value = value()
    if inspect.isawaitable(value):
        value = await value
    return value


def is_empty(rows: Sequence[Sequence[Any]], more: bool, aggregates: frozenset[int]) -> bool:
    """DESIGN §6: no rows, or one row whose aggregates are all 0, null or an empty list
    (`count(m) = 0` is what an empty answer looks like in a counting query)."""
    if not rows:
        return True
    if len(rows) > 1 or more or not aggregates:
        return False
    row = rows[0]
    return all(is_blank(row[i]) for i in aggregates if i < len(row))


def is_blank(value: Any) -> bool:
    """0, null or an empty list / map: what an aggregate over nothing returns."""
    if value is None or (isinstance(value, list | tuple | dict) and not value):
        return True
    return isinstance(value, int | float) and not isinstance(value, bool) and value == 0


# ---------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class Words:
    """How one language's repair findings name things: "the query returned nothing", "rows
    appeared", "would return 3 row(s)", how a client opts in, and how a literal is written,
    where it is stored ("'x' is not stored on Movie.title") and what to reconsider."""

    quote: Callable[[Any], str]
    noun: str = "query"
    rows: str = "rows"
    unit: str = "row(s)"
    opt_in: str = OPT_IN
    stored: str = "on"
    reconsider: str = "property or label"


@dataclass(frozen=True, slots=True)
class RepairSettings:
    """`[repair]` of the configuration. `speculative` says what happens to a repair whose
    fault is not certain (DESIGN §6): "suggest" (default) offers it as a notification,
    "apply" applies it; a client that sends its question opts in either way."""

    enabled: bool = True
    budget: int = 3
    tier1: bool = True
    grounding: bool = True
    relaxation: bool = True
    speculative: str = "suggest"

    @classmethod
    def from_config(cls, repair: Mapping[str, Any]) -> RepairSettings:
        speculative = str(repair.get("speculative", "suggest"))
        if speculative not in SPECULATIVE_MODES:
            raise ConfigError("repair.speculative", f"must be one of {SPECULATIVE_MODES}")
        return cls(
            enabled=bool(repair.get("enabled", True)),
            budget=max(0, int(repair.get("budget", 3))),
            tier1=bool(repair.get("tier1", True)),
            grounding=bool(repair.get("grounding", True)),
            relaxation=bool(repair.get("relaxation", True)),
            speculative=speculative,
        )


@dataclass(frozen=True, slots=True)
class Attempt:
    """One query the loop ran (or refused to run): what, why, and what came back."""

    query: str
    source: str  # "client", "tier1", "relaxation", or the plugin's name
    code: str | None  # the diagnosis that produced it (DIR.FLIPPED_ON_EMPTY, an LLM's code)
    outcome: str  # ROWS | EMPTY | ERROR | BLOCKED
    rows: int = 0  # records seen when deciding (at most PEEK)
    error: str | None = None
    ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query, "source": self.source, "code": self.code,
            "outcome": self.outcome, "rows": self.rows, "error": self.error,
            "ms": round(self.ms, 2),
        }  # fmt: skip

    def describe(self, number: int) -> str:
        why = f"{self.source}, {self.code}" if self.code else self.source
        got = {ROWS: "rows", EMPTY: "empty result", ERROR: f"error: {self.error}"}.get(
            self.outcome, f"blocked: {self.error}"
        )
        return f"attempt {number} ({why}): {got} [{self.ms:.0f} ms] {self.query}"


@dataclass(frozen=True, slots=True)
class RepairRequest:
    """What a `guard_repair` plugin is asked to fix."""

    query: str  # the failed query (as it ran)
    error: str | None  # the database's error, or None for an empty result
    question: str | None = None  # the client's natural-language question, when sent
    notes: tuple[str, ...] = ()  # literal grounding notes
    attempts: tuple[Attempt, ...] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)
    language: str = "cypher"  # "cypher", "gremlin" or "sql": a plugin declines the others

    @property
    def failure(self) -> str:
        return f"error: {self.error}" if self.error else "empty result"


@dataclass(frozen=True, slots=True)
class Flip:
    """A tier-1 candidate: the query with some arrows (hops) reversed, whether that is safe."""

    text: str
    safe: bool
    edits: tuple[Edit, ...] = ()  # the arrow edits on the query text


Hop = tuple[tuple[Edit, ...], bool]  # one arrow's (hop's) reversing edits, is that safe


def flips(text: str, groups: list[list[Hop]]) -> list[Flip]:
    """Tier 1 of a language: `text` with each group of arrows reversed, in order, without
    duplicates; a group is safe when each of its flips is."""
    out: list[Flip] = []
    for group in groups:
        edits = tuple(e for hop, _ in group for e in hop)
        flipped = apply_edits(text, list(edits))
        if group and all(f.text != flipped for f in out):
            out.append(Flip(flipped, all(safe for _, safe in group), edits))
    return out


# experience weights (DESIGN §10) as the loop sees them: a candidate's text -> the weight of
# the schema elements it uses; `WeightsFor` gives one for a (database, language), None without
# weights. Pure: the runner hands a snapshot in, the loop never reads a store.
Weigh = Callable[[str], float]
WeightsFor = Callable[[str, str], Awaitable[Weigh | None]]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A deterministic rewrite a language proposes (tier 1, relaxation, grounding): its text,
    where it came from, its diagnosis, whether the fault is certain (`safe`), the literal fixes
    it applies (`query_guard.repair.grounding.LiteralFix`), and how findings word it — what
    was done (`done`: "relationship directions were reversed") and what is offered
    (`offer`: "reversing relationship directions")."""

    text: str
    source: str
    code: str
    safe: bool
    done: str = ""
    offer: str = ""
    fixes: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class RepairCandidate:
    """A plugin's proposal: the rewritten query and its diagnosis (a §7 code)."""

    query: str
    code: str | None = None
    cause: str | None = None
    source: str = ""


@dataclass
class RepairOutcome:
    """The attempt the client gets: its query, its stream (or error), and what was tried."""

    query: str
    stream: ResultStream | None
    error: BackendError | None
    attempts: list[Attempt]
    findings: list[Finding]
    stop: str = ""  # why the loop ended

    @property
    def repaired(self) -> bool:
        return bool(self.attempts) and self.query != self.attempts[0].query

    def verdict(self, base: Verdict) -> Verdict:
        """`base` (the guard's verdict on the client query) with the repair's findings."""
        if len(self.attempts) <= 1:
            return base
        findings = (*base.findings, *self.findings)
        if not self.repaired:  # the client's own query ran: only the notes are new
            return replace(base, findings=findings)
        return replace(base, action=Action.REWRITE, query=self.query, findings=findings,
                       forward="")  # fmt: skip


class PeekedStream:
    """A `ResultStream` whose first records were already read to judge the result."""

    def __init__(self, stream: ResultStream, head: list[list[Any]]) -> None:
        self.keys = list(stream.keys)
        self._stream = stream
        self._head = head

    async def fetch(self, n: int) -> list[list[Any]]:
        if n < 0:
            out, self._head = self._head, []
            return out + await self._stream.fetch(-1)
        out, self._head = self._head[:n], self._head[n:]
        if len(out) < n:
            out += await self._stream.fetch(n - len(out))
        return out

    async def discard(self) -> None:
        self._head = []
        await self._stream.discard()

    def has_more(self) -> bool:
        return bool(self._head) or self._stream.has_more()

    def summary(self) -> ResultSummary:
        return self._stream.summary()
