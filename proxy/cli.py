"""The `query-guard` command: `check`, `schema`, `serve`, `hash-password` (DESIGN §8)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import IO, Any

from query_guard import __version__
from query_guard.config import Config, load_config
from query_guard.context import GuardContext
from query_guard.errors import QueryGuardError
from query_guard.experience import cli as experience_cli
from query_guard.model import Action, Verdict
from query_guard.pipeline import Guard, build_guard
from query_guard.plugins import builtin_rule_names
from query_guard.schema import SchemaCatalog

EXIT_OK, EXIT_BLOCKED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args))
    except QueryGuardError as exc:
        print(f"query-guard: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception:  # a bug of ours or of a plugin: say so, distinct from BLOCK and usage
        import traceback

        traceback.print_exc()
        print("query-guard: internal error (see the traceback above)", file=sys.stderr)
        return EXIT_INTERNAL


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="query-guard",
        description="Guard LLM-written Cypher and Gremlin before they reach a graph database.",
    )
    parser.add_argument("--version", action="version", version=f"query-guard {__version__}")
    sub = parser.add_subparsers(dest="command")

    check = sub.add_parser("check", help="check one query or a JSONL batch and print the verdict")
    check.add_argument("query", nargs="?", help="the query (read from stdin when absent)")
    check.add_argument("--language", choices=["cypher", "gremlin", "sql"], default="cypher")
    check.add_argument(
        "--dialect", help="SQL dialect for --language sql (default: [guard] sql_dialect)"
    )
    check.add_argument("--schema", help="schema file: query-guard JSON, CypherBench JSON, triples")
    check.add_argument("--config", help="TOML configuration file")
    check.add_argument(
        "--disable", action="append", default=[], metavar="RULE",
        help="switch a rule off by name (repeatable); built-in rules: "
        + ", ".join(builtin_rule_names()),
    )  # fmt: skip
    check.add_argument("--json", action="store_true", help="print the verdict as JSON")
    check.add_argument("--batch", metavar="FILE.jsonl", help="one {id, query} object per line")
    check.set_defaults(func=_cmd_check)

    schema = sub.add_parser("schema", help="discover a live database's schema as JSON")
    schema.add_argument(
        "--uri", required=True,
        help="falkordb://host:port/graph, or bolt:// / neo4j://[user:password@]host:port[/db]",
    )  # fmt: skip
    schema.add_argument("--user", default=None, help="Bolt user (instead of in the URI)")
    schema.add_argument(
        "--password-env", default=None, metavar="VAR",
        help="environment variable holding the Bolt password",
    )  # fmt: skip
    schema.add_argument("--sample", type=int, default=1000, help="edges sampled per probe")
    schema.add_argument(
        "--reciprocity-threshold", type=float, default=0.9,
        help="fraction of edges stored both ways that makes a type reciprocal",
    )  # fmt: skip
    schema.add_argument("--out", default="-", help="output file (default: stdout)")
    schema.set_defaults(func=_cmd_schema)

    rules = sub.add_parser("rules", help="list the installed rules: source, codes, options")
    rules.add_argument("--config", help="TOML configuration file ([guard] disable applies)")
    rules.add_argument("--json", action="store_true", help="one JSON array")
    rules.set_defaults(func=_cmd_rules)

    mcp = sub.add_parser("mcp", help="run the MCP server on standard input/output")
    mcp.add_argument("--config", help="TOML configuration file")
    mcp.set_defaults(func=_cmd_mcp)

    serve = sub.add_parser("serve", help="run the proxy (embedded FalkorDB when no backend)")
    serve.add_argument("--config", help="TOML configuration file")
    serve.set_defaults(func=_cmd_serve)

    hashing = sub.add_parser(
        "hash-password",
        help="hash a password for [server] users (read from the terminal, or one stdin line)",
    )
    hashing.add_argument("--user", help='print a TOML line `NAME = "<hash>"` for [server] users')
    hashing.set_defaults(func=_cmd_hash_password)
    experience_cli.add_parser(sub)
    return parser


# ---------------------------------------------------------------- check


def _cmd_check(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if args.dialect:
        config = _with_dialect(config, args.dialect)
    schema_path = args.schema or config.guard_raw.get("schema") or None
    schema = (
        SchemaCatalog.load(schema_path, reciprocity_threshold=config.guard.reciprocity_threshold)
        if schema_path
        else None
    )
    guard = build_guard(config, schema, disable=args.disable)
    if args.batch:
        return _run_batch(guard, config, args.batch, args.language, sys.stdout)
    query = args.query if args.query is not None else sys.stdin.read()
    verdict = guard.check(query, args.language)
    if args.json:
        # `forward`: the text the database would execute (the guard's canonical emission)
        out = {**_verdict_json(verdict), "forward": "" if verdict.blocked else verdict.to_run}
        print(json.dumps(out, ensure_ascii=False))
    else:
        _print_human(verdict, sys.stdout)
    return EXIT_BLOCKED if verdict.action is Action.BLOCK else EXIT_OK


def _with_dialect(config: Config, dialect: str) -> Config:
    from dataclasses import replace

    from query_guard.config import parse_config

    parse_config({"guard": {"sql_dialect": dialect}})  # validates the name (ConfigError)
    return replace(config, guard=replace(config.guard, sql_dialect=dialect))


def _run_batch(guard: Guard, config: Config, path: str, language: str, out: IO[str]) -> int:
    """One output line per non-blank input line, same order; a bad line (not UTF-8, not JSON,
    no string `query`, bad `schema_triples`) gets an `error` object and the batch goes on."""
    per_schema: dict[str, Guard] = {}
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
                triples = item.get("schema_triples")
                g = guard
                if isinstance(triples, str):
                    if triples not in per_schema:
                        per_schema[triples] = _with_schema(guard, config, triples)
                    g = per_schema[triples]
                result = {"id": item.get("id"), **_verdict_json(g.check(item["query"], language))}
            except (ValueError, QueryGuardError) as exc:  # UnicodeDecodeError is a ValueError
                ident = item.get("id") if isinstance(item, dict) else None
                result = {"id": ident, "error": {"line": lineno, "message": str(exc)}}
            out.write(json.dumps(result, ensure_ascii=False) + "\n")
    return EXIT_OK


def _with_schema(guard: Guard, config: Config, triples: str) -> Guard:
    schema = SchemaCatalog.from_triples(
        triples, reciprocity_threshold=config.guard.reciprocity_threshold
    )
    ctx = GuardContext(schema, guard.ctx.settings, guard.ctx.rule_options, guard.ctx.gremlin)
    return Guard(guard.pm, ctx, guard.languages)


def _verdict_json(verdict: Verdict) -> dict[str, Any]:
    return {
        "action": str(verdict.action),
        "query": verdict.query,
        "findings": [
            {
                k: v
                for k, v in f.to_dict().items()
                if k in ("code", "severity", "message", "start", "end", "hint")
            }
            for f in verdict.findings
        ],
    }


def _print_human(verdict: Verdict, out: IO[str]) -> None:
    out.write(f"{verdict.action.upper()}\n")
    for f in verdict.findings:
        fixed = " (fixed)" if f.fix else ""
        out.write(f"  {f.code:<24} {f.severity:<7} [{f.span[0]}:{f.span[1]}] {f.message}{fixed}\n")
        if f.hint:
            out.write(f"  {'':<24} hint: {f.hint}\n")
    if verdict.action is Action.REWRITE:
        out.write("\n" + verdict.query.rstrip("\n") + "\n")


# ---------------------------------------------------------------- schema, serve


def _cmd_schema(args: argparse.Namespace) -> int:
    import asyncio

    from query_guard.backends.base import BackendError
    from query_guard.discovery import discover_from_uri, write_schema_json

    uri = _with_credentials(args.uri, args.user, args.password_env)
    try:
        schema = asyncio.run(
            discover_from_uri(uri, sample=args.sample,
                              reciprocity_threshold=args.reciprocity_threshold)
        )  # fmt: skip
    except (OSError, ValueError, BackendError) as exc:
        print(f"query-guard: schema discovery failed: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.out == "-":
        write_schema_json(schema, sys.stdout)
    else:
        with open(args.out, "w", encoding="utf-8") as fp:
            write_schema_json(schema, fp)
    return EXIT_OK


def _with_credentials(uri: str, user: str | None, password_env: str | None) -> str:
    """Put --user / the password from --password-env into a Bolt URI's netloc."""
    if not user:
        return uri
    import os
    from urllib.parse import quote, urlsplit, urlunsplit

    parts = urlsplit(uri)
    password = os.environ.get(password_env, "") if password_env else ""
    host = parts.hostname or "localhost"
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _cmd_rules(args: argparse.Namespace) -> int:
    from query_guard.rules_listing import list_rules, render

    rules = list_rules(build_guard(load_config(args.config)).pm)
    if args.json:
        print(json.dumps([r.to_dict() for r in rules], ensure_ascii=False, indent=1))
    else:
        print(render(rules), end="")
    return EXIT_OK


def _cmd_mcp(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from query_guard.runner import serve_stdio

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(serve_stdio(load_config(args.config)))
    return EXIT_OK


def _cmd_serve(args: argparse.Namespace) -> int:
    from query_guard.runner import serve

    return serve(load_config(args.config))


def _cmd_hash_password(args: argparse.Namespace) -> int:
    from query_guard.auth import hash_password

    if sys.stdin.isatty():
        import getpass

        password = getpass.getpass("password: ")
        if getpass.getpass("again: ") != password:
            print("query-guard: the passwords differ", file=sys.stderr)
            return EXIT_USAGE
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        print("query-guard: empty password", file=sys.stderr)
        return EXIT_USAGE
    hashed = hash_password(password)
    print(f"{json.dumps(args.user)} = {json.dumps(hashed)}" if args.user else hashed)
    return EXIT_OK
