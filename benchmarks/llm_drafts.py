"""Real LLM drafts (Qwen3-0.6B on the CypherBench test questions) through the static rules:
how many parse, findings per code, and how many drafts the rules turn into the gold query
(whitespace-normalised text equality — a lower bound on execution accuracy, since the graphs
themselves are not available offline). This is the baseline the repair loop will raise."""

from __future__ import annotations

import json
import re
from collections import Counter

from _common import CORPORA, cypherbench, table

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.model import Action


def _norm(query: str) -> str:
    return re.sub(r"\s+", " ", query).strip().rstrip(";").strip()


def main() -> str:
    drafts = json.loads(
        (CORPORA / "cypher" / "predictions" / "cypherbench_qwen3_0.6b.json").read_text()
    )
    _, schemas = cypherbench()
    config = parse_config({"guard": {"disable": ["limits"]}})  # gold queries carry no LIMIT
    guards = {name: build_guard(config, s, entry_points=False) for name, s in schemas.items()}
    codes: Counter[str] = Counter()
    actions: Counter[str] = Counter()
    equal_before = equal_after = parsed = changed = 0
    gained: list[str] = []
    for item in drafts:
        draft = item["pred_cypher"] or ""  # a few drafts are null: the model gave nothing
        verdict = guards[item["graph"]].check(draft)
        actions[str(verdict.action)] += 1
        codes.update(verdict.codes)
        parsed += "SYN.PARSE" not in verdict.codes
        changed += verdict.action is Action.REWRITE
        before = _norm(draft) == _norm(item["gold_cypher"])
        after = _norm(verdict.query) == _norm(item["gold_cypher"])
        equal_before += before
        equal_after += after
        if after and not before and len(gained) < 3:
            gained.append(f"`{draft}` → `{verdict.query}`")
    n = len(drafts)
    return "\n".join(
        [
            "## Real LLM drafts: Qwen3-0.6B on CypherBench (static rules, limits off)",
            "",
            table(
                ["drafts", "parse", "rewritten", "blocked", "= gold before", "= gold after"],
                [
                    [
                        n,
                        f"{parsed} ({parsed / n:.1%})",
                        changed,
                        actions["block"],
                        equal_before,
                        equal_after,
                    ]
                ],
            ),
            "",
            "Findings per code:",
            "",
            table(["code", "count"], [[c, k] for c, k in codes.most_common()]),
            "",
            "Drafts the rules made equal to gold, e.g.:",
            "",
            *[f"- {g}" for g in gained],
        ]
    )


if __name__ == "__main__":
    print(main())
