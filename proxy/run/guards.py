"""A guard for one language in the shape the runner calls (`(text, parameters) -> Verdict`,
with `cached` answering a repeated query without a trip to the pool)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from query_guard.guard.pipeline import Guard
from query_guard.model import Finding, Verdict

Note = Callable[[], Finding | None]


class LanguageGuard:
    """`guard` for `language`, with `note` (e.g. `SCH.NO_SCHEMA` while no schema is loaded)
    added to every verdict it lets through."""

    def __init__(self, guard: Guard, language: str, note: Note | None = None) -> None:
        self.guard, self.language, self.note = guard, language, note

    def __call__(self, query: str, parameters: dict[str, Any]) -> Verdict:
        return self._noted(self.guard.check(query, self.language))

    def cached(self, query: str, parameters: dict[str, Any]) -> Verdict | None:
        verdict = self.guard.cached(query, self.language)
        return None if verdict is None else self._noted(verdict)

    def _noted(self, verdict: Verdict) -> Verdict:
        extra = self.note() if self.note is not None else None
        if extra is None or verdict.blocked:
            return verdict
        return dataclasses.replace(verdict, findings=(*verdict.findings, extra))
