"""The attack suite through the pure guard (what `query-guard check` decides), defaults with
`read_only` on: every attack in tests/data/security is blocked with one of the codes its line
accepts (a Gremlin escape or comment trick may instead be allowed as the guard's canonical
rendering, which leaves nothing to misread), and every ordinary read of the movie graph passes
(at most a LIMIT, an arrow or a fence fixed). The Cypher attacks and the reads also go through
`serve` in test_security_serve.py."""

from __future__ import annotations

import pytest

from query_guard.build import build_guard
from query_guard.guard.pipeline import Guard
from query_guard.model import Severity, Verdict
from tests.security_corpus import CYPHER_ATTACKS, GREMLIN_ATTACKS, ORDINARY_READS, Case

# The fixes an ordinary read may receive and still count as allowed.
HARMLESS_FIXES = {"LIM.INJECTED", "LIM.CAPPED", "DIR.REVERSED", "DIR.RECIPROCAL", "SYN.FENCE"}


@pytest.fixture(scope="module")
def guard() -> Guard:
    g = build_guard()
    assert g.ctx.settings.read_only, "the suite judges the default, read-only guard"
    return g


def _described(verdict: Verdict) -> str:
    return ", ".join(f"{f.code}({f.severity})" for f in verdict.findings) or "no findings"


def assert_blocked(verdict: Verdict, case: Case) -> None:
    reasons = {f.code for f in verdict.findings if f.severity is Severity.ERROR}
    assert verdict.blocked, f"{case.id} ({case.cls}) was {verdict.action}: {_described(verdict)}"
    assert reasons & set(case.codes), (
        f"{case.id} ({case.cls}) was blocked for {sorted(reasons)}, "
        f"not for one of {list(case.codes)}"
    )


@pytest.mark.parametrize("case", CYPHER_ATTACKS, ids=lambda c: c.id)
def test_cypher_attack_is_blocked(guard: Guard, case: Case) -> None:
    assert_blocked(guard.check(case.query, "cypher"), case)


# What another reader could tokenise differently: escapes and line ends other than \n.
_MISREADABLE = ("\\u", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c")


@pytest.mark.parametrize("case", GREMLIN_ATTACKS, ids=lambda c: c.id)
def test_gremlin_attack_is_blocked(guard: Guard, case: Case) -> None:
    verdict = guard.check(case.query, "gremlin")
    if case.expect == "neutralise" and not verdict.blocked:
        # Allowed only as the guard's own rendering: no escape or odd line end left for a
        # Groovy or Java reader to decode, and judging that rendering again changes nothing.
        forward = verdict.forward
        assert forward, f"{case.id} allowed, and the client's own text would be sent"
        left = [m for m in _MISREADABLE if m in forward]
        assert not left, f"{case.id}: the forwarded text still holds {left}: {forward!r}"
        again = guard.check(forward, "gremlin")
        assert not again.blocked and again.to_run == forward, f"{case.id}: {forward!r} not final"
        return
    assert_blocked(verdict, case)


@pytest.mark.parametrize("case", ORDINARY_READS, ids=lambda c: c.id)
def test_ordinary_read_is_allowed(guard: Guard, case: Case) -> None:
    verdict = guard.check(case.query, "cypher")
    assert not verdict.blocked, f"{case.id} blocked: {_described(verdict)}"
    fixes = {f.code for f in verdict.findings if f.fix}
    assert fixes <= HARMLESS_FIXES, f"{case.id} rewritten by {sorted(fixes - HARMLESS_FIXES)}"


def test_the_corpus_covers_every_class() -> None:
    """The acceptance floor: ≥ 150 attacks across the classes, ≥ 50 ordinary reads, ids unique."""
    attacks = CYPHER_ATTACKS + GREMLIN_ATTACKS
    assert len(attacks) >= 150 and len(ORDINARY_READS) >= 50
    ids = [c.id for c in attacks + ORDINARY_READS]
    assert len(ids) == len(set(ids))
    assert all(c.expect in ("block", "neutralise") and c.codes for c in attacks)
    assert all(c.expect == "allow" for c in ORDINARY_READS)
    classes = {c.cls for c in attacks}
    assert {"lexical", "show_admin", "functions", "hidden_write", "file_read", "database",
            "resources", "gremlin_mutation", "gremlin_script", "gremlin_gstring",
            "gremlin_escape", "gremlin_runtime"} <= classes  # fmt: skip
