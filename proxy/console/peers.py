"""The console across workers. With `[server] workers = N` each worker keeps its own
`QueryFeed`, and a browser's request reaches whichever worker the kernel picks. So each worker
answers the question `console` with its feed's state (`query_guard.run.peers`), and the worker
that draws a page asks the others for theirs and merges them (`FeedState.merge`): every
worker's `/ui` shows the queries of all. The page's poll (`/ui/state.json`) asks only for the
sequence numbers (`console-seq`), a few bytes, not every worker's recent queries."""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict
from typing import Any

from query_guard.console.feed import Attempt, Entry, FeedState, QueryFeed
from query_guard.run.peers import Peers

QUESTION = "console"
SEQ_QUESTION = "console-seq"


def provide(peers: Peers, feed: QueryFeed) -> None:
    """Answer the other workers' console questions from `feed`."""
    peers.provide(QUESTION, lambda: encode(feed.state()))
    peers.provide(SEQ_QUESTION, lambda: str(feed.seq).encode())


async def all_seqs(peers: Peers, feed: QueryFeed) -> int:
    """The sum of every answering worker's sequence number (`FeedState.merge`'s `seq`)."""
    total = feed.seq
    for _worker, data in await peers.ask(SEQ_QUESTION):
        with contextlib.suppress(ValueError):  # not a number
            total += int(data)
    return total


async def all_states(peers: Peers, feed: QueryFeed) -> FeedState:
    """The merged state of this worker's feed and every other worker's that answers."""
    answers = await peers.ask(QUESTION)
    states = [feed.state()]
    for _worker, data in answers:
        with contextlib.suppress(ValueError, TypeError, KeyError):  # not a feed's state
            states.append(decode(data))
    return FeedState.merge(states)


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
