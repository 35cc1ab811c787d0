"""Gremlin similarity walks, SEGRA's P3 `SIM.BRACKET` (DESIGN §5): every similarity step is
preceded, earlier in the traversal, by `out(Φ(e))` (or `outE(Φ(e))`) for its own label
(`similarReason` needs `out('hasReason')`). Not required once a `hasLabel` has put the walk on
non-case vertices explicitly.

*Fixed* only when the similarity step comes straight after the anchor (`g.V(id)…` with nothing
but filters before it): `out('<Φ(e)>').` is inserted before it. Otherwise reported; a
similarity step bracketed by another label's within-case edge (`out('exhibits')` before
`bothE('similarReason')`) is not fixable and blocks.

Driven by `[gremlin.similarity]`; how walks are read (filters inside `where`/`local`, steps
followed out of `local`/`map`) and the severity rule (fixed: warning; not fixable: error, as
SEGRA's verifier rejects the plan) are those of `query_guard.gremlin.walks`.
"""

from __future__ import annotations

from query_guard.api import Finding, GuardContext, hookimpl
from query_guard.api.gremlin import (
    MOVES,
    GremlinQuery,
    SimilaritySettings,
    Step,
    finding,
    gremlin_settings,
    insert_before,
    quote,
    similarity_steps,
    string_args,
)


@hookimpl
def guard_gremlin(traversal: GremlinQuery, ctx: GuardContext) -> list[Finding]:
    sim = gremlin_settings(ctx.gremlin).similarity
    if sim is None:
        return []
    return [f for s in similarity_steps(traversal, sim)
            for f in _bracket(s.chain, s.i, s.prior, s.labels, sim, s.anchored)]  # fmt: skip


def _bracket(
    chain: list[Step],
    i: int,
    prior: list[Step],
    labels: list[str],
    sim: SimilaritySettings,
    anchored: bool,
) -> list[Finding]:
    before = prior + chain[:i]
    if any(_names_other_label(s, sim.case_label) for s in before):
        return []
    phis = {p for e in labels if (p := sim.content_edge(e)) is not None}
    missing = sorted(
        p for p in phis
        if not any(s.name in ("out", "outE") and p in (string_args(s) or []) for s in before)
    )  # fmt: skip
    if not missing:
        return []
    step = chain[i]
    fix = None
    at_anchor = anchored and chain[0].name == "V" and all(s.name not in MOVES for s in chain[1:i])
    if at_anchor and len(phis) == 1:
        fix = (insert_before(step, f"out({quote(missing[0])})."),)
    others = sorted(
        {p for s in before if s.name in ("out", "outE") for p in (string_args(s) or [])}
        & {phi for _, phi in sim.edges}
    )
    where = (
        f"out('{others[0]}') reaches another kind of content vertex, which has no "
        f"{'/'.join(sorted(set(labels) & sim.labels))} edges"
        if others
        else "it starts from a case, where no similarity edges are"
    )
    return [
        finding(
            "SIM.BRACKET",
            f"similarity step {step.name}() is not preceded by out('{missing[0]}'): {where}",
            step,
            fix,
        )
    ]


def _names_other_label(step: Step, case_label: str) -> bool:
    if step.name == "hasLabel":
        names = string_args(step)
        return bool(names) and case_label not in (names or [])
    return False
