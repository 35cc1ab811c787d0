"""Literal grounding (DESIGN §6), once for every language: when a query returns nothing, the
string literals it filters on are checked against what the database stores, and a note says
what is stored instead (`ENT.LITERAL`).

The language finds the *bindings* (a property or column the query requires to equal a
string; `query_guard.repair.cypher_literals`, `query_guard.repair.sql_literals`) and runs two
bounded probes per binding (`Strategy.stored`): does the exact value exist? if not, which
stored values contain the literal's longest token, case-insensitively? At most
`MAX_BINDINGS` bindings; the note names up to `MAX_SUGGESTIONS` stored values, most similar
first: "'X' is not stored on Label.prop; stored: 'X Y Z' — copy it exactly", or "no similar
value — reconsider the property or label".

When the second probe saw every stored value holding the token (fewer than
`SIMILAR_SAMPLE`), it also yields a *fix* (`LiteralFix`): exactly one stored value equal to
the literal but for case is a **safe** fix ('keanu reeves' -> 'Keanu Reeves'); otherwise
exactly one stored value containing the literal is a **speculative** one ('Matrix' -> 'The
Matrix'). A literal compared case-insensitively already (`toLower(x.p) = 'v'`) gets no fix.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from query_guard.backend import BackendError
from query_guard.model import Finding, Severity
from query_guard.repair.model import Words

log = logging.getLogger(__name__)

MAX_BINDINGS = 3
MAX_SUGGESTIONS = 3
SIMILAR_SAMPLE = 50  # stored values read per probe; more: no fix, only the note
_TOKEN = re.compile(r"\w+", re.UNICODE)


# A binding (`cypher_literals.Binding`, `sql_literals.SqlBinding`) has its `value`, `span` (of
# the literal in the query text), `where` (`Movie.title`), `case_insensitive`, and
# `show(label, quoted)` (one stored value in a note). `Stored` runs its probes: the (label,
# value) of the stored values holding its token, or None when the exact value is stored.
Stored = Callable[[Any, str], Awaitable[list[tuple[str, Any]] | None]]


@dataclass(frozen=True, slots=True)
class LiteralFix:
    """A binding's literal replaced by the one stored value it stands for."""

    binding: Any
    value: str
    safe: bool  # equal but for case (safe) or merely containing the literal (speculative)

    @property
    def how(self) -> str:
        return "equal but for case" if self.safe else "the only stored value containing it"


@dataclass(frozen=True, slots=True)
class Grounded:
    """What the probes found for one binding whose value is not stored."""

    binding: Any
    stored: list[tuple[str, Any]]  # the closest stored values, best first
    fix: LiteralFix | None
    note: Finding


def longest_token(value: str) -> str:
    tokens = _TOKEN.findall(value)
    return max(tokens, key=len) if tokens else ""


async def ground(bindings: Sequence[Any], stored: Stored, words: Words) -> list[Grounded]:
    """The probes' findings for each binding whose value is not stored."""
    out: list[Grounded] = []
    for b in bindings:
        try:
            found = await stored(b, longest_token(b.value))
        except BackendError as exc:  # a probe the database refuses says nothing
            log.debug("grounding probe failed: %s", exc)
            continue
        if found is None:
            continue
        fix = literal_fix(b, found) if len(found) < SIMILAR_SAMPLE else None
        best = rank_stored(b.value, found)
        note = Finding(
            "ENT.LITERAL", Severity.WARNING, describe(b, best, words), b.span,
            hint=words.quote(best[0][1]) if best else None, rule="repair.grounding",
        )  # fmt: skip
        out.append(Grounded(b, best, fix, note))
    return out


def literal_fix(b: Any, stored: list[tuple[str, Any]]) -> LiteralFix | None:
    """The fix for a binding, given every stored value that holds its longest token."""
    if b.case_insensitive:  # `toLower(x.p) = 'v'`: a stored value's case would not compare
        return None
    target = b.value.lower()
    values = {v for _, v in stored if isinstance(v, str)}
    equal = [v for v in values if v.lower() == target]
    if len(equal) == 1:
        return LiteralFix(b, equal[0], safe=True)
    containing = [v for v in values if target in v.lower()]
    if not equal and len(containing) == 1:
        return LiteralFix(b, containing[0], safe=False)
    return None


def rank_stored(value: str, stored: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The closest `MAX_SUGGESTIONS` distinct stored values, most similar first."""
    target = value.lower()
    unique: dict[str, tuple[str, Any]] = {}
    for label, v in stored:
        unique.setdefault(f"{label}\x00{v!r}", (label, v))

    def score(item: tuple[str, Any]) -> tuple[float, int, str]:
        text = str(item[1]).lower()
        return (-difflib.SequenceMatcher(None, target, text).ratio(), len(text), text)

    return sorted(unique.values(), key=score)[:MAX_SUGGESTIONS]


def describe(b: Any, stored: list[tuple[str, Any]], words: Words, used: str = "") -> str:
    """DESIGN §6 wording: what is stored instead, or that nothing similar is; `used` says
    which stored value an applied fix wrote in its place."""
    head = f"{words.quote(b.value)} is not stored {words.stored} {b.where}"
    if not stored:
        tail = used or f"reconsider the {words.reconsider}"
        return f"{head}; no similar value — {tail}"
    shown = ", ".join(b.show(label, words.quote(v)) for label, v in stored)
    return f"{head}; stored: {shown} — {used or 'copy it exactly'}"


def fixed(g: Grounded, words: Words, why: str) -> Finding:
    """The finding of an applied fix, in place of its binding's note."""
    assert g.fix is not None
    used = f"used {words.quote(g.fix.value)} ({g.fix.how}){why}"
    return Finding("ENT.LITERAL", Severity.WARNING, describe(g.binding, g.stored, words, used),
                   g.binding.span, hint=words.quote(g.fix.value),
                   rule="repair.grounding")  # fmt: skip


def fix_groups(fixes: Sequence[LiteralFix]) -> list[tuple[tuple[LiteralFix, ...], bool]]:
    """The literal candidates of a language, best first: the safe fixes alone (safe), then
    every fix (speculative, when some are)."""
    safe = tuple(f for f in fixes if f.safe)
    groups = [(safe, True)] if safe else []
    if len(safe) < len(fixes):
        groups.append((tuple(fixes), False))
    return groups
