"""The schema part of the grounding context ordered by experience (DESIGN §10): node labels,
their properties and the `(start)-[:TYPE]->(end)` patterns sorted by the weight that verified
runs and feedback deposited on them — the patterns that worked first — and cut to a token
budget (`[context] max_tokens`, about four characters a token), dropping the lightest lines
first. With no weights yet it is the alphabetical schema text, cut the same way.

The same weights break ties in repair (`candidate_weight`): a candidate query weighs what the
schema elements it uses weigh together, and the repair loop tries the heaviest first."""

from __future__ import annotations

import re
from collections.abc import Mapping

from query_guard.experience.templates import template_of
from query_guard.schema.catalog import SchemaCatalog

CHARS_PER_TOKEN = 4
Weights = Mapping[tuple[str, str], float]
_PATTERN = re.compile(r"\((.*?)\)-\[:(.*)\]->\((.*)\)")


def tokens(text: str) -> int:
    """The budget's estimate of a text's tokens."""
    return -(-len(text) // CHARS_PER_TOKEN)


def ordered_schema_text(schema: SchemaCatalog, weights: Weights, max_tokens: int = 0) -> str:
    """`schema` as text, heaviest first, within `max_tokens` (0: all of it)."""
    data = schema.to_dict()
    labels = [(weights.get(("label", label), 0.0), f"- {label}: " + (", ".join(sorted(
        props, key=lambda p: (-weights.get(("property", p), 0.0), p))) or "(no properties)"))
        for label, props in sorted(data.get("nodes", {}).items())]  # fmt: skip
    patterns = []
    for rel in data.get("relationships", []):
        props = rel.get("properties") or []
        extra = f" {{{', '.join(props)}}}" if props else ""
        name = f"({rel['start']})-[:{rel['type']}]->({rel['end']})"
        line = f"- (:{rel['start']})-[:{rel['type']}{extra}]->(:{rel['end']})"
        patterns.append((weights.get(("pattern", name), 0.0), line))
    heads = ("Node labels and their properties:", "Relationships (start)-[:TYPE]->(end):")
    budget = max_tokens - sum(tokens(h) + 1 for h in heads) if max_tokens else None
    sections: tuple[list[tuple[float, str]], list[tuple[float, str]]] = ([], [])
    # patterns before labels at equal weight: a pattern also names its two labels
    lines = [(w, 1, i, line) for i, (w, line) in enumerate(labels)]
    lines += [(w, 0, i, line) for i, (w, line) in enumerate(patterns)]
    left_out = 0
    for weight, kind, _, line in sorted(lines, key=lambda x: (-x[0], x[1], x[2])):
        if budget is not None and tokens(line) + 1 > budget:
            left_out += 1
            continue
        if budget is not None:
            budget -= tokens(line) + 1
        sections[1 - kind].append((weight, line))
    out = []
    for head, section in zip(heads, sections, strict=True):
        out += [head, *(line for _, line in section)]
    if left_out:
        out.append(f"({left_out} more schema lines left out for the token budget; "
                   "GET /v1/schema has them all)")  # fmt: skip
    return "\n".join(out)


def candidate_weight(
    weights: Weights, language: str, text: str, dialect: str = "postgres"
) -> float:
    """The weight of the schema elements `text` uses (labels, patterns, properties, each
    once), 0 for a query the templater cannot read. A pattern with an unlabelled end,
    `(Person)-[:ACTED_IN]->()`, weighs what every weighted pattern of its type that it fits
    weighs (`(Person)-[:ACTED_IN]->(Movie)`), and the other way round: the direction of a
    half-labelled arrow counts.

    >>> w = {("pattern", "(Person)-[:ACTED_IN]->(Movie)"): 2.0}
    >>> candidate_weight(w, "cypher", "MATCH (:Person)-[:ACTED_IN]->(m) RETURN m")
    2.0
    >>> candidate_weight(w, "cypher", "MATCH (:Person)<-[:ACTED_IN]-(m) RETURN m")
    0.0
    """
    try:
        elements = template_of(language, text, dialect).elements
    except Exception:  # a candidate the templater cannot read uses no element we can name
        return 0.0
    patterns = [_split(name) for kind, name in weights if kind == "pattern"]
    total = 0.0
    for kind, name in elements:
        pattern = _split(name) if kind == "pattern" else None
        if pattern is None:
            total += weights.get((kind, name), 0.0)
            continue
        total += sum(
            weights[("pattern", f"({s})-[:{t}]->({e})")]
            for s, t, e in (p for p in patterns if p is not None)
            if t == pattern[1] and _fits(s, pattern[0]) and _fits(e, pattern[2])
        )
    return total


def _split(name: str) -> tuple[str, str, str] | None:
    """`(Start)-[:TYPE]->(End)` as its three names (a Gremlin edge label is no such pattern)."""
    found = _PATTERN.fullmatch(name)
    return (found[1], found[2], found[3]) if found else None


def _fits(a: str, b: str) -> bool:
    return a == b or not a or not b
