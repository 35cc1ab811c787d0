"""Every verdict of the guard over the corpora, one JSON line per query: the check that a
speed change changed no behaviour (same action, findings, query and forwarded text).

Corpora: CypherBench gold and Qwen3-0.6B drafts (with their graph's schema), the GPT-4-turbo
text2cypher corpus (with its database's schema), the openCypher TCK queries (no schema),
TinkerPop's feature traversals (defaults and SEGRA's similarity configuration) and Spider's
gold SQL (SQLite with schema, PostgreSQL without).

Usage: .venv/bin/python benchmarks/guard_snapshot.py OUT.jsonl
       then compare two runs with `cmp` (or `diff` to see which queries differ).
"""

from __future__ import annotations

import json
import sys
import tomllib
from collections.abc import Iterator

import sql_latency
from _common import CORPORA, ROOT, cypherbench, text2cypher

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard


def _cases() -> Iterator[tuple[str, str, str, Guard]]:
    """(corpus, text, language, guard) for every query, in a fixed order."""
    config = parse_config({})
    items, schemas = cypherbench()
    guards = {name: build_guard(config, s, entry_points=False) for name, s in schemas.items()}
    for it in items:
        yield "cypherbench", it["gold_cypher"], "cypher", guards[it["graph"]]
    drafts = json.loads((CORPORA / "cypher/predictions/cypherbench_qwen3_0.6b.json").read_text())
    for it in drafts:
        yield "qwen3 drafts", it["pred_cypher"], "cypher", guards[it["graph"]]
    rows, t2c_schemas = text2cypher()
    t2c = {n: build_guard(config, s, entry_points=False) for n, s in t2c_schemas.items()}
    for r in rows:
        if r["database"] in t2c:
            yield "text2cypher", r["cypher"], "cypher", t2c[r["database"]]
    plain = build_guard(config, entry_points=False)
    for line in (CORPORA / "cypher/opencypher_tck_queries.jsonl").open(encoding="utf-8"):
        if line.strip():
            yield "tck", json.loads(line)["text"], "cypher", plain
    segra = tomllib.loads((ROOT / "conf/segra-similarity.toml").read_text())["gremlin"]
    segra_guard = build_guard(parse_config({"gremlin": segra}), entry_points=False)
    for line in (CORPORA / "gremlin/tinkerpop_traversals.jsonl").open(encoding="utf-8"):
        if line.strip():
            text = json.loads(line)["text"]
            yield "tinkerpop", text, "gremlin", plain
            yield "tinkerpop segra", text, "gremlin", segra_guard
    pairs = sql_latency.corpus()
    for dialect, with_schema in (("sqlite", True), ("postgres", False)):
        sql_guards = sql_latency.guards(dialect, with_schema)
        for text, db in pairs:
            yield f"spider {dialect}", text, "sql", sql_guards[db]


def main(out: str) -> None:
    with open(out, "w", encoding="utf-8") as fp:
        for corpus, text, language, guard in _cases():
            guard._cache = None
            try:
                verdict = guard.check(text, language)
                result = {
                    **verdict.to_dict(),
                    "forward": verdict.forward,
                    "explain": verdict.explain,
                    "type": verdict.query_type,
                    "fixes": [repr(f.fix) for f in verdict.findings],
                }
            except Exception as exc:  # a crash is behaviour too
                result = {"crash": repr(exc)}
            fp.write(json.dumps({"corpus": corpus, "text": text, **result}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
