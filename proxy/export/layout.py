"""What the exported files hold, without I/O: file names, one line per node or relationship,
`[export]` redaction, the redacted schema and the README written for agents."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from query_guard.frontends.json_values import to_json

_SAFE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
EDGE_HEADER = "start\tend\tproperties\n"


def file_stem(name: str) -> str:
    """A label or type as a file name: itself when plain, else percent-encoded."""
    return name if _SAFE.match(name) and name not in (".", "..") else quote(name, safe="")


@dataclass(frozen=True, slots=True)
class Redaction:
    """`[export] exclude_labels` (node labels and relationship types) and
    `exclude_properties` (`name` everywhere, `Label.name` on one label or type)."""

    labels: frozenset[str] = frozenset()
    properties: frozenset[str] = frozenset()

    @classmethod
    def of(cls, table: Mapping[str, Any]) -> Redaction:
        return cls(frozenset(table["exclude_labels"]), frozenset(table["exclude_properties"]))

    def hides(self, labels: Iterable[str]) -> bool:
        """A node with any of these labels (a relationship of this type) is left out."""
        return any(label in self.labels for label in labels)

    def keep(self, owners: Sequence[str], properties: Mapping[str, Any]) -> dict[str, Any]:
        """`properties` without the excluded ones (`owners`: the node's labels or the type)."""
        return {
            k: to_json(v)
            for k, v in properties.items()
            if k not in self.properties and not any(f"{o}.{k}" in self.properties for o in owners)
        }


def node_line(ident: Any, labels: Sequence[str], properties: Mapping[str, Any]) -> str:
    row = {"id": to_json(ident), "labels": list(labels), "properties": dict(properties)}
    return json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"


def edge_line(start: Any, end: Any, properties: Mapping[str, Any]) -> str:
    props = json.dumps(dict(properties), ensure_ascii=False, sort_keys=True)
    return f"{_id_text(start)}\t{_id_text(end)}\t{props}\n"


def _id_text(ident: Any) -> str:
    """An id as the TSV holds it: the node file's `id` value as text (no tabs or breaks)."""
    text = ident if isinstance(ident, str) else json.dumps(to_json(ident))
    return text.replace("\t", "\\t").replace("\n", "\\n")


def redact_schema(schema: Mapping[str, Any], redaction: Redaction) -> dict[str, Any]:
    """The catalog's JSON (DESIGN §3) without excluded labels, types and properties."""
    out = dict(schema)

    def props(owner: str, keys: Iterable[str]) -> list[str]:
        return sorted(redaction.keep([owner], dict.fromkeys(keys)))

    out["nodes"] = {
        label: props(label, keys)
        for label, keys in schema.get("nodes", {}).items()
        if not redaction.hides([label])
    }
    rels = []
    for rel in schema.get("relationships", []):
        if redaction.hides([rel["start"], rel["type"], rel["end"]]):
            continue
        rels.append({**rel, "properties": props(rel["type"], rel.get("properties", []))})
    out["relationships"] = rels
    for key in ("property_types", "counts"):
        if isinstance(schema.get(key), dict):
            out[key] = {
                part: {
                    name: {k: v for k, v in value.items() if k in props(name, value)}
                    if isinstance(value, dict) else value
                    for name, value in table.items()
                    if not redaction.hides([name])
                }
                for part, table in schema[key].items()
            }  # fmt: skip
    for key in ("indexes", "constraints"):  # rows that name an excluded label or property
        if key in schema:
            out[key] = [row for row in schema[key] if not _names_hidden(row, redaction)]
    return out


def _names_hidden(row: Any, redaction: Redaction) -> bool:
    text = json.dumps(row, default=str)
    hidden = redaction.labels | {p.rsplit(".", 1)[-1] for p in redaction.properties}
    return any(json.dumps(name) in text for name in hidden)


def readme(
    database: str, nodes: Mapping[str, int], edges: Mapping[str, int], redaction: Redaction
) -> str:
    """README.md of one exported graph: the layout, counts per file, how to join."""
    label = file_stem(min(nodes, default="Label"))
    rel = file_stem(min(edges, default="TYPE"))
    lines = [
        f"# Graph `{database}` as files",
        "",
        "Written by `query-guard export`. Every node and relationship of the graph, one file per",
        "node label and per relationship type:",
        "",
        "- `nodes/<Label>.jsonl`: one JSON object per line, `{\"id\", \"labels\", "
        "\"properties\"}`.",
        "  A node with several labels is in the file of each (same `id`).",
        "- `edges/<TYPE>.tsv`: a header line `start<TAB>end<TAB>properties`, then one line per",
        "  relationship: the start node's id, the end node's id (the `id` of a node line, as",
        "  text), and the relationship's properties as one JSON object.",
        "- `schema.json`: labels with their properties, `(start)-[:TYPE]->(end)` patterns with",
        "  their direction, property types and counts (query-guard's schema catalog).",
        "",
        "To join: read the node files into a map from `id` to node; each TSV line is the",
        "relationship `(start)-[:TYPE]->(end)` between two of them. With jq and awk,",
        f"the `{label}` nodes with the most `{rel}` relationships (either end):",
        "",
        "```sh",
        f"jq -r '[.id, (.properties | tojson)] | @tsv' nodes/{label}.jsonl > ids.tsv",
        "awk -F'\\t' 'NR==FNR {node[$1]=$2; next}",
        "    FNR>1 {if ($1 in node) print node[$1]; if ($2 in node) print node[$2]}' \\",
        f"    ids.tsv edges/{rel}.tsv | sort | uniq -c | sort -rn | head",
        "```",
        "",
        "| file | rows |",
        "|---|---|",
        *(f"| `nodes/{file_stem(k)}.jsonl` | {n} |" for k, n in sorted(nodes.items())),
        *(f"| `edges/{file_stem(k)}.tsv` | {n} |" for k, n in sorted(edges.items())),
        "",
    ]
    renamed = {k for k in (*nodes, *edges) if file_stem(k) != k}
    if renamed:
        lines += ["File names percent-encode labels and types that are not plain: "
                  + ", ".join(f"`{file_stem(k)}` = `{k}`" for k in sorted(renamed)), ""]
    if redaction.labels or redaction.properties:
        lines += [
            "Left out by the operator (`[export]`): "
            + ", ".join(f"`{x}`" for x in sorted(redaction.labels | redaction.properties))
            + "; a relationship to or from a left-out node is left out too.",
            "",
        ]
    return "\n".join(lines)
