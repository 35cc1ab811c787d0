"""`query-guard export --out DIR` as an operator and an agent see it: the embedded FalkorDB's
movie graph written as files whose counts equal the database's (counted with the reference
FalkorDB client), files that parse and join, `[export]` redaction, a Bolt server (ArcadeDB),
the embedded Gremlin graph, and a generated graph of 200k relationships exported in bounded
memory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import redis
from falkordb import FalkorDB

from query_guard.backends.embedded import EmbeddedFalkorDB
from query_guard.cli.main import main
from tests.conftest import graph_url
from tests.corpora import ROOT


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "qg.toml"
    path.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n{extra}', encoding="utf-8")
    return path


def read_export(out: Path) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[list[Any]]]]:
    """Every node file and edge file, parsed (each line must parse)."""
    nodes = {
        p.stem: [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines()]
        for p in (out / "nodes").glob("*.jsonl")
    }
    edges: dict[str, list[list[Any]]] = {}
    for p in (out / "edges").glob("*.tsv"):
        header, *lines = p.read_text(encoding="utf-8").splitlines()
        assert header == "start\tend\tproperties"
        rows = [line.split("\t") for line in lines]
        assert all(len(r) == 3 for r in rows), p
        edges[p.stem] = [[s, e, json.loads(props)] for s, e, props in rows]
    return nodes, edges


def counted(server: EmbeddedFalkorDB, graph: str) -> tuple[dict[str, int], dict[str, int]]:
    """Nodes per label and relationships per type, counted on FalkorDB directly."""
    db = FalkorDB(host=server.host, port=server.port, password=server.password or None)
    g = db.select_graph(graph)
    labels = [r[0] for r in g.ro_query("CALL db.labels()").result_set]
    types = [r[0] for r in g.ro_query("CALL db.relationshipTypes()").result_set]
    count = lambda q: g.ro_query(q).result_set[0][0]  # noqa: E731
    return (
        {label: count(f"MATCH (n:`{label}`) RETURN count(n)") for label in labels},
        {t: count(f"MATCH ()-[r:`{t}`]->() RETURN count(r)") for t in types},
    )


def test_the_embedded_movie_graph_as_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "query_guard", "export", "--out", str(out),
         "--config", str(_config(tmp_path))],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "171 node lines in 2 files, 253 relationships in 6 files" in done.stderr
    with EmbeddedFalkorDB(tmp_path / "data" / "falkordb") as server:
        node_counts, edge_counts = counted(server, "movies")
    nodes, edges = read_export(out)
    assert {k: len(v) for k, v in nodes.items()} == node_counts == {"Movie": 38, "Person": 133}
    assert {k: len(v) for k, v in edges.items()} == edge_counts
    assert sum(edge_counts.values()) == 253
    readme = (out / "README.md").read_text(encoding="utf-8")
    for label, n in node_counts.items():
        assert f"| `nodes/{label}.jsonl` | {n} |" in readme
    for rel, n in edge_counts.items():
        assert f"| `edges/{rel}.tsv` | {n} |" in readme
    # joining as the README says: every endpoint is a node line; Tom Hanks acted in 12 films
    by_id = {str(n["id"]): n for rows in nodes.values() for n in rows}
    assert all(s in by_id and e in by_id for rows in edges.values() for s, e, _ in rows)
    hanks = [by_id[e]["properties"]["title"] for s, e, props in edges["ACTED_IN"]
             if by_id[s]["properties"]["name"] == "Tom Hanks"]  # fmt: skip
    assert len(hanks) == 12 and "Cloud Atlas" in hanks
    keanu = next(n for n in nodes["Person"] if n["properties"]["name"] == "Keanu Reeves")
    assert keanu["labels"] == ["Person"] and keanu["properties"]["born"] == 1964
    schema = json.loads((out / "schema.json").read_text(encoding="utf-8"))
    assert schema["nodes"]["Person"] == ["born", "name"]
    assert {"start": "Person", "type": "ACTED_IN", "end": "Movie"}.items() <= next(
        r for r in schema["relationships"] if r["type"] == "ACTED_IN"
    ).items()


def test_redaction_leaves_out_labels_types_and_properties(
    tmp_path: Path, movies_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, '[export]\nexclude_labels = ["REVIEWED"]\nexclude_properties = '
                               '["born", "ACTED_IN.roles", "Movie.tagline"]\npage_size = 10\n')
    out = tmp_path / "a"
    assert main(["export", "--out", str(out), "--uri", movies_url, "--config", str(config)]) == 0
    nodes, edges = read_export(out)
    assert "REVIEWED" not in edges and len(edges["ACTED_IN"]) == 172
    assert all(props == {} for _, _, props in edges["ACTED_IN"])  # roles left out
    assert all("born" not in n["properties"] for n in nodes["Person"])
    assert all("tagline" not in n["properties"] and "title" in n["properties"]
               for n in nodes["Movie"])  # fmt: skip
    text = (out / "schema.json").read_text(encoding="utf-8")
    assert "REVIEWED" not in text and "born" not in text and "tagline" not in text
    assert "`born`" in (out / "README.md").read_text(encoding="utf-8")  # says what is left out

    config = _config(tmp_path, '[export]\nexclude_labels = ["Movie"]\n')
    out = tmp_path / "b"
    assert main(["export", "--out", str(out), "--uri", movies_url, "--config", str(config)]) == 0
    nodes, edges = read_export(out)
    assert set(nodes) == {"Person"}  # and every relationship touching a Movie is gone
    assert {k: len(v) for k, v in edges.items() if v} == {"FOLLOWS": 3}
    schema = json.loads((out / "schema.json").read_text(encoding="utf-8"))
    assert list(schema["nodes"]) == ["Person"]
    assert [r["type"] for r in schema["relationships"]] == ["FOLLOWS"]


def test_every_served_graph_gets_a_folder(
    tmp_path: Path, movies_url: str, fresh_movie_graph: tuple[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    copy, _ = fresh_movie_graph
    served = f'[backend]\ncypher = "{movies_url}"\ndatabases = ["movies", "{copy}"]\n'
    out = tmp_path / "out"
    assert main(["export", "--out", str(out), "--config", str(_config(tmp_path, served))]) == 0
    for name in ("movies", copy):
        nodes, _ = read_export(out / name)
        assert {k: len(v) for k, v in nodes.items()} == {"Movie": 38, "Person": 133}
    assert f"`{copy}/`: 171 node lines, 253 relationships" in (out / "README.md").read_text()
    assert main(["export", "--out", str(tmp_path / "one"), "--database", "movies",
                 "--config", str(_config(tmp_path, served))]) == 0  # fmt: skip
    assert (tmp_path / "one" / "nodes" / "Person.jsonl").exists()
    missing = served.replace(copy, "no_such_graph")
    code = main(["export", "--out", str(tmp_path / "x"), "--config",
                 str(_config(tmp_path, missing))])  # fmt: skip
    assert code == 2
    assert "export failed: graph 'no_such_graph':" in capsys.readouterr().err
    assert main(["export", "--out", str(tmp_path / "y"), "--database", "nope",
                 "--config", str(_config(tmp_path, served))]) == 2  # fmt: skip
    assert "'nope' is not served here; [backend] databases: movies" in capsys.readouterr().err


def test_a_bolt_server_arcadedb(tmp_path: Path, arcadedb_server: Any) -> None:
    user, password = arcadedb_server.auth
    host = arcadedb_server.url.split("://", 1)[1]
    uri = f"bolt://{quote(user)}:{quote(password, safe='')}@{host}/{arcadedb_server.database}"
    out = tmp_path / "out"
    config = _config(tmp_path, "[export]\npage_size = 50\n")
    assert main(["export", "--out", str(out), "--uri", uri, "--config", str(config)]) == 0
    nodes, edges = read_export(out)
    assert {k: len(v) for k, v in nodes.items()} == {"Movie": 38, "Person": 133}
    assert {k: len(v) for k, v in edges.items()} == {
        "ACTED_IN": 172, "DIRECTED": 44, "FOLLOWS": 3, "PRODUCED": 15, "REVIEWED": 9, "WROTE": 10
    }  # fmt: skip
    by_id = {str(n["id"]) for rows in nodes.values() for n in rows}
    assert all(s in by_id and e in by_id for rows in edges.values() for s, e, _ in rows)


def test_the_embedded_gremlin_graph(tmp_path: Path) -> None:
    import graphersal as gs

    out = tmp_path / "out"
    config = _config(tmp_path, "[export]\npage_size = 7\n")  # many pages
    assert main(["export", "--gremlin", "--out", str(out), "--config", str(config)]) == 0
    graph = gs.Graph.load(str(tmp_path / "data" / "graphersal" / "graph.gsnap"))
    count = lambda s: graph.execute(s, {})  # noqa: E731
    nodes, edges = read_export(out)
    for label, rows in nodes.items():
        assert count(f'g.V().hasLabel("{label}").count().to_list()') == [len(rows)]
        assert len({r["id"] for r in rows}) == len(rows)  # no row twice across pages
    for label, rows in edges.items():
        assert count(f'g.E().hasLabel("{label}").count().to_list()') == [len(rows)]
    assert sum(map(len, nodes.values())) == count("g.V().count().to_list()")[0]
    assert sum(map(len, edges.values())) == count("g.E().count().to_list()")[0]


EDGES_PER_NODE, GENERATED_NODES = 10, 20_000
_PEAK = """import resource, sys
from query_guard.cli.main import main
import query_guard.export.cli, query_guard.backends.falkordb, query_guard.schema.discovery
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
code = main(sys.argv[1:])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"RSS {base} {peak}", file=sys.stderr)
sys.exit(code)
"""


def test_a_generated_graph_streams_in_bounded_memory(
    tmp_path: Path, falkordb_server: EmbeddedFalkorDB, fresh_graph: tuple[str, str]
) -> None:
    """200k relationships with a 200-byte property each (~60 MB of files): the exporter's
    peak RSS grows by less than a page's worth of Python objects would suggest for all."""
    name, _ = fresh_graph
    with redis.Redis(host=falkordb_server.host, port=falkordb_server.port) as client:
        client.execute_command("GRAPH.QUERY", name,
                               f"UNWIND range(1, {EDGES_PER_NODE}) AS k CREATE (:H {{k: k}})")
        for lo in range(0, GENERATED_NODES, 5000):  # each N points at every hub H
            client.execute_command(
                "GRAPH.QUERY", name,
                f"UNWIND range({lo}, {lo + 4999}) AS i CREATE (a:N {{i: i, pad: '{'x' * 50}'}}) "
                f"WITH a MATCH (h:H) CREATE (a)-[:E {{k: h.k, note: '{'y' * 200}'}}]->(h)",
            )  # fmt: skip
    out = tmp_path / "out"
    config = _config(tmp_path, "[export]\npage_size = 5000\n")
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, "export", "--out", str(out), "--config", str(config),
         "--uri", graph_url(falkordb_server, name)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    base, peak = (int(x) for x in done.stderr.split("RSS ")[1].split()[:2])  # KiB on Linux
    edges = out / "edges" / "E.tsv"
    assert sum(1 for _ in edges.open(encoding="utf-8")) == GENERATED_NODES * EDGES_PER_NODE + 1
    size_mb = edges.stat().st_size / 2**20
    growth_mb = (peak - base) / 1024
    print(f"export of {GENERATED_NODES * EDGES_PER_NODE} relationships ({size_mb:.0f} MB): "
          f"RSS {base / 1024:.0f} MB -> {peak / 1024:.0f} MB (+{growth_mb:.0f} MB)")  # fmt: skip
    assert size_mb > 40
    assert growth_mb < 100, f"RSS grew by {growth_mb:.0f} MB"
