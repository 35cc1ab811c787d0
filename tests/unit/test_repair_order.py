"""The order experience weights give repair candidates (DESIGN §10): a stable sort by the
weight of the schema elements each candidate uses, so equal weights keep the language's own
order; a half-labelled arrow weighs the weighted patterns it fits, in its direction only."""

from __future__ import annotations

from query_guard.experience.schema_order import candidate_weight
from query_guard.repair.loop import by_weight
from query_guard.repair.model import Candidate

WEIGHTS = {
    ("pattern", "(Person)-[:ACTED_IN]->(Movie)"): 3.0,
    ("pattern", "(Person)-[:DIRECTED]->(Movie)"): 1.0,
    ("label", "Person"): 5.0,
}


def weigh(text: str) -> float:
    return candidate_weight(WEIGHTS, "cypher", text)


def candidate(text: str, source: str = "tier1") -> Candidate:
    return Candidate(text, source, "DIR.FLIPPED_ON_EMPTY", False)


def test_heaviest_first_and_ties_keep_their_order() -> None:
    a = candidate("MATCH (p:Person)<-[:ACTED_IN]-(m) RETURN m")
    b = candidate("MATCH (p)-[:ACTED_IN]->(m) RETURN m", "relaxation")
    c = candidate("MATCH (p:Person)-[:ACTED_IN]->(m) RETURN m")
    d = candidate("MATCH (p:Person)-[:ACTED_IN]->(m:Movie) RETURN m")
    assert [weigh(x.text) for x in (a, b, c, d)] == [5.0, 3.0, 8.0, 8.0]
    assert by_weight([a, b, c, d], weigh) == [c, d, a, b]
    assert by_weight([a, b, c, d], lambda _text: 0.0) == [a, b, c, d]


def test_an_unlabelled_end_fits_either_label_but_keeps_its_direction() -> None:
    assert weigh("MATCH (m)<-[:DIRECTED]-(p) RETURN p") == 1.0  # fits (Person)->(Movie)
    assert weigh("MATCH (m:Movie)-[:DIRECTED]->(p) RETURN p") == 0.0
    assert weigh("MATCH (m:Movie)<-[:DIRECTED]-(p) RETURN p") == 1.0
    assert weigh("not cypher at all (") == 0.0
    gremlin = {("pattern", "knows"): 2.0}
    assert candidate_weight(gremlin, "gremlin", "g.V().out('knows')") == 2.0
