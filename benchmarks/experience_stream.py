"""The experience library as a stream (issue 22's acceptance benchmark): the movie-graph part
of neo4j-labs' text2cypher corpus (GPT-4-turbo questions with the Cypher it wrote; not gold:
some fail, some return nothing) goes, in a fixed shuffled order, through a `query-guard serve`
on the embedded FalkorDB with the movie graph, over its HTTP front. For each question the
client first asks `GET /v1/context?question=…&examples=5` — before its query ever ran — and
then runs the query with its question (`POST /v1/query`), as an LLM app would.

Measured:
- among the questions whose query template (the judged query with literals as slots) was
  verified earlier in the stream — some earlier run with that template became an example —
  the share whose 5 examples hold one with the same template (and at rank 1);
- examples from a run that was blocked, failed or came back empty: every example served must
  be the (question, query) of an earlier run that answered with rows (must be 0);
- `/v1/context` latency as the client sees it, p50 / p99.

Which runs became examples is read from the library at the end (`query-guard experience
export`); templates are computed with the proxy's own `template_of` on the text that ran
(`queryGuard`'s `query`). Usage: .venv/bin/python benchmarks/experience_stream.py [--write]
[--seed N] [--limit N] [--embeddings] (--write: RESULTS.md)."""

from __future__ import annotations

import argparse
import csv
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import CORPORA, ROOT, percentile, table, write_section  # noqa: E402
from _serve import Proxy  # noqa: E402

from query_guard.experience.templates import template_of  # noqa: E402

SECTION = "## Experience library: streaming text2cypher movie questions"
CORPUS = CORPORA / "cypher" / "text2cypher" / "text2cypher_gpt4turbo.csv"
K = 5
SEED = 22


@dataclass
class Run:
    """One question of the stream, as the client saw it."""

    question: str
    status: int = 0
    rows: int = 0
    ran: str = ""
    template: str = ""
    served: list[dict[str, Any]] = field(default_factory=list)
    context_ms: float = 0.0
    query_ms: float = 0.0

    @property
    def answered(self) -> bool:
        """200 with rows (the client's view of "not blocked, not failed, not empty")."""
        return self.status == 200 and self.rows > 0


class Client:
    """One keep-alive HTTP connection to the proxy."""

    def __init__(self, address: str) -> None:
        host, port = address.rsplit(":", 1)
        self.conn = http.client.HTTPConnection(host, int(port), timeout=60)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data else {}
        self.conn.request(method, path, body=data, headers=headers)
        response = self.conn.getresponse()
        raw = response.read()
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, raw.decode()


def movie_items(seed: int) -> list[dict[str, str]]:
    csv.field_size_limit(1 << 24)
    with CORPUS.open(newline="") as fp:
        items = [r for r in csv.DictReader(fp) if r["database"] == "movies"]
    random.Random(seed).shuffle(items)
    return items


def stream(address: str, items: list[dict[str, str]]) -> list[Run]:
    client = Client(address)
    runs = []
    for item in items:
        run = Run(item["question"])
        path = "/v1/context?" + urllib.parse.urlencode({"question": run.question, "examples": K})
        started = time.perf_counter()
        status, context = client.call("GET", path)
        run.context_ms = (time.perf_counter() - started) * 1000
        assert status == 200, context
        run.served = context["examples"]
        started = time.perf_counter()
        body = {"query": item["cypher"], "question": run.question}
        run.status, answer = client.call("POST", "/v1/query", body)
        run.query_ms = (time.perf_counter() - started) * 1000
        if run.status == 200:
            run.rows = len(answer["rows"]) if not _blank(answer["rows"]) else 0
        run.ran = answer.get("query") or answer.get("queryGuard", {}).get("forward") or ""
        try:
            run.template = template_of("cypher", run.ran).text if run.ran else ""
        except Exception:  # the text that ran always parses; a blocked one may not
            run.template = ""
        runs.append(run)
    return runs


def _blank(rows: list[list[Any]]) -> bool:
    """DESIGN §6's empty: no rows, or one row of 0 / null / empty lists."""
    return not rows or (len(rows) == 1 and all(v in (0, None, [], "") for v in rows[0]))


def library(config: Path) -> list[dict[str, Any]]:
    out = subprocess.run(
        [sys.executable, "-m", "query_guard", "experience", "--config", str(config), "export"],
        check=True, capture_output=True, text=True, cwd=ROOT,
    ).stdout  # fmt: skip
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def measure(runs: list[Run], examples: list[dict[str, Any]]) -> dict[str, Any]:
    learnt = {(e["question"], e["template"]) for e in examples}
    answered = {(r.question, r.ran) for r in runs if r.answered}
    verified: set[str] = set()  # templates verified so far in the stream
    eligible = top5 = top1 = bad = served = 0
    for run in runs:
        for example in run.served:
            served += 1
            bad += (example["question"], example["query"]) not in answered
        if run.template and run.template in verified:
            eligible += 1
            templates = [e["template"] for e in run.served]
            top5 += run.template in templates[:K]
            top1 += templates[:1] == [run.template]
        if run.answered and (run.question, run.template) in learnt:
            verified.add(run.template)
    return {
        "questions": len(runs), "answered": sum(r.answered for r in runs),
        "examples": len(examples), "templates": len({e["template"] for e in examples}),
        "eligible": eligible, "top5": top5, "top1": top1, "served": served, "bad": bad,
        "context": [r.context_ms for r in runs], "query": [r.query_ms for r in runs],
    }  # fmt: skip


def report(m: dict[str, Any], seed: int, load: tuple[float, float]) -> str:
    share5 = m["top5"] / m["eligible"] if m["eligible"] else float("nan")
    share1 = m["top1"] / m["eligible"] if m["eligible"] else float("nan")
    p50, p99 = percentile(m["context"], 50), percentile(m["context"], 99)
    rows = [
        ["questions streamed", m["questions"], ""],
        ["answered with rows (client's view)", m["answered"], ""],
        ["examples in the library at the end", m["examples"], f"{m['templates']} templates"],
        ["questions whose template was verified earlier", m["eligible"], ""],
        ["… same-template example in the top 5", f"{m['top5']} ({share5:.1%})", "≥ 80 %"],
        ["… same-template example at rank 1", f"{m['top1']} ({share1:.1%})", ""],
        ["examples served / from a blocked, failed or empty run", f"{m['served']} / {m['bad']}",
         "0"],
        ["`/v1/context` p50 / p99 (ms)", f"{p50:.1f} / {p99:.1f}", "p50 ≤ 50"],
        ["`/v1/query` p50 (ms), for scale", f"{percentile(m['query'], 50):.1f}", ""],
    ]  # fmt: skip
    verdict = "holds" if share5 >= 0.8 and m["bad"] == 0 and p50 <= 50 else "does NOT hold"
    return "\n".join([
        SECTION, "",
        f"`benchmarks/experience_stream.py`, {time.strftime('%Y-%m-%d')}, seed {seed}, "
        "ranking BM25 (question shapes) x sqrt(weight), no embeddings; "
        f"load average {load[0]:.1f} before, {load[1]:.1f} after "
        f"({os.cpu_count()} cores). The {m['questions']} movie-graph questions of neo4j-labs' "
        "text2cypher GPT-4-turbo generations, in a fixed shuffled order, through `serve`'s "
        "HTTP front on the embedded FalkorDB: context (5 examples) first, then the query "
        "with its question.", "",
        table(["measure", "value", "target"], rows), "",
        f"The acceptance target {verdict}. Most questions of the corpus are one of a kind: "
        "only those whose template had been verified earlier in the stream can be helped, and "
        "those are what the share counts. Templates must match exactly, and GPT-4's queries "
        "for one meaning often differ (`=` against `CONTAINS`, a `LIMIT` or not), so the share "
        "is a strict one; it moves with the order of the stream (77-84 % over seven orders "
        "replayed against the same library during development), so the margin over 80 % is "
        "small. Retrieval reads the question only: the index holds each example's question "
        "*shape* (quoted values, names and numbers as slots) with its query's schema names "
        "and words for its operations, and the search leaves out request and function words. "
        "An example is only ever a run that answered with rows, checked against what the "
        "client itself saw (the row of zeros); the context latency is one keep-alive HTTP "
        "round trip including the schema text, on a loaded 2-core machine.",
    ])  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--limit", type=int, default=0, help="stream only the first N")
    args = parser.parse_args()
    items = movie_items(args.seed)
    items = items[: args.limit] if args.limit else items
    before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="qg-experience-") as tmp:
        where = Path(tmp)
        proxy = Proxy(where, {}, {}, server={"http": "127.0.0.1:0"}, listener="http")
        try:
            runs = stream(proxy.address, items)
        finally:
            proxy.stop()
        examples = library(where / "bench.toml")
    text = report(measure(runs, examples), args.seed, (before, os.getloadavg()[0]))
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
