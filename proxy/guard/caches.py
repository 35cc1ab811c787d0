"""Caches bounded by approximate bytes, not only by entries (`[limits] cache_bytes`): the
guard's verdicts and the repair loop's parses. A parse holds ~42x its text (AST, tokens,
scopes), so 30 half-megabyte queries once kept 760 MB alive in a 1,024-entry cache."""

from __future__ import annotations

import sys
from typing import Any

from cachetools import LRUCache

from query_guard.model import Verdict

PARSE_ENTRIES = 1024  # parses cached at most
PARSE_COST = 50  # bytes of a parse per character of its text (measured: ~42)


def verdict_cache(entries: int, max_bytes: int) -> LRUCache[tuple[str, str], Verdict] | None:
    """An LRU of at most `entries` verdicts and about `max_bytes` bytes (0: that bound is
    off; `entries` 0: no cache). Each entry costs at least `max_bytes / entries`."""
    if entries <= 0:
        return None
    if max_bytes <= 0:
        return LRUCache(maxsize=entries)
    floor = max(1, max_bytes // entries)

    def cost(verdict: Verdict) -> int:
        return max(floor, verdict_bytes(verdict))

    return LRUCache(maxsize=max_bytes, getsizeof=cost)


def verdict_bytes(verdict: Verdict) -> int:
    """Approximate memory held by a cached verdict and its key (the query text)."""
    texts = sys.getsizeof(verdict.query) + sys.getsizeof(verdict.original or "")
    return 2 * texts + 400 * (1 + len(verdict.findings))


def parse_cache(max_bytes: int) -> LRUCache[str, Any]:
    """An LRU of parsed queries (or None for a text that does not parse), at most
    `PARSE_ENTRIES` of them and about `max_bytes` bytes (0: 50 MB)."""
    budget = max_bytes or PARSE_ENTRIES * PARSE_COST * 1024
    floor = budget // PARSE_ENTRIES

    def cost(parsed: Any) -> int:
        text = getattr(parsed, "text", "") if parsed is not None else ""
        return max(floor, PARSE_COST * len(text) + 1024)

    return LRUCache(maxsize=budget, getsizeof=cost)
