"""`query-guard rules`: the installed rule plugins — name, where each comes from, the finding
codes its module emits, and its typed options (`OPTIONS`)."""

from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import dataclass
from typing import Any

import pluggy

from query_guard.codes import FAMILIES
from query_guard.options import Option, declared_options

# References to the design notes, which are not part of the distribution: "(DESIGN §5)",
# ", DESIGN §5" inside parentheses, "DESIGN §5: " before a sentence.
_DESIGN_REF = re.compile(r" \(DESIGN §\d+\)|, DESIGN §\d+(?=\))|DESIGN §\d+: ")
_CODE = re.compile(r"[\"']((?:" + "|".join(FAMILIES) + r")\.[A-Z][A-Z_]+)[\"']")


@dataclass(frozen=True)
class RuleInfo:
    name: str
    source: str  # "built-in query_guard.rules.limits" or "qg-no-star 0.1 (qg_no_star)"
    summary: str  # the docstring's first paragraph, on one line
    codes: tuple[str, ...]
    options: dict[str, Option]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "summary": self.summary,
            "codes": list(self.codes),
            "options": {
                k: {"type": o.type_name, "default": o.default, "doc": o.doc}
                for k, o in self.options.items()
            },
        }


def list_rules(pm: pluggy.PluginManager) -> list[RuleInfo]:
    from importlib.metadata import entry_points

    from query_guard.plugins import ENTRY_POINT_GROUP

    dists = {ep.name: ep.dist for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.dist}
    out = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        module = inspect.getmodule(plugin)
        dist = dists.get(name)
        module_name = getattr(module, "__name__", type(plugin).__name__)
        if dist is not None:
            source = f"{dist.name} {dist.version} ({module_name})"
        elif module_name.startswith("query_guard.rules."):
            source = f"built-in {module_name}"
        else:
            source = module_name
        doc = (inspect.getdoc(plugin) or "").strip()
        try:
            text = inspect.getsource(module) if module is not None else ""
        except (OSError, TypeError):
            text = ""
        codes = tuple(sorted(set(_CODE.findall(text))))
        out.append(
            RuleInfo(name, source, summary(doc), codes, dict(declared_options(plugin) or {}))
        )
    return sorted(out, key=lambda r: r.name)


def summary(doc: str) -> str:
    """The first paragraph of a docstring on one line, without design-note references."""
    first = doc.strip().split("\n\n")[0]
    return _DESIGN_REF.sub("", " ".join(first.split()))


def render(rules: list[RuleInfo]) -> str:
    lines = []
    for r in rules:
        lines.append(f"{r.name}  [{r.source}]")
        if r.summary:
            lines.append(textwrap.fill(r.summary, 100, initial_indent="  ",
                                       subsequent_indent="  ", break_on_hyphens=False))  # fmt: skip
        if r.codes:
            lines.append(f"  codes: {', '.join(r.codes)}")
        for key, opt in r.options.items():
            lines.append(
                f"  option [rules.{r.name}] {key}: {opt.type_name} = {opt.default!r}"
                f"  ({opt.doc})"
            )
    return "\n".join(lines) + "\n"
