"""An asyncio event loop on a daemon thread, for tests that run a server beside a synchronous
client (the neo4j driver): build servers on it, drive them with `call`, `close_loop` last."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any


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
