"""Gremlin limits — bound what a traversal can return (`LIM.INJECTED`, `LIM.CAPPED`).

A root traversal that reads the graph (a `V()` / `E()` step anywhere in it) gets
`.limit(<guard.default_limit>)` appended — before its terminal step (`.toList()`), so
`g.V().values('name').toList()` becomes `g.V().values('name').limit(1000).toList()` — unless
its result is bounded already:

* a global `limit(n)`, `range(lo, hi)`, `tail(..)` or `sample(n)` in the main chain with no
  expanding step after it (`out()`, `in()`, `both*()`, `*V()`, `V()`, `unfold()`,
  `flatMap(..)`, or a `union` / `repeat` / `local` / … whose body expands);
* an aggregation in the main chain with no expanding step after it (`count()`, `sum()`,
  `min()`, `max()`, `mean()`, `fold()`, `group()`, `groupCount()`, `tree()`, `cap(..)`; local
  scope and side-effect forms such as `groupCount('x')` do not count);
* it starts from ids (`g.V(1, 2)`) and never expands;
* it ends in `next()`, `next(n)`, `tryNext()`, `hasNext()`, `iterate()` or `explain()`, or its
  last step is `profile()`;
* it contains a mutation step anywhere (a limit would make a write partial; in read-only mode
  `gremlin_read_only` blocks it anyway).

A literal bound above `guard.max_limit` is lowered to it: `limit(n)`, `tail(n)`, `next(n)` and
the upper end of `range(lo, hi)` (`range(lo, -1)` included) in the main chain. Bounds given as
parameters and local-scope limits are left alone. 0 switches either bound off. Findings are
informational; the fix is applied.
"""

from __future__ import annotations

from query_guard.api import Edit, Finding, GuardContext, Severity, hookimpl
from query_guard.api.gremlin import (
    MUTATING_STEPS,
    GremlinQuery,
    Literal,
    Step,
    Traversal,
    append_step,
    int_literal,
    is_local,
    literal,
    nested_traversals,
)

EXPANDING_STEPS: frozenset[str] = frozenset(
    {"out", "in", "both", "outE", "inE", "bothE", "outV", "inV", "bothV", "otherV", "V", "E",
     "unfold", "flatMap", "inject", "call"}
)  # fmt: skip
_BODY_STEPS = frozenset(
    {"union", "local", "coalesce", "choose", "optional", "branch", "repeat", "match", "map"}
)
_LIMITERS = frozenset({"limit", "range", "tail", "sample"})
_REDUCERS = frozenset(
    {"count", "sum", "min", "max", "mean", "fold", "group", "groupCount", "tree", "cap"}
)
_SIDE_EFFECT_FORMS = frozenset({"group", "groupCount", "tree"})  # with a key: no reduction
_SINGLE_TERMINALS = frozenset({"next", "tryNext", "hasNext", "iterate", "explain"})


@hookimpl
def guard_gremlin(traversal: GremlinQuery, ctx: GuardContext) -> list[Finding]:
    root = traversal.traversal
    default, cap = ctx.settings.default_limit, ctx.settings.max_limit
    findings = _caps(root, cap) if cap else []
    if default and _needs_limit(root, traversal, bool(cap)):
        findings.append(
            Finding(
                "LIM.INJECTED",
                Severity.INFO,
                f"no limit: .limit({default}) appended (guard.default_limit)",
                (root.all_steps[-1].span[1], root.all_steps[-1].span[1]),
                fix=(append_step(root, f".limit({default})"),),
            )
        )
    return findings


def expands(step: Step) -> bool:
    """Can one traverser entering `step` leave it as many?"""
    if step.name in EXPANDING_STEPS:
        return True
    if step.name in _BODY_STEPS:
        return any(
            s.name in EXPANDING_STEPS for t in nested_traversals(step) for s in t.find_all(Step)
        )
    return False


def _needs_limit(root: Traversal, query: GremlinQuery, capped: bool) -> bool:
    chain = root.all_steps
    if not chain or not any(s.name in ("V", "E") for s in query.steps()):
        return False
    terminal = root.terminal
    if terminal is not None and terminal.name in _SINGLE_TERMINALS:
        return False
    if chain[-1].name == "profile":
        return False
    if any(s.name in MUTATING_STEPS for s in query.steps()):
        return False
    bounded = root.spawn is not None and root.spawn.name in ("V", "E") and bool(root.spawn.args)
    for step in chain[1:] if root.spawn is not None else chain:
        if expands(step):
            bounded = False
        elif _bounds(step, capped):
            bounded = True
    return not bounded


def _bounds(step: Step, capped: bool) -> bool:
    if is_local(step):
        return False
    if step.name == "range" and len(step.args) == 2:
        return int_literal(step.args[1]) != -1 or capped  # the cap bounds range(lo, -1)
    if step.name in _LIMITERS:
        return True
    if step.name in _REDUCERS:
        return not (step.name in _SIDE_EFFECT_FORMS and step.args)
    return False


def _caps(root: Traversal, cap: int) -> list[Finding]:
    findings = []
    steps = list(root.all_steps)
    if root.terminal is not None and root.terminal.name == "next":
        steps.append(root.terminal)
    for step in steps:
        if is_local(step) or not step.args:
            continue
        if step.name in ("limit", "tail", "next") and len(step.args) == 1:
            arg = step.args[0]
            value = int_literal(arg)
            if value is not None and value > cap:
                findings.append(_capped(arg, cap, f"{step.name}({value})", cap))
        elif step.name == "range" and len(step.args) == 2:
            lo, hi = (int_literal(a) for a in step.args)
            if lo is not None and hi is not None and (hi < 0 or hi - lo > cap):
                findings.append(_capped(step.args[1], lo + cap, f"range({lo}, {hi})", cap))
    return findings


def _capped(arg: object, value: int, shown: str, cap: int) -> Finding:
    assert isinstance(arg, Literal)
    text = literal(Literal(arg.span, arg.gtype, value))
    return Finding(
        "LIM.CAPPED",
        Severity.INFO,
        f"{shown} exceeds guard.max_limit ({cap}); bound lowered to {text}",
        arg.span,
        fix=(Edit(arg.span[0], arg.span[1], text),),
    )
