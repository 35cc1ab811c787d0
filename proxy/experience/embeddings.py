"""Optional semantic ranking (`[experience.embeddings]`, off by default): questions as vectors
from an OpenAI-compatible embeddings endpoint (`POST {base_url}/embeddings`, `{"model",
"input": [...]}` → `{"data": [{"index", "embedding"}]}`), compared by cosine similarity.

The library asks for the question's vector and, in the same request, for those of the
lexical candidates that have none yet (stored with the example afterwards), so each context
request costs at most one call. A failing endpoint leaves the lexical ranking as it is."""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import aiohttp

log = logging.getLogger("query_guard.experience")
SEMANTIC_SHARE = 0.5  # relevance = (1 - share) · lexical (scaled to 1) + share · cosine


class Embeddings:
    """One configured endpoint."""

    def __init__(self, base_url: str, model: str, api_key: str = "", timeout: float = 10.0
                 ) -> None:  # fmt: skip
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout = aiohttp.ClientTimeout(total=timeout)

    @classmethod
    def from_config(cls, table: Mapping[str, Any] | None) -> Embeddings | None:
        """The endpoint `[experience.embeddings]` names; None when it names none."""
        if not table or not table.get("base_url"):
            return None
        key = os.environ.get(str(table.get("api_key_env") or ""), "")
        return cls(str(table["base_url"]), str(table["model"]), key,
                   float(table["timeout_seconds"]))  # fmt: skip

    async def vectors(self, texts: Sequence[str]) -> list[list[float]] | None:
        """One vector per text, in order (None when the endpoint failed)."""
        body = {"model": self.model, "input": list(texts)}
        try:
            async with (
                aiohttp.ClientSession(timeout=self.timeout) as session,
                session.post(self.url, json=body, headers=self.headers) as response,
            ):
                response.raise_for_status()
                answer = await response.json()
            data = sorted(answer["data"], key=lambda d: int(d["index"]))
            out = [[float(x) for x in d["embedding"]] for d in data]
        except (aiohttp.ClientError, TimeoutError, ValueError, KeyError, TypeError) as exc:
            log.warning("experience: the embeddings endpoint failed: %r", exc)
            return None
        return out if len(out) == len(texts) else None


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def blend(rows: list[dict[str, Any]], question: list[float]) -> None:
    """Each row's `relevance` becomes lexical (scaled by the best) blended with the cosine of
    its `vector` and the question's (rows without a vector keep the lexical part only)."""
    best = max((float(r["relevance"]) for r in rows), default=1.0) or 1.0
    for row in rows:
        lexical = float(row["relevance"]) / best
        vector = row.get("vector")
        semantic = max(0.0, cosine(vector, question)) if vector else 0.0
        row["relevance"] = (1 - SEMANTIC_SHARE) * lexical + SEMANTIC_SHARE * semantic
