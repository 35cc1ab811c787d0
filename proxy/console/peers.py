"""The console across workers. With `[server] workers = N` each worker keeps its own
`QueryFeed`, and a browser's request reaches whichever worker the kernel picks. So each worker
answers its feed's state on a Unix socket in a directory the supervisor made for this purpose
(mode 0700, removed when it stops), and the worker that draws a page asks the others for
theirs and merges them (`FeedState.merge`): every worker's `/ui` shows the queries of all.

Nothing is sent per query; the cost is paid when a page or its state is asked for. A worker that
does not answer within `TIMEOUT` is left out of that page (a reload replaces workers one by
one); the socket of a worker that is gone is removed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from query_guard.console.feed import Attempt, Entry, FeedState, QueryFeed

TIMEOUT = 1.0  # seconds a worker gets to answer
SUFFIX = ".sock"


class FeedPeers:
    """This worker's socket in `directory` and the way to the others'."""

    def __init__(self, directory: str | Path, feed: QueryFeed) -> None:
        self.directory = Path(directory)
        self.feed = feed
        self.path = self.directory / f"{os.getpid()}{SUFFIX}"
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a socket left by an earlier process with this pid
        self._server = await asyncio.start_unix_server(self._answer, path=str(self.path))

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    async def state(self) -> FeedState:
        """The merged state of this worker's feed and every other worker's that answers."""
        others = [p for p in self.directory.glob(f"*{SUFFIX}") if p != self.path]
        answers = await asyncio.gather(*(self._ask(p) for p in others))
        return FeedState.merge([self.feed.state(), *(a for a in answers if a is not None)])

    async def _ask(self, path: Path) -> FeedState | None:
        try:
            async with asyncio.timeout(TIMEOUT):
                reader, writer = await asyncio.open_unix_connection(str(path))
                try:
                    data = await reader.read()  # the peer closes after its answer
                finally:
                    writer.close()
            return decode(data)
        except (ConnectionRefusedError, FileNotFoundError):  # a worker that has stopped
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        except (OSError, TimeoutError, ValueError, TypeError, KeyError):
            pass  # busy or answering nonsense: this page goes without it
        return None

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            writer.write(encode(self.feed.state()))
            await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()


def encode(state: FeedState) -> bytes:
    data = asdict(state)
    data["minutes"] = {str(minute): counts for minute, counts in state.minutes.items()}
    return json.dumps(data, separators=(",", ":")).encode()


def decode(data: bytes) -> FeedState:
    raw: dict[str, Any] = json.loads(data)
    entries = tuple(
        Entry(**{**e, "codes": tuple(e["codes"]),
                 "attempts": tuple(Attempt(**a) for a in e["attempts"])})
        for e in raw["entries"]
    )  # fmt: skip
    minutes = {int(m): {str(c): int(n) for c, n in counts.items()}
               for m, counts in raw["minutes"].items()}  # fmt: skip
    return FeedState(int(raw["seq"]), {str(k): int(v) for k, v in raw["verdicts"].items()},
                     entries, minutes, int(raw["size"]), int(raw["recent"]))  # fmt: skip
