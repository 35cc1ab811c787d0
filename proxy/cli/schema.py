"""`query-guard schema`: discover a live database's schema as JSON.

Which database: `--uri`; without it, `[backend] cypher` of `--config`; without that, the
embedded default `serve` runs — its FalkorDB is started on its data (`<[server] data_dir>/
falkordb`, the password it generated on first start read from `auth.conf` there), discovered,
and stopped. Credentials: `--user` / `--password-env`, else for a configured backend
`[backend] discovery_user` / `discovery_password_env`, else `[backend] user` / `password_env`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from query_guard.config.load import load_config
from query_guard.errors import ConfigError

URI_HELP = (
    "the database (default: [backend] cypher of --config, else the embedded FalkorDB that "
    "`serve` runs on its data under [server] data_dir). Forms: falkordb://[:PASSWORD@]HOST:PORT"
    "/GRAPH; bolt://, bolt+s://, neo4j://, neo4j+s://[USER:PASSWORD@]HOST:PORT[/DATABASE] "
    "(percent-encode special characters in USER and PASSWORD, or use --user / --password-env)"
)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    schema = sub.add_parser(
        "schema", help="discover a live database's schema as JSON",
        description="Discover a live database's labels, properties, relationship endpoints "
        "and measured reciprocity, and write them as the JSON `check --schema` reads.",
    )  # fmt: skip
    schema.add_argument("--uri", default=None, help=URI_HELP)
    schema.add_argument("--config", help="TOML configuration file (its backend and data_dir)")
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
    schema.set_defaults(func=cmd_schema)


def cmd_schema(args: argparse.Namespace) -> int:
    from query_guard.backend import BackendError
    from query_guard.backends.embedded import EmbeddedStartError, start_for_command
    from query_guard.backends.factory import discover_from_uri
    from query_guard.schema.discovery import write_schema_json

    config = load_config(args.config)
    user, password_env = args.user, args.password_env
    uri = args.uri or str(config.backend["cypher"])
    if not args.uri and uri and not user:
        backend = config.backend
        user = str(backend["discovery_user"] or backend["user"]) or None
        key = "discovery_password_env" if backend["discovery_user"] else "password_env"
        password_env = str(backend[key]) or None
        if password_env and password_env not in os.environ:
            raise config.error(("backend", key), f"environment variable {password_env} is not set")
    if password_env and not user:
        raise ConfigError("--password-env", "needs --user (the URI form carries both instead)")
    embedded = None
    if not uri:
        try:
            embedded = start_for_command(Path(str(config.server["data_dir"])).expanduser())
        except EmbeddedStartError as exc:
            print(f"query-guard: {exc}", file=sys.stderr)
            return 2
        uri = embedded.url
    uri = with_credentials(uri, user, password_env)
    try:
        schema = asyncio.run(
            discover_from_uri(uri, sample=args.sample,
                              reciprocity_threshold=args.reciprocity_threshold)
        )  # fmt: skip
    except (OSError, ValueError, BackendError) as exc:
        print(f"query-guard: schema discovery failed: {exc}", file=sys.stderr)
        return 2
    finally:
        if embedded is not None:
            embedded.stop()
    if args.out == "-":
        write_schema_json(schema, sys.stdout)
    else:
        with open(args.out, "w", encoding="utf-8") as fp:
            write_schema_json(schema, fp)
    return 0


def with_credentials(uri: str, user: str | None, password_env: str | None) -> str:
    """Put `user` / the password from `password_env` into a Bolt URI's netloc."""
    if not user:
        return uri
    if password_env and password_env not in os.environ:
        raise ConfigError("--password-env", f"environment variable {password_env} is not set")
    parts = urlsplit(uri)
    password = os.environ.get(password_env, "") if password_env else ""
    host = parts.hostname or "localhost"
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
