"""Gremlin read-only — block mutation steps and unlisted procedure calls anywhere in a traversal.

Every step of the parsed traversal is inspected: the root chain, anonymous traversals at any
depth (`sideEffect(drop())`, `coalesce(unfold(), addV('x'))`, `fold().coalesce(unfold(),
addV())`, `union(...)`, `repeat(...)`) and traversals inside strategy options
(`withStrategies(SubgraphStrategy(vertices: __.sideEffect(drop())))`).

* `SEC.WRITE` — when `guard.read_only`: `addV`, `addE`, `property`, `drop`, `mergeV`, `mergeE`,
  `addLabel`, `dropLabel(s)`, `io` (reading a file into the graph as well as writing one on the
  server) and `withoutStrategies(ReadOnlyStrategy)` (switching the server's own write guard
  off). Other strategies are allowed.
* `SEC.PROCEDURE` — `call(service)` whose service name is not on
  `[rules.gremlin_read_only] allowed_calls` (shell-style patterns, default `[]`; `g.call()` with
  no name lists the services and counts as `"--list"`). Always on, as for Cypher procedures:
  a service can do anything, read-only or not.

Lambdas, closures, Groovy statements and `;`-separated scripts never reach this rule: the
parser reports them as `SEC.SCRIPT` / `SEC.MULTI_STATEMENT`. All findings are errors.

Example::

    g.V().hasLabel('person').sideEffect(drop())   ->   blocked (SEC.WRITE on drop())
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from query_guard.api import Finding, GuardContext, Option, Severity, hookimpl
from query_guard.api.gremlin import MUTATING_STEPS, GremlinQuery, Step, Strategy, String

RULE = "gremlin_read_only"
OPTIONS = {
    "allowed_calls": Option(list, [], "call() services allowed (shell-style patterns)"),
}



@hookimpl
def guard_gremlin(traversal: GremlinQuery, ctx: GuardContext) -> list[Finding]:
    allowed = [str(p) for p in ctx.option(RULE, "allowed_calls", [])]
    findings: list[Finding] = []
    for step in traversal.steps():
        if step.name == "call":
            finding = _call(step, allowed)
            if finding is not None:
                findings.append(finding)
        elif ctx.settings.read_only:
            message = write_message(step)
            if message is not None:
                findings.append(Finding("SEC.WRITE", Severity.ERROR, message, step.span))
    return findings


def write_message(step: Step) -> str | None:
    """Why `step` writes, or None when it does not."""
    if step.name in MUTATING_STEPS:
        what = "reads or writes server files" if step.name == "io" else "writes to the graph"
        return f"{step.name}() {what}: this endpoint is read-only"
    if step.name == "withoutStrategies" and any(
        isinstance(a, Strategy) and a.name == "ReadOnlyStrategy" for a in step.args
    ):
        return "withoutStrategies(ReadOnlyStrategy) switches the server's write guard off"
    return None


def _call(step: Step, allowed: list[str]) -> Finding | None:
    first = step.args[0] if step.args else None
    if first is None:
        name = "--list"
    elif isinstance(first, String):
        name = first.value
    else:
        name = None  # a parameter: the service cannot be judged, so it is not allowed
    if name is not None and any(fnmatchcase(name.lower(), p.lower()) for p in allowed):
        return None
    shown = name if name is not None else "given as a parameter"
    return Finding(
        "SEC.PROCEDURE",
        Severity.ERROR,
        f"call() of service {shown} is not on the allow-list ([rules.{RULE}] allowed_calls)",
        step.span,
        hint="allowed: " + (", ".join(allowed[:6]) if allowed else "none"),
    )
