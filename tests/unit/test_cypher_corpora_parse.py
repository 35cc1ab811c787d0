"""The parser against real corpora: the openCypher TCK, CypherBench gold, text2cypher output.

Acceptance: >= 98% of TCK texts that do not expect an error (queries and setup scripts),
100% of CypherBench gold queries, >= 97% of GPT-4-turbo text2cypher generations not flagged
as syntax errors. The corpora live in ../shared/corpora relative to the project root.
"""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import given, settings
from hypothesis import strategies as st

from query_guard.cypher.parser import CypherSyntaxError, parse
from query_guard.model import apply_edits
from query_guard.rules import fences
from query_guard.schema.context import GuardContext
from tests.budget import examples
from tests.corpora import read_csv, read_jsonl

_CYPHERBENCH = ("cypher", "cypherbench", "test_question_gold.jsonl")


def _parse_rate(queries: Iterable[str]) -> tuple[float, int, list[tuple[str, str]]]:
    total, failures = 0, []
    for query in queries:
        total += 1
        try:
            parse(query)
        except CypherSyntaxError as err:
            failures.append((query, err.message))
    return (total - len(failures)) / total, total, failures


def _report(name: str, rate: float, total: int, failures: list[tuple[str, str]]) -> None:
    print(f"\n{name}: {rate:.2%} of {total} parse ({len(failures)} failures)")
    for query, message in failures[:5]:
        print(f"  {message}\n    {query[:200]!r}")


def strip_fences(text: str) -> str:
    """The text the guard parses: the product's own fence rule (`plugins/fences`) applied."""
    findings = fences.guard_text(text, "cypher", GuardContext())
    return apply_edits(text, [e for f in findings for e in f.fix or ()])


def test_opencypher_tck() -> None:
    items = read_jsonl("cypher", "opencypher_tck_queries.jsonl")
    texts = [i["text"] for i in items if (i.get("expect") or {}).get("outcome") != "error"]
    rate, total, failures = _parse_rate(texts)
    _report("openCypher TCK (queries + setup, outcome != error)", rate, total, failures)
    assert total > 4000
    assert rate >= 0.98


def test_cypherbench_gold() -> None:
    queries = [
        i["gold_cypher"] for i in read_jsonl("cypher", "cypherbench", "test_question_gold.jsonl")
    ]
    rate, total, failures = _parse_rate(queries)
    _report("CypherBench gold", rate, total, failures)
    assert total > 2000
    assert rate == 1.0, failures[:3]


def test_text2cypher_gpt4turbo() -> None:
    rows = read_csv("cypher", "text2cypher", "text2cypher_gpt4turbo.csv")
    rows = [r for r in rows if r["syntax_error"].strip().lower() != "true"]
    fenced = sum("```" in r["cypher"] for r in rows)
    print(f"\ntext2cypher: {fenced} generations carry markdown fences (stripped before parsing)")
    rate, total, failures = _parse_rate(strip_fences(r["cypher"]) for r in rows)
    _report("text2cypher GPT-4-turbo (syntax_error != True)", rate, total, failures)
    assert total > 9000
    assert rate >= 0.97


def test_strip_fences() -> None:
    assert strip_fences("```cypher\nMATCH (n) RETURN n\n```") == "MATCH (n) RETURN n"
    assert strip_fences("Here it is:\n```\nMATCH (n) RETURN n\n```\nDone.") == (
        "MATCH (n) RETURN n"
    )
    assert strip_fences("MATCH (n) RETURN n") == "MATCH (n) RETURN n"


def _sample_queries() -> list[str]:
    return [i["gold_cypher"] for i in read_jsonl(*_CYPHERBENCH)][:200]


@settings(max_examples=examples(300))
@given(st.data())
def test_mutated_corpus_queries_raise_only_syntax_errors(data: st.DataObject) -> None:
    query = data.draw(st.sampled_from(_sample_queries()))
    ops = data.draw(
        st.lists(
            st.tuples(
                st.sampled_from(["delete", "insert", "swap"]),
                st.integers(min_value=0, max_value=max(len(query) - 1, 0)),
                st.text(alphabet="()[]{}<>-:|,.;*'\"` aX1$", min_size=1, max_size=3),
            ),
            min_size=1,
            max_size=4,
        )
    )
    for op, pos, chunk in ops:
        pos = min(pos, len(query))
        if op == "delete":
            query = query[:pos] + query[pos + len(chunk) :]
        elif op == "insert":
            query = query[:pos] + chunk + query[pos:]
        else:
            query = query[:pos] + chunk + query[pos + len(chunk) :]
    try:
        script = parse(query)
    except CypherSyntaxError:
        return
    for node in script.walk():
        assert 0 <= node.span[0] <= node.span[1] <= len(query)
