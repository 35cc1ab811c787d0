"""The guard's vocabulary: findings with span edits, and the verdict on a query (DESIGN §2)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    ERROR = "error"  # blocks the query
    WARNING = "warning"
    INFO = "info"


class Action(StrEnum):
    ALLOW = "allow"  # unchanged
    REWRITE = "rewrite"  # edits applied
    BLOCK = "block"  # nothing is sent to the database


Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace text[start:end] with `replacement` (offsets into the text the rule saw)."""

    start: int
    end: int
    replacement: str

    def overlaps(self, other: Edit) -> bool:
        if self.start == self.end == other.start == other.end:
            return True  # two insertions at one point: order would be ambiguous
        return self.start < other.end and other.start < self.end


@dataclass(frozen=True, slots=True)
class Finding:
    """One decision of one rule. `span` are character offsets in the query text.

    `final` is the rule's promise about its fix: a token-level edit that always re-parses and
    cannot enable or disable another rule's fix (an arrow flip, an appended LIMIT). When every
    fix of a round is final, the pipeline applies them without another parse-and-check round.
    """

    code: str
    severity: Severity
    message: str
    span: Span
    fix: tuple[Edit, ...] | None = None
    hint: str | None = None
    rule: str = ""
    final: bool = False

    def with_span(self, span: Span, rule: str | None = None) -> Finding:
        rule = self.rule if rule is None else rule
        if type(self) is not Finding:  # a subclass may have more fields
            return replace(self, span=span, rule=rule)
        return Finding(self.code, self.severity, self.message, span, self.fix, self.hint, rule,
                       self.final)  # fmt: skip

    def without_fix(self) -> Finding:
        return replace(self, fix=None)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": str(self.severity),
            "message": self.message,
            "start": self.span[0],
            "end": self.span[1],
        }
        if self.hint is not None:
            out["hint"] = self.hint
        if self.rule:
            out["rule"] = self.rule
        out["fixed"] = bool(self.fix)
        return out


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the guard decided: `query` is the text to run (the original when blocked)."""

    action: Action
    query: str
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    original: str = ""
    # The text that leaves the proxy: the guard's own canonical re-emission of the judged
    # query (DESIGN §1). Empty when the language has no emitter yet: then `query` is sent.
    forward: str = ""
    explain: bool = False  # an EXPLAIN: answered by the proxy, never executed
    query_type: str = ""  # Neo4j's summary type of the judged statement: r, w, rw or s

    @property
    def to_run(self) -> str:
        """What the backend executes for this verdict."""
        return self.forward or self.query

    @property
    def blocked(self) -> bool:
        return self.action is Action.BLOCK

    @property
    def codes(self) -> list[str]:
        return [f.code for f in self.findings]

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": str(self.action),
            "query": self.query,
            "findings": [f.to_dict() for f in self.findings],
        }


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits (any order) to `text`."""
    out: list[str] = []
    pos = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        out.append(text[pos : e.start])
        out.append(e.replacement)
        pos = e.end
    out.append(text[pos:])
    return "".join(out)
