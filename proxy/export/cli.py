"""`query-guard export --out DIR [--config FILE] [--uri URI] [--database NAME] [--gremlin]`.

Which graph: `--uri` (falkordb://, bolt://, neo4j://, credentials in the URI); without it
`[backend] cypher` of `--config`; without that the embedded FalkorDB `serve` runs (started on
its data under `[server] data_dir` and stopped again, as `query-guard schema` does). With
`--gremlin` the embedded Gremlin graph (graphersal, its snapshot under data_dir or
`[backend] gremlin_data`). Every graph `[backend] databases` lists is exported, each in a
folder of its own when there are several (`--database` picks one); `[export]` says what is
left out and how many rows one query reads.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from query_guard.backend import BackendError
from query_guard.config.load import HOME_ALIASES, Config, load_config, served_databases
from query_guard.errors import ConfigError
from query_guard.export.layout import Redaction, file_stem
from query_guard.export.sources import CypherSource, GremlinSource, Source
from query_guard.export.writer import Written, export_graph, index


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser(
        "export", help="write the graph as files for agents (nodes, edges, schema, README)",
        description="Write every node as nodes/<Label>.jsonl, every relationship as "
        "edges/<TYPE>.tsv, the schema as schema.json and a README.md saying how to join them; "
        "read in pages, written as they come ([export] in --config redacts).",
    )  # fmt: skip
    export.add_argument("--out", required=True, help="the folder to write (created if absent)")
    export.add_argument("--config", help="TOML configuration file")
    export.add_argument("--uri", help="the database (default: [backend] cypher, else the "
                        "embedded FalkorDB): falkordb://…/GRAPH, bolt://USER:PASSWORD@HOST")
    export.add_argument("--database", help="export only this graph of [backend] databases")
    export.add_argument("--gremlin", action="store_true",
                        help="export the embedded Gremlin graph (graphersal) instead")
    export.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    out = Path(args.out)
    redaction = Redaction.of(config.export)
    page = int(config.export["page_size"])
    if args.gremlin:
        return asyncio.run(_export_gremlin(config, out, redaction, page))
    names: list[str | None] = [d for d in served_databases(config.backend)
                               if d not in HOME_ALIASES] or [None]  # fmt: skip
    if args.uri:
        names = [None]
    if args.database:
        if args.uri is None and args.database not in names:
            raise ConfigError("--database", f"{args.database!r} is not served here; "
                              f"[backend] databases: {', '.join(map(str, names))}")
        names = [args.database]
    embedded = None
    url = args.uri or str(config.backend["cypher"])
    if not url:
        from query_guard.backends.embedded import EmbeddedStartError, start_for_command

        try:
            embedded = start_for_command(Path(str(config.server["data_dir"])).expanduser())
        except EmbeddedStartError as exc:
            print(f"query-guard: {exc}", file=sys.stderr)
            return 2
        url = embedded.url
    try:
        return asyncio.run(_export_cypher(config, url, bool(args.uri), names, out, redaction,
                                          page))  # fmt: skip
    except (OSError, BackendError) as exc:
        print(f"query-guard: export failed: {exc}", file=sys.stderr)
        return 2
    finally:
        if embedded is not None:
            embedded.stop()


async def _export_cypher(config: Config, url: str, given: bool, names: list[str | None],
                         out: Path, redaction: Redaction, page: int) -> int:  # fmt: skip
    from query_guard.backends.factory import backend_for_uri, make_backend

    backend: Any = backend_for_uri(url) if given else make_backend(url, config)
    await backend.start()
    try:
        parts: dict[str, Written] = {}
        for name in names:
            where = out / file_stem(name) if len(names) > 1 and name else out
            source = CypherSource(backend, name, page)
            try:
                parts[name or "graph"] = await _one(source, where, name or "graph", redaction)
            except BackendError as exc:
                raise BackendError(f"graph {name or 'graph'!r}: {exc.message}") from None
        if len(names) > 1:
            index(out, parts)
    finally:
        await backend.close()
    return 0


async def _export_gremlin(config: Config, out: Path, redaction: Redaction, page: int) -> int:
    if config.backend["gremlin"]:
        raise config.error(("backend", "gremlin"), "export reads the embedded Gremlin graph "
                           "only; export a remote Gremlin Server with its own tools")
    from query_guard.backends.graphersal import GraphersalBackend

    data_dir = Path(str(config.server["data_dir"])).expanduser() / "graphersal"
    data = [str(p) for p in config.backend["gremlin_data"]]
    backend = await asyncio.to_thread(GraphersalBackend.open, data_dir, data)
    try:
        await _one(GremlinSource(backend, page), out, "gremlin", redaction)
    finally:
        await backend.close()
    return 0


async def _one(source: Source, out: Path, name: str, redaction: Redaction) -> Written:
    written = await export_graph(source, out, name, redaction)
    print(f"{out}: {sum(written.nodes.values())} node lines in {len(written.nodes)} files, "
          f"{sum(written.edges.values())} relationships in {len(written.edges)} files",
          file=sys.stderr)  # fmt: skip
    return written
