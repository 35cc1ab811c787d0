"""CypherBench gold queries under their own schemas: no rewrite, no SCH/DIR finding."""

from __future__ import annotations

import json
from collections import Counter

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.schema.catalog import SchemaCatalog
from tests.corpora import corpus, read_jsonl


def test_gold_queries_raise_no_schema_or_direction_alarm() -> None:
    items = read_jsonl("cypher", "cypherbench", "test_question_gold.jsonl")
    assert len(items) == 2348
    config = parse_config({"guard": {"disable": ["limits"]}})
    guards = {}
    for path in corpus("cypher", "cypherbench", "schemas").glob("*_schema.json"):
        schema = SchemaCatalog.from_cypherbench(json.loads(path.read_text()))
        guards[path.name.removesuffix("_schema.json")] = build_guard(
            config, schema, entry_points=False
        )
    alarms: Counter[str] = Counter()
    examples: list[str] = []
    for item in items:
        verdict = guards[item["graph"]].check(item["gold_cypher"])
        bad = [c for c in verdict.codes if c.startswith(("SCH.", "DIR.", "SYN."))]
        if verdict.query != item["gold_cypher"] or bad or verdict.blocked:
            alarms.update(bad or [str(verdict.action)])
            if len(examples) < 5:
                examples.append(f"{item['gold_cypher']!r} -> {verdict.codes}")
    assert not alarms, f"{sum(alarms.values())} false alarms {dict(alarms)}; e.g. {examples}"
