"""Schema catalog: the three file formats and the lookups the rules rely on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from query_guard.errors import SchemaFormatError
from query_guard.schema.catalog import SchemaCatalog
from tests.corpora import corpus


def test_triples() -> None:
    s = SchemaCatalog.from_triples("(Person, WORKS_AT, Organization), (:Person, `KNOWS`, Person)")
    assert s.labels == {"Person", "Organization"}
    assert s.relationship_types == {"WORKS_AT", "KNOWS"}
    assert s.fits({"Person"}, "WORKS_AT", {"Organization"})
    assert not s.fits({"Organization"}, "WORKS_AT", {"Person"})
    assert s.fits(None, "WORKS_AT", {"Organization"})
    assert s.types_between({"Organization"}, {"Person"}) == ["WORKS_AT"]
    with pytest.raises(SchemaFormatError):
        SchemaCatalog.from_triples("Person works at Organization")


def test_json_round_trip_and_reciprocity(tmp_path: Path) -> None:
    data = {
        "nodes": {"Person": ["name"]},
        "relationships": [
            {"start": "Person", "type": "KNOWS", "end": "Person", "reciprocity": 0.95},
            {"start": "Person", "type": "FOLLOWS", "end": "Person", "reciprocity": 0.2},
        ],
    }
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(data))
    s = SchemaCatalog.load(path)
    assert s.is_reciprocal("KNOWS", "Person") and not s.is_reciprocal("FOLLOWS")
    assert SchemaCatalog.from_dict(s.to_dict()).to_dict() == s.to_dict()
    strict = SchemaCatalog.load(path, reciprocity_threshold=0.99)
    assert not strict.is_reciprocal("KNOWS")


def test_malformed_json_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"nodes": {}, "relationships": [{"type": "X"}]}')
    with pytest.raises(SchemaFormatError, match=r"relationships\[0\]"):
        SchemaCatalog.load(path)
    path.write_text("{nope")
    with pytest.raises(SchemaFormatError, match="invalid JSON"):
        SchemaCatalog.load(path)


def test_cypherbench_schemas_all_load_with_name_on_every_entity() -> None:
    paths = sorted(corpus("cypher", "cypherbench", "schemas").glob("*.json"))
    assert len(paths) == 7
    for path in paths:
        s = SchemaCatalog.load(path)
        assert s.relationship_types
        assert all("name" in props for props in s.nodes.values()), path.name
    movie = SchemaCatalog.load(corpus("cypher", "cypherbench", "schemas", "movie_schema.json"))
    assert movie.fits({"Movie"}, "directedBy", {"Person"})
    assert "character_role" in movie.relationship_properties("hasCastMember")


def test_text2cypher_structured_schemas_load() -> None:
    import ast as pyast

    from tests.corpora import read_csv

    rows = read_csv("cypher", "text2cypher", "text2cypher_schemas.csv")
    assert len(rows) == 15
    catalogs = {
        r["database"]: SchemaCatalog.from_structured_schema(
            pyast.literal_eval(r["structured_schema"])
        )
        for r in rows
    }
    rec = catalogs["recommendations"]
    assert rec.fits({"User"}, "RATED", {"Movie"})
    assert "rating" in rec.relationship_properties("RATED")
    assert "title" in rec.node_properties("Movie")
