"""Plan validation (SEGRA, DESIGN §10): a multi-step plan an LLM wrote, checked before any of
it runs. Pure: no I/O; the fronts (`POST /v1/plan/validate`, MCP `validate_plan`) read the
plan, `QueryService.validate_plan` sends each branch's query through the guard and this module
turns the lot into one answer.

A plan is ``{"branches": [{"id", "route", "depends_on": [...], "query"}, ...]}``: `route` is a
language (`cypher`, `gremlin`, `sql`) or a name `[plan] routes` maps to one, and `depends_on`
names the branches whose results a branch needs. The branches must form a DAG no deeper than
`[plan] max_depth` (the longest chain of branches, counted in branches). Each problem is one
error `{"branch", "code", "message"}` in words an LLM can act on (codes `PLAN.*`, docs/codes.md);
a branch the guard blocks reports the blocking findings' codes and messages.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from query_guard.model import Verdict

LANGUAGES = ("cypher", "gremlin", "sql")
UNCHECKED = "unchecked"  # a branch's action when its query never reached the guard


class PlanShapeError(ValueError):
    """The plan is not the documented JSON shape (a front answers 400 / an error result)."""


@dataclass(frozen=True, slots=True)
class PlanRules:
    """`[plan]`: the deepest dependency chain, the most branches, named routes -> language."""

    max_depth: int = 8
    max_branches: int = 32
    routes: Mapping[str, str] = field(default_factory=dict)

    def language(self, route: str) -> str | None:
        """The language a route's queries are written in (None: no such route here)."""
        return route if route in LANGUAGES else self.routes.get(route)

    def known(self) -> list[str]:
        return [*LANGUAGES, *sorted(self.routes)]


@dataclass(frozen=True, slots=True)
class Branch:
    id: str
    route: str
    depends_on: tuple[str, ...]
    query: str


@dataclass(frozen=True, slots=True)
class PlanError:
    branch: str | None
    code: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"branch": self.branch, "code": self.code, "message": self.message}


def parse_plan(raw: Any) -> list[Branch]:
    """The branches of a plan, or `PlanShapeError` saying which field has the wrong type."""
    if not isinstance(raw, dict) or not isinstance(raw.get("branches"), list):
        raise PlanShapeError('the plan must be an object {"branches": [...]}')
    out = []
    for n, item in enumerate(raw["branches"]):
        where = f"branches[{n}]"
        if not isinstance(item, dict):
            raise PlanShapeError(f"{where} must be an object with id, route, depends_on, query")
        for key in ("id", "route", "query"):
            if not isinstance(item.get(key), str):
                raise PlanShapeError(f"{where}.{key} must be a string")
        deps = item.get("depends_on", [])
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            raise PlanShapeError(f"{where}.depends_on must be a list of branch ids (strings)")
        out.append(Branch(item["id"], item["route"], tuple(deps), item["query"]))
    return out


def structure_errors(branches: Sequence[Branch], rules: PlanRules) -> list[PlanError]:
    """Everything wrong with the plan before any query is judged: size, empty queries,
    duplicate ids, unknown routes and dependencies, cycles, depth."""
    if not branches:
        return [PlanError(None, "PLAN.EMPTY", "the plan has no branches: add at least one "
                                              "{id, route, depends_on, query}")]  # fmt: skip
    if len(branches) > rules.max_branches:
        return [PlanError(None, "PLAN.SIZE", f"the plan has {len(branches)} branches, more "
                          f"than the {rules.max_branches} allowed: merge or drop branches")]
    errors: list[PlanError] = []
    ids = [b.id for b in branches]
    seen: set[str] = set()
    for b in branches:
        if not b.id.strip():
            errors.append(PlanError(b.id, "PLAN.EMPTY", "a branch has an empty id: give every "
                                                        "branch a short unique id"))
        elif b.id in seen:
            errors.append(PlanError(b.id, "PLAN.DUPLICATE_ID", f"{ids.count(b.id)} branches "
                                    f"have the id {b.id!r}: give each branch its own id"))
        seen.add(b.id)
        if not b.query.strip():
            errors.append(PlanError(b.id, "PLAN.EMPTY", f"branch {b.id!r} has no query: write "
                                    "the query it runs, or drop the branch"))
        if rules.language(b.route) is None:
            errors.append(PlanError(b.id, "PLAN.UNKNOWN_ROUTE", f"branch {b.id!r} has route "
                                    f"{b.route!r}{_close(b.route, rules.known())}, which this "
                                    f"proxy does not serve; use one of {', '.join(rules.known())}"))
        for dep in dict.fromkeys(b.depends_on):
            if dep not in ids:
                errors.append(PlanError(b.id, "PLAN.UNKNOWN_DEPENDENCY", f"branch {b.id!r} "
                                        f"depends on {dep!r}{_close(dep, ids)}, which no branch "
                                        f"has as its id; ids in this plan: {', '.join(ids)}"))
    graph = {b.id: [d for d in b.depends_on if d in seen] for b in branches}  # known ids
    cycles = find_cycles(graph)
    for cycle in cycles:
        path = " -> ".join([*cycle, cycle[0]])
        errors.append(PlanError(cycle[0], "PLAN.CYCLE", f"the branches depend on each other in "
                                f"a circle: {path} (each depends on the next): remove one of "
                                "these dependencies so the plan has an order"))
    if not cycles:
        chain = longest_chain(graph)
        if len(chain) > rules.max_depth:
            errors.append(PlanError(chain[-1], "PLAN.DEPTH", f"the chain {' -> '.join(chain)} "
                                    f"is {len(chain)} branches deep, more than the "
                                    f"{rules.max_depth} allowed: run independent steps side "
                                    "by side or merge steps"))
    return errors


def find_cycles(graph: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """The circles of `graph` (node -> nodes it depends on), each once, as a path starting at
    its smallest id (a self-dependency is a circle of one)."""
    found: dict[tuple[str, ...], list[str]] = {}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for root in graph:
        if root in state:
            continue
        path: list[str] = [root]
        state[root] = 1
        work = [iter(graph[root])]
        while work:
            nxt = next(work[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                work.pop()
            elif state.get(nxt) == 1:
                cycle = path[path.index(nxt):]
                start = cycle.index(min(cycle))
                rotated = cycle[start:] + cycle[:start]
                found.setdefault(tuple(rotated), rotated)
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                work.append(iter(graph[nxt]))
    return list(found.values())


def longest_chain(graph: Mapping[str, Sequence[str]]) -> list[str]:
    """The longest dependency chain of an acyclic `graph`, first branch first."""
    best: dict[str, list[str]] = {}

    def chain(node: str) -> list[str]:
        if node not in best:
            best[node] = []  # a guard for a cycle; callers pass acyclic graphs
            deeper = max((chain(d) for d in graph[node]), key=len, default=[])
            best[node] = [*deeper, node]
        return best[node]

    return max((chain(n) for n in graph), key=len, default=[])


def judged(branches: Sequence[Branch], rules: PlanRules) -> list[tuple[int, Branch, str]]:
    """The branches whose query goes to the guard: position, branch, the language it is in."""
    out = []
    for n, b in enumerate(branches):
        language = rules.language(b.route)
        if language is not None and b.query.strip():
            out.append((n, b, language))
    return out


def answer(
    branches: Sequence[Branch], errors: list[PlanError], verdicts: Mapping[int, Verdict]
) -> dict[str, Any]:
    """The whole answer: `verdicts` maps a branch's position to the guard's verdict on it;
    a blocked branch adds its blocking findings as errors."""
    rows = []
    errors = list(errors)
    for n, b in enumerate(branches):
        verdict = verdicts.get(n)
        if verdict is None:
            rows.append({"id": b.id, "action": UNCHECKED, "query": b.query, "findings": []})
            continue
        findings = [f.to_dict() for f in verdict.findings]
        rows.append({"id": b.id, "action": str(verdict.action), "query": verdict.query,
                     "findings": findings})  # fmt: skip
        if verdict.blocked:
            errors += [PlanError(b.id, f["code"], f"branch {b.id!r}: {f['message']}")
                       for f in findings if f["severity"] == "error"]  # fmt: skip
    return {"valid": not errors, "errors": [e.to_dict() for e in errors], "branches": rows}


def _close(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
