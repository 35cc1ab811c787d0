"""Gremlin similarity walks, SEGRA's P1 `SIM.WINDOW` (DESIGN §5): when a similarity step is
later followed by `in(Φ(e))` (the walk returns to a case), `has(<window_property>, …)` must
follow that `in` step, before the next move — the window applies to the destination case,
not the anchor.

*Fixed*: a window filter found on the anchor (before the similarity step) is moved there
verbatim; otherwise `.has('<window_property>', P.between(lo, hi))` from `window` is inserted.
Reported only when neither exists. Vacuous when the walk never returns to a case.

Driven by `[gremlin.similarity]`; how walks are read (filters inside `where`/`local`, steps
followed out of `local`/`map`) and the severity rule (fixed: warning; not fixable: error, as
SEGRA's verifier rejects the plan) are those of `query_guard.gremlin.walks`.
"""

from __future__ import annotations

from query_guard.api import Edit, Finding, GuardContext, hookimpl
from query_guard.api.gremlin import (
    MOVES,
    GremlinQuery,
    SimilaritySettings,
    Step,
    String,
    finding,
    gremlin_settings,
    insert_after,
    inside,
    quote,
    similarity_steps,
    string_args,
)


@hookimpl
def guard_gremlin(traversal: GremlinQuery, ctx: GuardContext) -> list[Finding]:
    sim = gremlin_settings(ctx.gremlin).similarity
    if sim is None:
        return []
    findings: list[Finding] = []
    seen: dict[int, set[int]] = {}  # per chain: the returning in() steps already judged
    for s in similarity_steps(traversal, sim):
        returns = seen.setdefault(id(s.chain), set())
        findings += _window(traversal, s.chain + s.cont, s.i, s.labels, sim, returns)
    return findings


def _window(
    q: GremlinQuery,
    chain: list[Step],
    i: int,
    labels: list[str],
    sim: SimilaritySettings,
    seen: set[int],
) -> list[Finding]:
    prop = sim.window_property
    phis = {p for e in labels if (p := sim.content_edge(e)) is not None}
    if not prop or not phis:
        return []
    back = next(
        (j for j in range(i + 1, len(chain))
         if chain[j].name == "in" and phis & set(string_args(chain[j]) or [])),
        None,
    )  # fmt: skip
    if back is None or back in seen:
        return []
    seen.add(back)
    for later in chain[back + 1 :]:
        if later.name in MOVES:
            break
        if _window_filter(later, prop):
            return []
    returning = chain[back]
    anchor = next((k for k in range(1, i) if _window_filter(chain[k], prop)), None)
    fix: tuple[Edit, ...] | None = None
    note = ""
    if anchor is not None:
        moved = chain[anchor]
        fix = (
            Edit(chain[anchor - 1].span[1], moved.span[1], ""),
            insert_after(returning, "." + q.source(moved)),
        )
        note = "; the window on the anchor was moved there"
    elif (predicate := sim.window_predicate()) is not None:
        fix = (insert_after(returning, f".has({quote(prop)}, {predicate})"),)
    return [
        finding(
            "SIM.WINDOW",
            f"the time window has('{prop}', …) must follow "
            f"{returning.name}('{'/'.join(sorted(phis))}') (the destination case, "
            f"not the anchor){note}",
            returning,
            fix,
        )
    ]


def _window_filter(step: Step, prop: str) -> bool:
    if any(_window_filter(inner, prop) for inner in inside(step)):
        return True
    if step.name != "has" or len(step.args) not in (2, 3):
        return False
    key = step.args[-2]
    return isinstance(key, String) and key.value == prop
