"""TinkerPop's feature suite through the Gremlin front: the read-only scenarios on modern, crew,
sink and grateful run with the real gremlinpython client (bytecode where the text translates,
else the script) against `query-guard serve` on the embedded graphersal (each graph a traversal
source of one front), and on graphersal in-process; results compared as each feature says
(tests/gherkin.py). Prints a markdown section.

Usage: .venv/bin/python benchmarks/tinkerpop_front.py [--write] [--baseline]
  --write     replace this section in benchmarks/RESULTS.md (below `<!-- other benchmarks -->`)
  --baseline  record the passing scenario ids in tests/data/tinkerpop_front_baseline.json
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import time
from collections import Counter
from typing import Any

from _common import CORPORA, ROOT, table, write_section
from gremlin_python.driver.serializer import GraphSONSerializersV3d0

from tests.tinkerpop_suite import Outcome, exclusion, run_in_process, run_suite

HEADING = "## TinkerPop feature suite through the Gremlin front"
BASELINE = ROOT / "tests" / "data" / "tinkerpop_front_baseline.json"


def category(o: Outcome) -> str:
    """Why a scenario failed, in words a reader can group by."""
    d = o.detail
    if "query blocked by query-guard" in d:
        code = re.search(r"\b([A-Z]+\.[A-Z_]+) error", d)
        return f"refused by the guard ({code.group(1) if code else 'blocked'})"
    if "GTypeTokens" in d:
        return "graphersal: GType token not supported"
    step = re.search(r"Step #\d+ '([a-zA-Z_]+)\(", d)
    if step:
        return f"graphersal: {step.group(1)}() failed"
    if d.startswith("error:"):
        return "graphersal error: " + re.sub(r"\d+", "N", d[7:70].split("\n")[0])
    if d.startswith("unsupported expectation"):
        return "tree()/subgraph() results (not compared by the harness)"
    return f"result differs ({o.id.split('/', 1)[0]})"


def lost(front: list[Outcome], in_process: list[Outcome]) -> list[str]:
    """Scenarios that pass on graphersal in-process and fail through the front."""
    return sorted({o.id for o in in_process if o.passed} - {o.id for o in front if o.passed})


def render(
    outcomes: list[Outcome],
    graphson: list[Outcome],
    in_process: list[Outcome],
    excluded: Counter[str],
    seconds: float,
) -> str:
    passed = sum(o.passed for o in outcomes)
    passed_gs = sum(o.passed for o in graphson)
    differ = sorted({o.id for o in outcomes if o.passed} ^ {o.id for o in graphson if o.passed})
    total = len(outcomes)
    per_graph = Counter(o.graph for o in outcomes)
    graph_rows = [
        [g, n, sum(o.passed for o in outcomes if o.graph == g)] for g, n in per_graph.items()
    ]
    via = Counter(o.via for o in outcomes)
    failing = Counter(category(o) for o in outcomes if not o.passed)
    fail_rows = [[c, n] for c, n in failing.most_common()]
    excl = ", ".join(f"{reason} {n}" for reason, n in excluded.most_common())
    return (
        f"{HEADING}\n\n"
        f"{total} read-only scenarios of TinkerPop 3.8's feature tests (corpora/gremlin; left "
        f"out: {excl}) through `query-guard serve` (`[server] gremlin`, embedded graphersal, "
        "`default_limit = 0`, full scans allowed; the four graphs are traversal sources of one "
        "front) with gremlinpython's Client, GraphBinary: "
        f"{via['bytecode']} sent as bytecode, {via['script']} as scripts. "
        f"**{passed}/{total} pass ({100 * passed / total:.1f} %)** in {seconds:.0f} s. "
        f"The same run with GraphSON 3: {passed_gs}/{len(graphson)} pass"
        + (
            f"; {len(differ)} scenarios differ between the two serializers"
            if differ
            else ", the same scenarios"
        )
        + f". On graphersal in-process (no guard, no wire) {sum(o.passed for o in in_process)}"
        f"/{len(in_process)} pass; of those, {len(lost(outcomes, in_process))} fail through "
        f"the front with GraphBinary and {len(lost(graphson, in_process))} with GraphSON.\n\n"
        + table(["graph", "scenarios", "pass"], graph_rows)
        + "\n\nFailures by cause:\n\n"
        + table(["cause", "scenarios"], fail_rows)
        + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--baseline", action="store_true")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # gremlinpython logs every expected error reply
    path = CORPORA / "gremlin" / "tinkerpop_traversals.jsonl"
    rows: list[dict[str, Any]] = [json.loads(x) for x in path.open() if x.strip()]
    excluded = Counter(r for r in map(exclusion, rows) if r is not None)
    graphs = CORPORA / "gremlin" / "graphs"
    started = time.perf_counter()
    outcomes = run_suite(rows, graphs)
    seconds = time.perf_counter() - started
    graphson = run_suite(rows, graphs, GraphSONSerializersV3d0)
    in_process = run_in_process(rows, graphs)
    text = render(outcomes, graphson, in_process, excluded, seconds)
    print(text)
    if args.write:
        write_section(HEADING, text)
    if args.baseline:
        baseline = {
            "in_suite": len(outcomes),
            "passing": sorted(o.id for o in outcomes if o.passed),
            "failing": {
                o.id: category(o) for o in sorted(outcomes, key=lambda o: o.id) if not o.passed
            },
        }
        BASELINE.write_text(json.dumps(baseline, indent=1) + "\n")


if __name__ == "__main__":
    main()
