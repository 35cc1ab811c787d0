"""Where the workers of one `serve` meet. With `[server] workers = N` a request reaches
whichever worker the kernel picks, so what an operator reads — the console's recent queries
(`query_guard.console.peers`), the Prometheus metrics (`query_guard.run.metrics`) — must come
from all of them, and a write through one worker must make every worker's schema catalog
stale (`query_guard.schema.source`). Each worker answers named questions on a Unix socket in a
directory the supervisor made for this (mode 0700, removed when it stops); a worker that needs
the others' answers asks every other socket there.

A question is its name and a line feed; the answer is the bytes the worker's provider returns,
then the connection closes. Nothing is sent per read: the cost is paid when an operator's page
is drawn or scraped, and by a write (one round trip per other worker). A worker that does not
answer within `TIMEOUT` is left out of that answer (a reload replaces workers one by one); the
socket of a worker that is gone is removed. A worker listens from the start of its start-up,
and a question it cannot answer yet is answered once it can (`provide`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from pathlib import Path

TIMEOUT = 1.0  # seconds a worker gets to answer
SUFFIX = ".sock"
MAX_NAME = 64  # bytes of a question


class Peers:
    """This worker's socket in `directory` (named after its pid) and the way to the others'.
    `provide(name, answer)` before `start()`; `ask(name)` returns the other workers' answers."""

    def __init__(self, directory: str | Path, name: str | None = None) -> None:
        self.directory = Path(directory)
        self.name = name or str(os.getpid())
        self.path = self.directory / f"{self.name}{SUFFIX}"
        self._providers: dict[str, Callable[[], bytes]] = {}
        self._missed: set[str] = set()  # asked before this worker could answer
        self._server: asyncio.AbstractServer | None = None

    def provide(self, question: str, answer: Callable[[], bytes]) -> None:
        """Answer `question` with `answer()`; one asked while this worker was still starting
        is answered once now (news such as a stale schema is not lost)."""
        self._providers[question] = answer
        if question in self._missed:
            self._missed.discard(question)
            answer()

    async def start(self) -> None:
        if self._server is not None:
            return
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

    async def ask(self, question: str) -> list[tuple[str, bytes]]:
        """(worker name, answer) of every other worker that answers `question`."""
        others = [p for p in sorted(self.directory.glob(f"*{SUFFIX}")) if p != self.path]
        answers = await asyncio.gather(*(self._ask(p, question) for p in others))
        return [(p.stem, a) for p, a in zip(others, answers, strict=True) if a is not None]

    async def _ask(self, path: Path, question: str) -> bytes | None:
        try:
            async with asyncio.timeout(TIMEOUT):
                reader, writer = await asyncio.open_unix_connection(str(path))
                try:
                    writer.write(question.encode() + b"\n")
                    await writer.drain()
                    return await reader.read()  # the worker closes after its answer
                finally:
                    writer.close()
        except ConnectionRefusedError:  # a worker that has stopped, or one starting to listen
            if path.stem.isdigit() and not Path(f"/proc/{path.stem}").exists():
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        except (OSError, TimeoutError):
            pass  # busy: this answer goes without it
        return None

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(TIMEOUT):
                line = await reader.readline()
            question = line[:MAX_NAME].strip().decode(errors="replace")
            provider = self._providers.get(question)
            if provider is not None:
                writer.write(provider())
                await writer.drain()
            elif question:
                self._missed.add(question)
        except (OSError, TimeoutError):
            pass
        finally:
            writer.close()
