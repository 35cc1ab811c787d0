"""Streaming a `Source` into files: one page in memory at a time, written as it arrives."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from query_guard.export.layout import (
    EDGE_HEADER,
    Redaction,
    edge_line,
    file_stem,
    node_line,
    readme,
    redact_schema,
)
from query_guard.export.sources import Source
from query_guard.schema.discovery import write_schema_json


@dataclass
class Written:
    """Rows written per label (node files) and per type (edge files)."""

    nodes: dict[str, int] = field(default_factory=dict)
    edges: dict[str, int] = field(default_factory=dict)


async def export_graph(source: Source, out: Path, name: str, redaction: Redaction) -> Written:
    """`out/nodes/*.jsonl`, `out/edges/*.tsv`, `out/schema.json`, `out/README.md`."""
    written = Written()
    (out / "nodes").mkdir(parents=True, exist_ok=True)
    (out / "edges").mkdir(parents=True, exist_ok=True)
    for label in await source.labels():
        if redaction.hides([label]):
            continue
        count = 0
        with open(out / "nodes" / f"{file_stem(label)}.jsonl", "w", encoding="utf-8") as fp:
            async for page in source.nodes(label):
                for ident, labels, props in page:
                    if not redaction.hides(labels):
                        fp.write(node_line(ident, labels, redaction.keep(labels, props)))
                        count += 1
        written.nodes[label] = count
    for rel_type in await source.types():
        if redaction.hides([rel_type]):
            continue
        count = 0
        with open(out / "edges" / f"{file_stem(rel_type)}.tsv", "w", encoding="utf-8") as fp:
            fp.write(EDGE_HEADER)
            async for page in source.edges(rel_type):
                for start, end, ends, props in page:
                    if not redaction.hides(ends):
                        fp.write(edge_line(start, end, redaction.keep([rel_type], props)))
                        count += 1
        written.edges[rel_type] = count
    schema = redact_schema(await source.schema(), redaction)
    with open(out / "schema.json", "w", encoding="utf-8") as fp:
        write_schema_json(schema, fp)
    text = readme(name, written.nodes, written.edges, redaction)
    (out / "README.md").write_text(text, encoding="utf-8")
    return written


def index(out: Path, parts: dict[str, Written]) -> None:
    """README.md above several exported graphs (`[backend] databases`): one folder each."""
    lines = ["# Graphs as files", "", "Written by `query-guard export`; one folder per graph,",
             "each with its own README.md, nodes/, edges/ and schema.json:", ""]  # fmt: skip
    for name, written in parts.items():
        lines.append(f"- `{file_stem(name)}/`: {sum(written.nodes.values())} node lines, "
                     f"{sum(written.edges.values())} relationships")  # fmt: skip
    (out / "README.md").write_text("\n".join([*lines, ""]), encoding="utf-8")
