"""When a run becomes an example (DESIGN §10, "verified run"): the client sent the question;
the guard let it through; the database answered without error; the answer is not empty
(DESIGN §6: no rows, or one row of blank aggregates); no speculative repair was applied
without the client's opt-in; and no warning or error is left in the final verdict.

Two readings the words leave open, decided here: a warning is *left* when the guard did not
fix it (a reversed arrow the guard turned round is fixed: the judged query is the corrected
one), and the notes the repair loop adds about a repair it applied (`ENT.LITERAL`,
`DIR.FLIPPED_ON_EMPTY`) are no rule warnings — while `REPAIR.SUGGESTED` (a candidate not
applied) is one. A question sent is the opt-in to speculative repairs, so a run with a
question never carries one applied without it. A write, an EXPLAIN and a result the client
did not read whole are never examples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from query_guard.model import Severity
from query_guard.repair.model import is_blank
from query_guard.run.seen import Seen

WRITES = ("w", "rw", "s")


def unverified(seen: Seen) -> str | None:
    """Why `seen` is no verified run (None: it is one)."""
    req, outcome = seen.request, seen.outcome
    verdict = outcome.verdict
    if not (req.question and req.question.strip()):
        return "no question"
    if outcome.guard_failed or verdict.blocked:
        return "blocked"
    if outcome.error is not None or seen.read_error:
        return "backend error"
    if verdict.explain or verdict.query_type in WRITES:
        return "not a read"
    if seen.cut:
        return "result not read whole"
    if looks_empty(seen.rows, seen.first_row):
        return "empty result"
    left = left_warnings(verdict)
    if left:
        return "warning left: " + ", ".join(left)
    return None


def looks_empty(rows: int, first_row: Sequence[Any] | None) -> bool:
    """DESIGN §6 from what a front saw: no rows, or one row whose values are all blank (0,
    null, an empty list); a single row the front did not decode counts as empty (unknown)."""
    if rows == 0:
        return True
    if rows > 1:
        return False
    return first_row is None or all(is_blank(v) for v in first_row)


def left_warnings(verdict: Any) -> list[str]:
    """The codes of the warnings and errors `verdict` leaves unfixed."""
    return [f.code for f in verdict.findings if _left(f)]


def _left(finding: Any) -> bool:
    if finding.severity is Severity.INFO:
        return False
    if finding.code == "REPAIR.SUGGESTED":
        return True
    if str(finding.rule).startswith("repair"):
        return False  # a note about a repair that was applied
    return not finding.fix
