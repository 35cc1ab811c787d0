"""An asyncio event loop on a daemon thread, for tests that run a server beside a synchronous
client (the neo4j driver): build servers on it, drive them with `call`, `close_loop` last;
and `BoltProxy`, the one Bolt front the Bolt tests drive that way."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from query_guard.guard.pipeline import Guard
    from query_guard.model import Verdict
    from query_guard.repair.repairer import Repairer


class BackgroundLoop:
    timeout = 30.0  # seconds one `call` may take

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def call(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(self.timeout)

    def close_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


class BoltProxy(BackgroundLoop):
    """A guarded `BoltFrontend` over `backend` on its own loop, for tests that drive it with the
    neo4j driver: `uri` to connect, `events` the audit events it emitted, `stop()` last.

    `guard` checks every query (a `Guard`, or the frontend's `(query, parameters) -> Verdict`
    function); `repairer` (optional) is the repair loop; `start_backend` starts a backend that
    needs it (the relay); other keywords go to the frontend (`limits`, `versions`, …)."""

    timeout = 60.0  # starting the relay connects to the upstream server

    def __init__(
        self,
        guard: Guard | Callable[[str, dict[str, Any]], Verdict],
        backend: Any,
        *,
        repairer: Repairer | None = None,
        start_backend: bool = False,
        **frontend: Any,
    ) -> None:
        from query_guard.frontends.bolt.server import BoltFrontend

        super().__init__()
        self.backend = backend
        self.events: list[dict[str, Any]] = []
        if start_backend:
            self.call(backend.start())
        check = guard if callable(guard) else (lambda query, _params: guard.check(query))
        self.frontend = BoltFrontend(
            "127.0.0.1", 0, check, backend, on_query=self.events.append, repairer=repairer,
            **frontend,
        )  # fmt: skip
        self.call(self.frontend.start())
        self.port = self.frontend.port
        self.uri = self.url()

    def url(self, scheme: str = "bolt") -> str:
        """The front's address for the driver (`bolt`, `neo4j` for routing, `bolt+s`, …)."""
        return f"{scheme}://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.call(self.frontend.close())
        self.call(self.backend.close())
        self.close_loop()
