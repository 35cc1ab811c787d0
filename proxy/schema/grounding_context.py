"""The grounding context an LLM app pastes into its draft prompt (`GET /v1/context`, MCP
`get_context`): the schema as compact text, reciprocity notes, and short preventive rules, one
per finding family, written generically so they hold for any graph."""

from __future__ import annotations

from query_guard.schema.catalog import SchemaCatalog

RULES: tuple[tuple[str, str], ...] = (
    ("DIR", "Draw every arrow the way the schema lists the relationship: "
            "(start)-[:TYPE]->(end). A reversed arrow matches nothing."),
    ("DIR", "A relationship stored in both directions must be matched with a directed arrow; "
            "an undirected pattern counts every pair twice."),
    ("SCH", "Use only the labels, relationship types and property keys listed; an invented "
            "name matches nothing."),
    ("ENT", "Copy literal values exactly as stored (case, spelling, articles); when unsure, "
            "match with toLower(x.prop) CONTAINS toLower('…')."),
    ("AGG", "Count distinct entities with count(DISTINCT x) when a pattern can reach one "
            "entity by several paths."),
    ("RET", "Return only what the question asks for, with a LIMIT when many rows may come "
            "back."),
    ("SEC", "Write read-only queries: no CREATE, MERGE, SET, DELETE, REMOVE, LOAD CSV, CALL of "
            "procedures that write or load data, and one statement per query."),
)  # fmt: skip


def context_text(schema: SchemaCatalog | None, samples: str = "", schema_part: str = "") -> str:
    """The whole grounding context as text (`samples`: `query_guard.samples.samples_text`;
    `schema_part`: the schema text to use, e.g. ordered by experience weights)."""
    parts = [schema_part or schema_text(schema)]
    notes = reciprocity_notes(schema)
    if notes:
        parts.append("Direction notes:\n" + "\n".join(f"- {n}" for n in notes))
    if samples:
        parts.append(samples)
    parts.append("Rules:\n" + "\n".join(f"- {rule}" for _, rule in RULES))
    return "\n\n".join(parts) + "\n"


def schema_text(schema: SchemaCatalog | None) -> str:
    if schema is None:
        return "Schema: not known yet (the proxy has not discovered it)."
    data = schema.to_dict()
    lines = ["Node labels and their properties:"]
    for label, props in sorted(data.get("nodes", {}).items()):
        lines.append(f"- {label}: {', '.join(sorted(props)) or '(no properties)'}")
    lines.append("Relationships (start)-[:TYPE]->(end):")
    for rel in data.get("relationships", []):
        props = rel.get("properties") or []
        extra = f" {{{', '.join(props)}}}" if props else ""
        lines.append(f"- (:{rel['start']})-[:{rel['type']}{extra}]->(:{rel['end']})")
    return "\n".join(lines)


def reciprocity_notes(schema: SchemaCatalog | None) -> list[str]:
    if schema is None:
        return []
    notes = []
    for rel in schema.to_dict().get("relationships", []):
        if rel["start"] == rel["end"] and schema.is_reciprocal(rel["type"], rel["start"]):
            notes.append(
                f"{rel['type']} between {rel['start']} nodes is stored in both directions: "
                "match it directed, (a)-[:{0}]->(b), or every pair counts twice.".format(
                    rel["type"]
                )
            )
    return notes
