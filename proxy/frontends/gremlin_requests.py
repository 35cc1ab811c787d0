"""What the Gremlin front reads from a request and writes into a response, beside the
protocol (`query_guard.wire.gremlin`): the bindings and the client's question a bytecode carries,
the traversal source the request's aliases name, the block message, the findings as status
attributes, and a refusal (`Rejected`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gremlin_python.process.traversal import Binding, Bytecode, P, TraversalStrategy

from query_guard.model import Finding, Severity, Verdict
from query_guard.run.runner import Route
from query_guard.run.status import REQUEST_INVALID, UNKNOWN_ERROR
from query_guard.wire import gremlin as wire

# the audit line's `error` of a refusal that no finding or backend code explains
_CODE_OF_STATUS = {
    wire.MALFORMED_REQUEST: REQUEST_INVALID,
    wire.INVALID_REQUEST_ARGUMENTS: REQUEST_INVALID,
}


class Rejected(Exception):
    """A request answered with an error `status` (TinkerPop's number). `code` is what the
    audit line writes as `error`, a code string as on the Bolt front: the Neo4j status of the
    findings that blocked it (`query_guard.frontends.bolt.diagnostics.block_code`), the
    backend's error code, else one derived from the status."""

    def __init__(
        self, status: int, message: str, code: str | None = None, verdict: Verdict | None = None,
        qg_id: str = "",
    ) -> None:  # fmt: skip
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code or _CODE_OF_STATUS.get(status, UNKNOWN_ERROR)
        self.verdict = verdict  # a refusal of the guard's kind (the audit record's codes)
        self.qg_id = qg_id  # the query id of a run that reached the runner (for feedback)

    @property
    def attributes(self) -> dict[str, str] | None:
        """The status attributes of the error response: the query id, when there is one."""
        return {"qg_id": self.qg_id} if self.qg_id else None


_OPTIONS = "org.apache.tinkerpop.gremlin.process.traversal.strategy.decoration.OptionsStrategy"


def take_question(bytecode: Bytecode) -> tuple[Bytecode, str | None]:
    """The bytecode without the `question` a client put in `g.with_("question", …)`
    (gremlinpython folds it into an `OptionsStrategy`), and that question."""
    question: str | None = None
    kept: list[list[Any]] = []
    for inst in bytecode.source_instructions:
        strategy = inst[1] if inst[0] == "withStrategies" and len(inst) == 2 else None
        if isinstance(strategy, TraversalStrategy) and strategy.strategy_name == "OptionsStrategy":
            config = dict(strategy.configuration or {})
            asked = config.pop("question", None)
            if isinstance(asked, str):
                question = asked
                if config:
                    kept.append([inst[0], TraversalStrategy("OptionsStrategy", config, _OPTIONS)])
                continue
        kept.append(inst)
    if question is None:
        return bytecode, None
    out = Bytecode()
    out.source_instructions = kept
    out.step_instructions = list(bytecode.step_instructions)
    out.bindings = dict(bytecode.bindings)
    return out, question


def traversal_source(args: Mapping[str, Any], route: Route | None) -> str | None:
    """The named graph a request's `aliases` (`{"g": "gmodern"}`) picks, None for the default
    `g`; `Rejected` (499, as Gremlin Server answers an alias it has no graph for) when no graph
    of that name is served here."""
    aliases = args.get("aliases")
    source = aliases.get("g") if isinstance(aliases, Mapping) else None
    if not isinstance(source, str) or source == "g":
        return None
    graphs = (route.graphs or {}) if route is not None else {}
    if source not in graphs:
        served = ", ".join(["g", *sorted(graphs)])
        raise Rejected(
            wire.INVALID_REQUEST_ARGUMENTS,
            f"Could not alias [g] to [{source}]: no traversal source named {source!r} is "
            f"served here (traversal sources: {served}; more with [backend] gremlin_graphs)",
        )
    return source


def status_attributes(findings: list[Finding]) -> dict[str, Any]:
    """The findings as a response's status attributes (empty: none to report)."""
    if not findings:
        return {}
    return {
        "warnings": [_line(f) for f in findings if f.severity is not Severity.INFO],
        "findings": [
            {"code": f.code, "severity": str(f.severity), "message": f.message,
             "hint": f.hint or ""}
            for f in findings
        ],
    }  # fmt: skip


def bytecode_bindings(value: Any) -> dict[str, Any]:
    """The values of the `Binding`s a bytecode carries (gremlinpython sends a traversal's
    variables inside its instructions, not in the request's `bindings`)."""
    found: dict[str, Any] = {}
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Binding):
            found[item.key] = item.value
        elif isinstance(item, Bytecode):
            stack += [a for inst in item.source_instructions + item.step_instructions
                      for a in inst[1:]]  # fmt: skip
        elif isinstance(item, P):
            stack += [item.value, item.other]
        elif isinstance(item, list | tuple | set | frozenset):
            stack += list(item)
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
    return found


def block_message(verdict: Verdict) -> str:
    """The findings that caused the block, one per line (the LLM fixes its query from this)."""
    errors = [f for f in verdict.findings if f.severity is Severity.ERROR] or list(
        verdict.findings
    )
    return "query blocked by query-guard:\n" + "\n".join(_line(f) for f in errors)


def _line(f: Finding) -> str:
    hint = f" (hint: {f.hint})" if f.hint else ""
    return f"{f.code} {f.severity}: {f.message}{hint}"
