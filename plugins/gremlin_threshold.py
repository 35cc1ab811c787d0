"""Gremlin similarity walks, SEGRA's P2 `SIM.THRESHOLD` (DESIGN §5): every
`bothE/outE/inE(e)` on a similarity label is followed by a score filter
`has(<score_property>, P.gte(θ))` (or `gt` / `between` / `inside` / an exact value) before the
next vertex step (`otherV/inV/outV/bothV`).

*Fixed* when `threshold` is configured: `.has('<score>', P.gte(θ))` is inserted right after
the edge step. A literal lower bound below θ is reported without a fix. A vertex step
`both/out/in(e)` cannot filter on the score: *fixed* (with θ) to
`bothE(e).has('<score>', P.gte(θ)).otherV()`. A threshold written after the vertex step
(`bothE(e).otherV().has(score, …)`, where it filters the vertex) is moved onto the edge.

Driven by `[gremlin.similarity]`; how walks are read (filters inside `where`/`local`, steps
followed out of `local`/`map`) and the severity rule (fixed: warning; not fixable: error, as
SEGRA's verifier rejects the plan) are those of `query_guard.gremlin.walks`.
"""

from __future__ import annotations

from query_guard.api import Edit, Finding, GuardContext, hookimpl
from query_guard.api.gremlin import (
    LEAVE_EDGE,
    MOVES,
    VERTEX_STEPS,
    GremlinQuery,
    Literal,
    Predicate,
    SimilaritySettings,
    Step,
    String,
    finding,
    gremlin_settings,
    insert_after,
    inside,
    quote,
    similarity_steps,
)

_LOWER_BOUNDS = frozenset({"gte", "gt", "between", "inside", "eq"})


@hookimpl
def guard_gremlin(traversal: GremlinQuery, ctx: GuardContext) -> list[Finding]:
    sim = gremlin_settings(ctx.gremlin).similarity
    if sim is None:
        return []
    return [f for s in similarity_steps(traversal, sim)
            for f in _threshold(traversal, s.chain, s.cont, s.i, s.labels, sim)]  # fmt: skip


def _threshold(
    q: GremlinQuery,
    chain: list[Step],
    cont: list[Step],
    i: int,
    labels: list[str],
    sim: SimilaritySettings,
) -> list[Finding]:
    score = sim.score_property
    if not score:
        return []
    step = chain[i]
    only_sim = set(labels) <= sim.labels
    theta = sim.threshold
    if step.name in VERTEX_STEPS:
        fix = None
        if theta is not None and only_sim:
            args = q.text[step.args[0].span[0] : step.args[-1].span[1]]
            fix = (
                Edit(*step.span, f"bothE({args}).has({quote(score)}, P.gte({theta!r})).otherV()"),
            )
        return [
            finding(
                "SIM.THRESHOLD",
                f"{step.name}() crosses similarity edges without a score threshold on '{score}'",
                step,
                fix,
            )
        ]
    for later in chain[i + 1 :] + cont:
        if later.name in MOVES:
            moved = _threshold_on_vertex(q, chain, i, score)
            if moved is not None:
                return [moved]
            break
        bound = _score_bound(later, score)
        if bound is None:
            continue
        if theta is not None and isinstance(bound, int | float) and bound < theta:
            return [
                finding(
                    "SIM.THRESHOLD",
                    f"score threshold {bound} on '{score}' is below the configured {theta!r}",
                    later,
                    None,
                )
            ]
        return []
    fix = None
    if theta is not None and only_sim:
        fix = (insert_after(step, f".has({quote(score)}, P.gte({theta!r}))"),)
    return [
        finding(
            "SIM.THRESHOLD",
            f"similarity edges are crossed without "
            f"has('{score}', P.gte(θ)) before the next vertex step",
            step,
            fix,
        )
    ]


def _threshold_on_vertex(
    q: GremlinQuery, chain: list[Step], i: int, score: str
) -> Finding | None:
    """`bothE(e).otherV().has(score, …)`: the threshold filters the vertex reached, which has
    no score; it is moved, verbatim, onto the edge (right after the edge step)."""
    leave = next((j for j in range(i + 1, len(chain)) if chain[j].name in MOVES), None)
    if leave is None or chain[leave].name not in LEAVE_EDGE:
        return None
    for j in range(leave + 1, len(chain)):
        later = chain[j]
        if later.name in MOVES:
            return None
        if _score_bound(later, score) is not None:
            fix = (
                Edit(chain[j - 1].span[1], later.span[1], ""),
                insert_after(chain[i], "." + q.source(later)),
            )
            return finding(
                "SIM.THRESHOLD",
                f"the score threshold {q.source(later)} follows {chain[leave].name}(): it "
                f"filters the vertex, which has no '{score}'; moved onto the edge",
                later,
                fix,
            )
    return None


def _score_bound(step: Step, score: str) -> object:
    """The lower bound a `has(score, …)` filter sets (True when it has no literal one), also
    inside `where(...)` / `local(...)`."""
    for inner in inside(step):
        bound = _score_bound(inner, score)
        if bound is not None:
            return bound
    if step.name != "has" or len(step.args) != 2:
        return None
    key, value = step.args
    if not (isinstance(key, String) and key.value == score):
        return None
    if isinstance(value, Predicate):
        if value.name not in _LOWER_BOUNDS or not value.args:
            return None
        value = value.args[0]
    if isinstance(value, Literal) and isinstance(value.value, int | float):
        return value.value
    return True
