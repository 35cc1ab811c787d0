"""Gremlin scans — report traversals that enumerate the whole graph (`LIM.FULL_SCAN`).

A `V()` / `E()` step without ids (the spawn `g.V()`, or a mid-traversal `V()`) is a full scan
unless a filter on the scanned elements themselves follows it: the steps right after it may
only be filters or `as()` / `identity()` / `barrier()` until the first filter. Filters are
`hasLabel(..)`, `hasId(..)`, `has(key, value-or-predicate)`, `has(label, key, value)`, and
`where(..)` / `filter(..)` / `and(..)` whose traversal starts with one of those (`or(..)`
when every branch does). A filter after a navigation, map, aggregation or limit step does not
count: `g.V().out('knows').has('name', 'x')` still walks every vertex. `has(key)` (existence),
`hasNot`, `hasKey` and `is` do not count either: no index can answer them.

Decisions:

* By default (`[rules.gremlin_scans] block = true`) every full scan is an error: DESIGN §5
  blocks full-graph scans, and an LLM that wrote one is told to anchor the traversal.
* With `block = false` the finding is a warning, and two bounded forms are not reported:
  `g.V().count()` / `g.E().count()` (a global `count()` straight after the scan: "how big is
  the graph"; `allow_count = false` reports it too) and a scan limited right away
  (`g.V().limit(10)`, `range(0, 10)`).
* A bare similarity-edge scan — `g.E()` whose leading filters name only a similarity label of
  `[gremlin.similarity] edges` (`hasLabel('similarReason')`, maybe with a score filter) and no
  id — is always an error: those edges are the quadratic part of the graph.

No fix is proposed: the rule cannot guess which vertices were meant.
"""

from __future__ import annotations

from query_guard.api import Finding, GuardContext, Option, Severity, hookimpl
from query_guard.api.gremlin import (
    Enum,
    GremlinQuery,
    Step,
    String,
    Traversal,
    gremlin_settings,
    is_local,
    nested_traversals,
    string_args,
)

RULE = "gremlin_scans"
OPTIONS = {
    "block": Option(bool, True, "a full-graph scan is an error (false: a warning)"),
    "allow_count": Option(
        bool, True, "with block = false, g.V().count() is not reported as a scan"
    ),
}

_NEUTRAL = frozenset({"as", "identity", "barrier"})
_WRAPPERS_ANY = frozenset({"where", "filter", "and"})


@hookimpl
def guard_gremlin(traversal: GremlinQuery, ctx: GuardContext) -> list[Finding]:
    block = bool(ctx.option(RULE, "block", OPTIONS["block"].default))
    allow_count = bool(ctx.option(RULE, "allow_count", True))
    settings = gremlin_settings(ctx.gremlin)
    sim_labels = settings.similarity.labels if settings.similarity else frozenset()
    findings: list[Finding] = []
    for chain in traversal.traversals():
        steps = chain.all_steps
        for i, step in enumerate(steps):
            if step.name not in ("V", "E") or step.args:
                continue
            run, rest = _leading_run(steps[i + 1 :])
            span = (step.span[0], (run[-1] if run else step).span[1])
            if step.name == "E" and _similarity_scan(run, sim_labels):
                findings.append(
                    Finding(
                        "LIM.FULL_SCAN",
                        Severity.ERROR,
                        "bare similarity-edge scan: every similarity edge of the graph is "
                        "enumerated; start from an anchor vertex (g.V(id)) instead",
                        span,
                    )
                )
            elif not any(_is_filter(s) for s in run) and not (
                not block and ((allow_count and _is_global_count(rest)) or _is_limit(rest))
            ):
                findings.append(
                    Finding(
                        "LIM.FULL_SCAN",
                        Severity.ERROR if block else Severity.WARNING,
                        f"full-graph scan: {step.name}() without ids and without a label, id or "
                        "property filter right after it",
                        span,
                        hint="anchor the traversal: g.V(id), hasLabel(..), has(key, value)",
                    )
                )
    return findings


def _leading_run(steps: list[Step]) -> tuple[list[Step], Step | None]:
    """The filters and neutral steps right after a scan, and the first step after them."""
    run: list[Step] = []
    for step in steps:
        if step.name in _NEUTRAL or _is_filter(step):
            run.append(step)
        else:
            return run, step
    return run, None


def _is_filter(step: Step) -> bool:
    """A filter an index (or a label / id lookup) can answer, on the current element."""
    name, args = step.name, step.args
    if name in ("hasLabel", "hasId"):
        return bool(args)
    if name == "has":
        return len(args) >= 2
    if name in _WRAPPERS_ANY or name == "or":
        inner = [_starts_with_filter(t) for t in nested_traversals(step)]
        if not inner:
            return False
        return all(inner) if name == "or" else any(inner)
    return False


def _starts_with_filter(t: Traversal) -> bool:
    for step in t.all_steps:
        if _is_filter(step):
            return True
        if step.name not in _NEUTRAL:
            return False
    return False


def _is_limit(step: Step | None) -> bool:
    return step is not None and step.name in ("limit", "range") and not is_local(step)


def _is_global_count(step: Step | None) -> bool:
    return step is not None and step.name == "count" and not is_local(step)


def _similarity_scan(run: list[Step], sim_labels: frozenset[str]) -> bool:
    """`E().hasLabel(<similarity labels only>)…` with no id filter."""
    if not sim_labels:
        return False
    labelled = False
    for step in run:
        if step.name == "hasId" or (step.name == "has" and step.args and _is_id_key(step.args[0])):
            return False
        labels = _label_filter(step)
        if labels is not None:
            if not labels <= sim_labels:
                return False
            labelled = True
    return labelled


def _label_filter(step: Step) -> frozenset[str] | None:
    if step.name == "hasLabel":
        names = string_args(step)
        return frozenset(names) if names else None
    if step.name == "has" and len(step.args) == 3 and isinstance(step.args[0], String):
        return frozenset({step.args[0].value})
    return None


def _is_id_key(arg: object) -> bool:
    return isinstance(arg, Enum) and arg.kind == "T" and arg.value == "id"
