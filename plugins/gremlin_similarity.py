"""Gremlin similarity walks — SEGRA's properties P1-P4 on a parsed traversal (DESIGN §5).

Driven by `[gremlin.similarity]` (see `query_guard.gremlin.similarity`): `edges` maps each
similarity label e to Φ(e), the within-case edge that reaches the vertices e connects
(`similarReason -> hasReason`). A *similarity step* is `bothE/outE/inE/both/out/in` naming a
similarity label. Every chain is checked, anonymous traversals included ("earlier" for P3
includes the enclosing chain's steps before the nesting step).

* **P1 `SIM.WINDOW`** — when a similarity step is later followed by `in(Φ(e))` (the walk
  returns to a case), `has(<window_property>, …)` must follow that `in` step, before the next
  move. *Fixed*: a window filter found on the anchor (before the similarity step) is moved
  there verbatim; otherwise `.has('<window_property>', P.between(lo, hi))` from `window` is
  inserted. Reported only when neither exists. Vacuous when the walk never returns to a case.
* **P2 `SIM.THRESHOLD`** — every `bothE/outE/inE(e)` is followed by a score filter
  `has(<score_property>, P.gte(θ))` (or `gt` / `between` / `inside` / an exact value) before
  the next vertex step (`otherV/inV/outV/bothV`). *Fixed* when `threshold` is configured:
  `.has('<score>', P.gte(θ))` is inserted right after the edge step. A literal lower bound
  below θ is reported without a fix. A vertex step `both/out/in(e)` cannot filter on the
  score: *fixed* (with θ) to `bothE(e).has('<score>', P.gte(θ)).otherV()`.
* **P3 `SIM.BRACKET`** — every similarity step is preceded, earlier in the traversal, by
  `out(Φ(e))` (or `outE(Φ(e))`). Not required once a `hasLabel` has put the walk on non-case
  vertices explicitly. *Fixed* only when the similarity step comes straight after the anchor
  (`g.V(id)…` with nothing but filters before it): `out('<Φ(e)>').` is inserted before it.
  Otherwise reported.
* **P4 `ANC.ID`** — `has('case', 'id', X)` / `has('id', X)` address a property vertices do not
  have (the id is not a property). *Fixed* to `hasLabel('case').hasId(X)` / `hasId(X)`. Skipped
  when the schema catalog declares an `id` property for that label. Active without a
  `[gremlin.similarity]` table; P1-P3 need it.

Filters inside `where(...)`, `filter(...)`, `and(...)` and `local(...)` count where they hang
(`bothE(e).where(__.has(score, P.gte(0.9)))` has its threshold; so has `in('hasReason')
.where(__.has('createdAt', …))` its window), and a similarity step inside `local(...)`,
`map(...)` or `flatMap(...)` is followed into the enclosing chain's later steps
(`local(__.bothE(e)).has(score, …).otherV()`); a `where(...)` body's is not (the walk goes on
from the vertex it filtered).

Severity: a violation the rule fixes is a warning (the rewritten walk runs); one the
configuration does not let it fix is an **error** — SEGRA's verifier rejects such plans, and
the message tells the LLM the exact fix. A threshold written after the vertex step
(`bothE(e).otherV().has(score, …)`, where it filters the vertex) is moved onto the edge; a
similarity step bracketed by another label's within-case edge (`out('exhibits')` before
`bothE('similarReason')`) is not fixable and blocks.
"""

from __future__ import annotations

from collections.abc import Iterator

from query_guard.context import GuardContext
from query_guard.gremlin.ast import Literal, Predicate, Step, String, Traversal
from query_guard.gremlin.edits import (
    insert_after,
    insert_before,
    nested_traversals,
    replace_node,
    string_args,
)
from query_guard.gremlin.language import GremlinQuery
from query_guard.gremlin.printer import quote
from query_guard.gremlin.similarity import SimilaritySettings, gremlin_settings
from query_guard.hookspecs import hookimpl
from query_guard.model import Edit, Finding, Severity

EDGE_STEPS = frozenset({"bothE", "outE", "inE"})
VERTEX_STEPS = frozenset({"both", "out", "in"})
LEAVE_EDGE = frozenset({"otherV", "inV", "outV", "bothV"})
MOVES = EDGE_STEPS | VERTEX_STEPS | LEAVE_EDGE | {"V", "E"}
_LOWER_BOUNDS = frozenset({"gte", "gt", "between", "inside", "eq"})
_CONTINUES = frozenset({"local", "map", "flatMap"})
_FILTERS_INSIDE = frozenset({"where", "filter", "and", "local"})  # a has() inside filters too


@hookimpl
def guard_gremlin(traversal: GremlinQuery, ctx: GuardContext) -> list[Finding]:
    findings = _anchor_by_id(traversal, ctx)
    sim = gremlin_settings(ctx.gremlin).similarity
    if sim is None:
        return findings
    root = traversal.traversal
    for prior, chain, cont, is_root in _chains(root):
        returns_seen: set[int] = set()
        for i, step in enumerate(chain):
            labels = string_args(step) or []
            if step.name not in EDGE_STEPS | VERTEX_STEPS or not set(labels) & sim.labels:
                continue
            findings += _threshold(traversal, chain, cont, i, labels, sim)
            findings += _bracket(chain, i, prior, labels, sim, anchored=is_root)
            findings += _window(traversal, chain + cont, i, labels, sim, returns_seen)
    return findings


def _chains(root: Traversal) -> Iterator[tuple[list[Step], list[Step], list[Step], bool]]:
    """(steps that ran before the chain, the chain, the steps its output continues into, is
    it the root's) for every chain. A `local(...)` / `map(...)` / `flatMap(...)` body's output
    continues into the enclosing chain's later steps; a `where(...)` body's does not (the
    walk goes on from the vertex it filtered)."""
    stack: list[tuple[list[Step], list[Step], Traversal]] = [([], [], root)]
    while stack:
        prior, cont, t = stack.pop()
        chain = t.all_steps
        yield prior, chain, cont, t is root
        for i, step in enumerate(chain):
            after = chain[i + 1 :] + cont if step.name in _CONTINUES else []
            stack.extend((prior + chain[:i], after, n) for n in nested_traversals(step))
        for step in t.source:
            stack.extend(([], [], n) for n in nested_traversals(step))


# ---------------------------------------------------------------- P2 threshold


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
            _finding(
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
                _finding(
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
        _finding(
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
            return _finding(
                "SIM.THRESHOLD",
                f"the score threshold {q.source(later)} follows {chain[leave].name}(): it "
                f"filters the vertex, which has no '{score}'; moved onto the edge",
                later,
                fix,
            )
    return None


def _inside(step: Step) -> Iterator[Step]:
    """The steps of `where(...)` / `filter(...)` / `and(...)` / `local(...)` bodies up to their
    first move: filters there filter the step they hang on."""
    if step.name in _FILTERS_INSIDE:
        for t in nested_traversals(step):
            for s in t.all_steps:
                if s.name in MOVES:
                    break
                yield s


def _score_bound(step: Step, score: str) -> object:
    """The lower bound a `has(score, …)` filter sets (True when it has no literal one), also
    inside `where(...)` / `local(...)`."""
    for inner in _inside(step):
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


# ---------------------------------------------------------------- P3 entity bracket


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
        _finding(
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


# ---------------------------------------------------------------- P1 window


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
        _finding(
            "SIM.WINDOW",
            f"the time window has('{prop}', …) must follow "
            f"{returning.name}('{'/'.join(sorted(phis))}') (the destination case, "
            f"not the anchor){note}",
            returning,
            fix,
        )
    ]


def _window_filter(step: Step, prop: str) -> bool:
    if any(_window_filter(inner, prop) for inner in _inside(step)):
        return True
    if step.name != "has" or len(step.args) not in (2, 3):
        return False
    key = step.args[-2]
    return isinstance(key, String) and key.value == prop


# ---------------------------------------------------------------- P4 anchor by id


def _anchor_by_id(q: GremlinQuery, ctx: GuardContext) -> list[Finding]:
    findings = []
    for step in q.steps():
        if step.name != "has" or len(step.args) not in (2, 3):
            continue
        *head, key, value = step.args
        if not (isinstance(key, String) and key.value == "id"):
            continue
        label = head[0] if head else None
        if label is not None and not isinstance(label, String):
            continue
        if _declares_id(ctx, label.value if label is not None else None):
            continue
        has_id = f"hasId({q.source(value)})"
        text = f"hasLabel({q.source(label)}).{has_id}" if label is not None else has_id
        findings.append(
            _finding(
                "ANC.ID",
                f"{q.source(step)} filters on a property 'id' that vertices do "
                "not have; the id is addressed with hasId()/g.V(id)",
                step,
                (replace_node(step, text),),
            )
        )
    return findings


def _declares_id(ctx: GuardContext, label: str | None) -> bool:
    schema = ctx.schema
    if schema is None:
        return False
    if label is None:
        return "id" in schema.all_node_properties
    return "id" in schema.node_properties(label)


def _finding(code: str, message: str, step: Step, fix: tuple[Edit, ...] | None) -> Finding:
    """A fixed violation is a warning (the rewrite runs); one the configuration cannot fix is
    an error: SEGRA's verifier rejects such plans (DESIGN §5), and the message says the fix."""
    severity = Severity.WARNING if fix or code == "ANC.ID" else Severity.ERROR
    return Finding(code, severity, message, step.span, fix=fix)
