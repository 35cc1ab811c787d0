"""What a front saw of one result once it was read to its end (`Seen`), for the `on_result`
hook (the experience library, `query_guard.experience`). The runner knows the verdict and the
outcome; only the front that read the rows knows how many there were and what the first held.
Every run is reported once: by the runner itself when there is no result to read (blocked,
failed), else by the front through `Runner.finished` when it has read it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from query_guard.run.request import Outcome, QueryRequest


@dataclass(frozen=True)
class Seen:
    request: QueryRequest
    outcome: Outcome
    rows: int = 0  # records the client got
    first_row: Sequence[Any] | None = None  # None: not decoded (a relayed Bolt record)
    cut: bool = False  # more rows existed than the limits let through
    read_error: bool = False  # the result failed while it was read


OnResult = Callable[[Seen], None]
