"""What every Bolt connection of one server shares (`ServerContext`) and the way a connection
writes to its client (`Output`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from query_guard.backend import Backend, BackendError
from query_guard.model import Verdict
from query_guard.run.cypher import CypherExecution
from query_guard.run.guard_pool import GuardPool
from query_guard.run.limits import Limits
from query_guard.run.runner import Route, Runner

if TYPE_CHECKING:
    from query_guard.repair.repairer import Repairer

log = logging.getLogger("query_guard.bolt")

Guard = Callable[[str, dict[str, Any]], Verdict]
OnQuery = Callable[[dict[str, Any]], None]
# May return an awaitable: a pass-through backend checks the credentials upstream at LOGON.
Authenticate = Callable[[dict[str, Any]], bool | Awaitable[bool]]
# What Neo4j answers for a database it does not have; the message names our finding code.
DATABASE_NOT_FOUND = "Neo.ClientError.Database.DatabaseNotFound"
DATABASE_CODE = "SEC.DATABASE"


class Output(Protocol):
    closed: bool  # the client went away: stop producing

    def write(self, data: bytes | bytearray) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


@dataclass
class ServerContext:
    """What every connection of one server shares (immutable once serving)."""

    guard: Guard
    backend: Backend
    # the ROUTE/READ/WRITE addresses: this proxy, a load balancer in front, or all the peers
    advertised_address: tuple[str, ...] = ("localhost:7687",)
    on_query: OnQuery | None = None
    authenticate: Authenticate | None = None
    server_agent: str = "Neo4j/5.26.0"
    home_database: str = "neo4j"
    routing_ttl: int = 300
    fetch_batch: int = 1000
    # DESIGN §6: reads that fail or come back empty are retried by the repair loop
    repairer: Repairer | None = None
    # ask Bolt >= 5.4 clients for TELEMETRY messages (one per query: they go nowhere)
    telemetry: bool = True
    # the names a client may give as its database (BEGIN / RUN / ROUTE `db`); None: any
    databases: frozenset[str] | None = None
    # [limits]: parameters, messages, results, connections, the guard's time budget
    limits: Limits = field(default_factory=Limits)
    # where the guard runs, off the event loop (None: inline, for tests of the state machine)
    guard_pool: GuardPool | None = None
    # the request path (`query_guard.run`); None: one built from the fields above
    runner: Runner = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.runner is None:
            route = Route(self.guard, CypherExecution(self.backend, self.repairer))
            self.runner = Runner({"cypher": route}, limits=self.limits, pool=self.guard_pool,
                                 on_query=self.on_query)  # fmt: skip

    def database(self, extra: dict[str, Any]) -> str | None:
        """The backend database a request's `db` names: None for the home database (whatever
        the backend's default). Raises `DatabaseNotServed` outside `[backend] databases`."""
        db = extra.get("db")
        if db is not None and not isinstance(db, str):
            raise DatabaseNotServed(repr(db), self.databases or frozenset())
        if not db or db == self.home_database:
            return None
        self.check_served(db)
        return db

    def check_served(self, db: str) -> None:
        allowed = self.databases
        if allowed is not None and db not in allowed and db != self.home_database:
            raise DatabaseNotServed(db, allowed)


class DatabaseNotServed(BackendError):
    """The client named a database this proxy does not serve (`[backend] databases`)."""

    def __init__(self, name: str, allowed: frozenset[str]) -> None:
        served = ", ".join(repr(n) for n in sorted(allowed) if n) or "none"
        super().__init__(
            f"{DATABASE_CODE}: database {name!r} is not served by this proxy; use the default "
            f"database (no name) or one of: {served}",
            DATABASE_NOT_FOUND,
        )
