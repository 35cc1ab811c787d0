"""One side of `guard_compare.py`: loads the corpora and builds the guards of ONE checkout (the
import package is `query_guard`, or `proxy` in revisions before the package rename), then, for
each corpus name read on stdin, judges every query of that corpus once with the verdict cache
off and writes one JSON line: per query, thread CPU ns and wall ns, the thread CPU ns of its
parses (every language's `parse` is timed by a wrapper, the same on both sides), and the number
blocked.

Run by guard_compare.py with PYTHONPATH set to the checkout; not meant to be run by hand.
Usage: python _guard_worker.py CORPORA_DIR SPIDER_DIR
"""

from __future__ import annotations

import ast
import csv
import gc
import importlib
import importlib.abc
import importlib.util
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any


class _Layout(importlib.abc.MetaPathFinder):
    """pyproject's package-dir mapping for a checkout that is not installed: query_guard is
    proxy/, query_guard.rules plugins/, query_guard.grammars and .conf their folders."""

    def __init__(self, root: Path) -> None:
        self.dirs = {
            "query_guard": root / "proxy", "query_guard.rules": root / "plugins",
            "query_guard.grammars": root / "grammars", "query_guard.conf": root / "conf",
        }  # fmt: skip

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        folder = self.dirs.get(name)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(
            name, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )


def _package() -> str:
    root = os.environ.get("QG_BASELINE_ROOT")
    if root:  # the venv's editable install maps query_guard to THIS build: never use it here
        sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in repr(f)]
        sys.path.insert(0, root)
        if (Path(root) / "proxy" / "guard").is_dir():  # the package layout: query_guard = proxy/
            sys.meta_path.insert(0, _Layout(Path(root)))
    for name, pipeline in (("query_guard", "guard.pipeline"), ("query_guard", "pipeline"),
                           ("proxy", "pipeline")):  # fmt: skip
        try:
            module = importlib.import_module(f"{name}.{pipeline}")
        except ImportError:
            continue
        if root and not str(module.__file__).startswith(root):
            raise SystemExit(f"{name} imported from {module.__file__}, not from {root}")
        return name
    raise SystemExit("no query_guard or proxy package to import")


PKG = _package()


def _first(*names: str) -> Any:
    """The first of `names` (module:attribute, in this layout or an earlier revision's)."""
    for name in names:
        module, _, attr = name.partition(":")
        try:
            return getattr(importlib.import_module(f"{PKG}.{module}"), attr)
        except (ImportError, AttributeError):
            continue
    raise SystemExit(f"none of {names} in {PKG}")


# the package layout changed (issue 20): look in today's module first, then in the old one
parse_config = _first("config.load:parse_config", "config:parse_config")
build_guard = _first("build:build_guard", "pipeline:build_guard")
SchemaCatalog = _first("schema.catalog:SchemaCatalog", "schema:SchemaCatalog")
SqlCatalog = _first("schema.sql_catalog:SqlCatalog", "sql.catalog:SqlCatalog")

# text2cypher has 9,490 rows: every STRIDE-th keeps a round short on a loaded machine
STRIDE = 4


def cypher_pairs(corpora: Path) -> dict[str, list[tuple[str, str, Any]]]:
    config = parse_config({})
    base = corpora / "cypher" / "cypherbench"
    items = [json.loads(x) for x in (base / "test_question_gold.jsonl").open() if x.strip()]
    guards = {
        p.name.removesuffix("_schema.json"): build_guard(
            config, SchemaCatalog.from_cypherbench(json.loads(p.read_text())), entry_points=False
        )
        for p in (base / "schemas").glob("*_schema.json")
    }
    bench = [(it["gold_cypher"], "cypher", guards[it["graph"]]) for it in items]
    csv.field_size_limit(1 << 24)
    t2c = corpora / "cypher" / "text2cypher"
    with (t2c / "text2cypher_gpt4turbo.csv").open(newline="") as fp:
        rows = list(csv.DictReader(fp))
    with (t2c / "text2cypher_schemas.csv").open(newline="") as fp:
        t2c_guards = {
            r["database"]: build_guard(
                config,
                SchemaCatalog.from_structured_schema(ast.literal_eval(r["structured_schema"])),
                entry_points=False,
            )
            for r in csv.DictReader(fp)
        }
    gpt = [(r["cypher"], "cypher", t2c_guards[r["database"]]) for r in rows
           if r["database"] in t2c_guards][::STRIDE]  # fmt: skip
    return {"cypherbench": bench, "text2cypher": gpt}


def sql_pairs(spider: Path) -> list[tuple[str, str, Any]]:
    config = parse_config({"guard": {"sql_dialect": "sqlite"}})
    raw = json.loads((spider / "dev_schemas.json").read_text(encoding="utf-8"))
    guards = {}
    for db, tables in raw.items():
        guard = build_guard(config, entry_points=False)
        guard.ctx = replace(guard.ctx, sql_schema=SqlCatalog(tables, "sqlite"))
        guards[db] = guard
    lines = (spider / "dev_gold.sql.tsv").read_text(encoding="utf-8").splitlines()
    pairs = (line.split("\t") for line in lines if line.strip())
    return [(q, "sql", guards[db]) for q, db in pairs]


def gremlin_pairs(corpora: Path) -> list[tuple[str, str, Any]]:
    guard = build_guard(parse_config({}), entry_points=False)
    path = corpora / "gremlin" / "tinkerpop_traversals.jsonl"
    texts = [json.loads(line)["text"] for line in path.open(encoding="utf-8") if line.strip()]
    return [(t, "gremlin", guard) for t in texts]


class _ParseClock:
    """Thread CPU ns spent in the languages' `parse` since the last `take()`."""

    def __init__(self) -> None:
        self.spent = 0

    def wrap(self, parse: Any) -> Any:
        clock = time.thread_time_ns

        def timed(text: str) -> Any:
            c0 = clock()
            try:
                return parse(text)
            finally:
                self.spent += clock() - c0

        return timed

    def take(self) -> int:
        spent, self.spent = self.spent, 0
        return spent


PARSE_CLOCK = _ParseClock()


def _time_parses(guards: Any) -> None:
    """Wrap every language's `parse` of these guards in PARSE_CLOCK (once per language)."""
    done: dict[int, Any] = {}
    for guard in guards:
        languages = getattr(guard, "languages", None)
        if not isinstance(languages, dict):
            continue
        for name, lang in list(languages.items()):
            if any(lang is wrapped for wrapped in done.values()):
                continue  # a dict shared by several guards: wrapped already
            if id(lang) not in done:
                done[id(lang)] = replace(lang, parse=PARSE_CLOCK.wrap(lang.parse))
            languages[name] = done[id(lang)]


def measure(pairs: list[tuple[str, str, Any]]) -> dict[str, Any]:
    gc.collect()
    cpu: list[int] = []
    wall: list[int] = []
    parse: list[int] = []
    blocked = 0
    PARSE_CLOCK.take()
    for text, language, guard in pairs:
        guard._cache = None  # the full pipeline every time
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        verdict = guard.check(text, language)
        wall.append(time.perf_counter_ns() - t0)
        cpu.append(time.thread_time_ns() - c0)
        parse.append(PARSE_CLOCK.take())
        blocked += bool(verdict.blocked)
    return {"cpu": cpu, "wall": wall, "parse": parse, "blocked": blocked}


def main() -> None:
    corpora, spider = Path(sys.argv[1]), Path(sys.argv[2])
    corpus = {**cypher_pairs(corpora), "spider": sql_pairs(spider),
              "tinkerpop": gremlin_pairs(corpora)}  # fmt: skip
    _time_parses({id(g): g for pairs in corpus.values() for _, _, g in pairs}.values())
    for pairs in corpus.values():  # warm parsers and imports
        for text, language, guard in pairs[:200]:
            guard.check(text, language)
    where = next(sys.modules[m].__file__ for m in (f"{PKG}.guard.pipeline", f"{PKG}.pipeline")
                 if m in sys.modules)  # fmt: skip
    sizes = {k: len(v) for k, v in corpus.items()}
    print(json.dumps({"ready": PKG, "file": where, "sizes": sizes}), flush=True)
    for line in sys.stdin:
        name = line.strip()
        if name:
            print(json.dumps(measure(corpus[name])), flush=True)


if __name__ == "__main__":
    main()
