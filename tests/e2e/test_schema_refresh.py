"""A running guard picks up a changed schema (and forgets verdicts made with the old one)."""

from __future__ import annotations

import asyncio
from typing import Any

from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.refresh import SchemaRefresher

OLD = {"nodes": {"Person": ["name"], "Company": ["name"]},
       "relationships": [{"start": "Person", "type": "WORKS_AT", "end": "Company"}]}  # fmt: skip
NEW = {"nodes": {"Person": ["name"], "Company": ["name"]},
       "relationships": [{"start": "Company", "type": "WORKS_AT", "end": "Person"}]}  # fmt: skip
QUERY = "MATCH (p:Person)-[:WORKS_AT]->(c:Company) RETURN c.name LIMIT 5"


def test_refresh_swaps_a_changed_schema_and_clears_the_cache() -> None:
    guard = build_guard(parse_config({}), SchemaCatalog.from_dict(OLD), entry_points=False)
    assert guard.check(QUERY).query == QUERY  # fits the old schema
    answers: list[dict[str, Any]] = [OLD, NEW]

    async def discover() -> dict[str, Any]:
        return answers.pop(0)

    refresher = SchemaRefresher(guard, discover, ttl_seconds=60, reciprocity_threshold=0.9)
    assert asyncio.run(refresher.refresh()) is False  # unchanged: nothing swapped
    assert asyncio.run(refresher.refresh()) is True
    assert "<-[:WORKS_AT]-" in guard.check(QUERY).query  # the new direction applies at once


def test_background_task_keeps_the_schema_when_discovery_fails() -> None:
    guard = build_guard(parse_config({}), SchemaCatalog.from_dict(OLD), entry_points=False)
    calls = 0

    async def discover() -> dict[str, Any]:
        nonlocal calls
        calls += 1
        raise ConnectionError("database down")

    async def run() -> None:
        refresher = SchemaRefresher(guard, discover, ttl_seconds=0.01, reciprocity_threshold=0.9)
        refresher.start()
        while calls < 3:
            await asyncio.sleep(0.01)
        await refresher.close()

    asyncio.run(run())
    assert guard.ctx.schema is not None and guard.ctx.schema.fits({"Person"}, "WORKS_AT", None)


def test_warm_up_builds_every_parser() -> None:
    guard = build_guard(parse_config({}), entry_points=False)
    guard.warm_up()  # raises if a language's sample does not parse
    assert {"cypher", "gremlin"} <= set(guard.languages)


def test_the_repair_loop_sees_a_refreshed_schema() -> None:
    """A schema refresh (`Guard.use_schema`) reaches the repair loop, which decides its arrow
    flips from the schema: the loop must not keep the one it was built with."""
    from query_guard.build import build_guard
    from query_guard.config.load import parse_config
    from query_guard.repair.candidates import flip_candidates
    from query_guard.repair.repairer import build_repairer
    from query_guard.schema.catalog import SchemaCatalog

    old = SchemaCatalog.from_triples("(Person, KNOWS, Person)")
    new = SchemaCatalog.from_triples("(Person, ACTED_IN, Movie)")
    guard = build_guard(parse_config({}), old, entry_points=False)
    repairer = build_repairer(guard, parse_config({}))
    assert repairer is not None and repairer.ctx.schema is old
    guard.use_schema(new)
    assert repairer.ctx.schema is new
    query = repairer.parse("MATCH (m:Movie)-[:ACTED_IN]->(p:Person) RETURN p")
    flips = flip_candidates(query, repairer.ctx.schema, 3)
    assert flips and flips[0].safe  # the new schema declares ACTED_IN one way only
