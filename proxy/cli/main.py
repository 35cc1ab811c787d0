"""The `query-guard` command: `check`, `schema`, `serve`, `hash-password`, `experience`,
`export` (DESIGN §8)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import IO, Any

from query_guard import __version__
from query_guard.build import build_guard
from query_guard.cli.schema import add_parser as add_schema_parser
from query_guard.config.load import Config, load_config
from query_guard.errors import ConfigError, PluginError, QueryGuardError, SchemaFormatError
from query_guard.experience import cli as experience_cli
from query_guard.export import cli as export_cli
from query_guard.guard.registry import builtin_rule_names
from query_guard.model import Action, Verdict
from query_guard.schema.catalog import SchemaCatalog

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
    check.add_argument(
        "--batch", metavar="FILE.jsonl",
        help='one {"id", "query", "schema_triples"?} object per line ("-": stdin); '
        'schema_triples is "(A, T, B), …" or [["A", "T", "B"], …]. Writes one '
        '{"id", "action", "query", "findings"} line each ({"id", "error": {"line", '
        '"message"}} for a line that cannot be checked). Exit status: 2 if a line had an '
        "error, else 1 if a line was blocked, else 0",
    )  # fmt: skip
    check.set_defaults(func=_cmd_check)

    add_schema_parser(sub)

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
    export_cli.add_parser(sub)
    return parser


# ---------------------------------------------------------------- check


def _cmd_check(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if args.dialect:
        config = _with_dialect(config, args.dialect)
    schema_path = args.schema or config.guard_raw.get("schema") or None
    schema = None
    if schema_path:
        try:
            schema = SchemaCatalog.load(
                schema_path, reciprocity_threshold=config.guard.reciprocity_threshold
            )
        except SchemaFormatError as exc:
            if args.schema:
                raise SchemaFormatError(f"--schema: {exc}") from None
            raise config.error(("guard", "schema"), str(exc)) from None
    try:
        guard = build_guard(config, schema, disable=args.disable)
    except PluginError as exc:
        unknown = str(exc).split(";")[0]
        if unknown.startswith("cannot disable") and any(n in unknown for n in args.disable):
            raise PluginError(f"--disable: {exc}") from None
        raise
    if args.batch:
        from query_guard.cli.batch import run_batch

        threshold = config.guard.reciprocity_threshold
        return run_batch(guard, args.batch, args.language, sys.stdout, _verdict_json, threshold)
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

    from query_guard.config.load import parse_config

    try:
        parse_config({"guard": {"sql_dialect": dialect}})  # validates the name
    except ConfigError as exc:
        raise ConfigError("--dialect", exc.problem) from None
    return replace(config, guard=replace(config.guard, sql_dialect=dialect))


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


# ---------------------------------------------------------------- rules, mcp, serve


def _cmd_rules(args: argparse.Namespace) -> int:
    from query_guard.cli.rules import list_rules, render

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
    from query_guard.workers import Supervisor, worker_count

    config = load_config(args.config)
    if worker_count(config) > 1:
        return Supervisor(config, args.config).run()
    return serve(config)


def _cmd_hash_password(args: argparse.Namespace) -> int:
    from query_guard.config.auth import hash_password

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
