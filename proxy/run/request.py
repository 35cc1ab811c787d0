"""What a front hands the runner (`QueryRequest`) and what it gets back (`Outcome`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from query_guard.backend import BackendError, ResultStream, Transaction
from query_guard.model import Verdict

Language = Literal["cypher", "gremlin", "sql"]
LANGUAGES: tuple[Language, ...] = ("cypher", "gremlin", "sql")


@dataclass
class QueryRequest:
    """One query as a front received it, in the front's terms translated to ours."""

    text: str
    front: str  # bolt | http | mcp | gremlin: the audit's and the metrics' label
    language: Language = "cypher"
    parameters: dict[str, Any] = field(default_factory=dict)
    question: str | None = None  # the user's question in words (opts in to speculative repairs)
    database: str | None = None  # None: the backend's home database
    read_access: bool = False  # the client asked for a read (Neo4j's accessMode Read)
    tx: Transaction | None = None  # an open explicit transaction (None: auto-commit)
    client: str = ""  # host:port of the peer
    user: str | None = None  # whose credentials were checked (None: nobody's)
    # front-specific audit fields (Bolt version and connection, Gremlin op and request id…)
    detail: dict[str, Any] = field(default_factory=dict)
    id: str = ""  # the query id the runner gives it (the client's handle for feedback)


@dataclass
class Outcome:
    """The runner's answer: the verdict the query ran under and its result stream, or why
    there is none (`verdict.blocked`, `error`, `guard_failed`). The stream is the backend's
    own (Bolt relays its records undecoded); fronts read it through `query_guard.run.cuts`."""

    verdict: Verdict
    stream: ResultStream | None = None
    error: BackendError | None = None
    ran: str | None = None  # the text the database ran (after guard and repair)
    attempts: list[dict[str, Any]] = field(default_factory=list)  # repair attempts, when > 1
    guard_failed: bool = False  # the guard raised: nothing ran (fail closed)
    backend_ms: int = 0  # until the result was ready to read (Bolt's t_first)

    @property
    def blocked(self) -> bool:
        return self.verdict.blocked
