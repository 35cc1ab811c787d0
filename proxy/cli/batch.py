"""`query-guard check --batch FILE.jsonl`: one verdict line per input line.

Each input line is `{"id", "query", "schema_triples"?}`; `schema_triples` is a string
(`"(Person, KNOWS, Person), …"`) or a list of `[start, type, end]` lists. Each output line is
`{"id", "action", "query", "findings"}`, or `{"id", "error": {"line", "message"}}` for a line
that cannot be checked (not UTF-8, not JSON, no string `query`, malformed `schema_triples`);
the batch goes on. Exit status: 2 when a line had an error, else 1 when a line was blocked,
else 0.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO, Any

from query_guard.errors import QueryGuardError
from query_guard.guard.pipeline import Guard
from query_guard.model import Action, Verdict
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.context import GuardContext

EXIT_OK, EXIT_BLOCKED, EXIT_USAGE = 0, 1, 2


def run_batch(
    guard: Guard,
    path: str,
    language: str,
    out: IO[str],
    to_json: Callable[[Verdict], dict[str, Any]],
    reciprocity_threshold: float,
) -> int:
    """Check every non-blank line of `path` ("-": stdin) in order; the exit status above."""
    per_schema: dict[str, Guard] = {}
    blocked = failed = False
    try:
        fp = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
    except OSError as exc:
        print(f"query-guard: cannot read --batch {path}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    with fp:
        for lineno, raw in enumerate(fp, 1):
            if not raw.strip():
                continue
            item: Any = None
            try:
                item = json.loads(raw.decode("utf-8"))
                if not isinstance(item, dict) or not isinstance(item.get("query"), str):
                    raise ValueError("each line must be an object with a string 'query'")
                g = guard
                if item.get("schema_triples") is not None:
                    triples = item["schema_triples"]
                    key = json.dumps(triples)
                    if key not in per_schema:
                        schema = schema_of(triples, reciprocity_threshold)
                        per_schema[key] = with_schema(guard, schema)
                    g = per_schema[key]
                verdict = g.check(item["query"], language)
                blocked = blocked or verdict.action is Action.BLOCK
                result = {"id": item.get("id"), **to_json(verdict)}
            except (ValueError, QueryGuardError) as exc:  # UnicodeDecodeError is a ValueError
                failed = True
                ident = item.get("id") if isinstance(item, dict) else None
                result = {"id": ident, "error": {"line": lineno, "message": str(exc)}}
            out.write(json.dumps(result, ensure_ascii=False) + "\n")
    return EXIT_USAGE if failed else EXIT_BLOCKED if blocked else EXIT_OK


def schema_of(triples: Any, reciprocity_threshold: float) -> SchemaCatalog:
    """`schema_triples` as a catalog: a triples string, or a list of [start, type, end]."""
    if isinstance(triples, str):
        return SchemaCatalog.from_triples(triples, reciprocity_threshold=reciprocity_threshold)
    if not isinstance(triples, list):
        raise ValueError("'schema_triples' must be a string or a list of [start, type, end]")
    rels = []
    for i, t in enumerate(triples):
        if not (
            isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) and x for x in t)
        ):
            raise ValueError(
                f"'schema_triples'[{i}] must be a list of three names [start, type, end], "
                f"got {json.dumps(t)}"
            )
        rels.append({"start": t[0], "type": t[1], "end": t[2]})
    return SchemaCatalog.from_dict(
        {"nodes": {}, "relationships": rels}, reciprocity_threshold=reciprocity_threshold
    )


def with_schema(guard: Guard, schema: SchemaCatalog) -> Guard:
    ctx = GuardContext(schema, guard.ctx.settings, guard.ctx.rule_options, guard.ctx.gremlin)
    return Guard(guard.pm, ctx, guard.languages)
