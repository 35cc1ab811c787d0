"""`query-guard experience list|show|pin|ban|forget|export|import`: the operator's hand on
the experience library (DESIGN §8, §10). It opens the same store as `serve` (`[experience]
store`, else `[server] data_dir`); SQLite's WAL lets it do so while the proxy runs.

A pinned example ranks before unpinned ones for any question it matches and is never evicted;
a banned one is never served and never learnt again; a forgotten one is deleted (a later
verified run may learn it anew). `export` writes one JSON object per line, `import` reads them
back (replacing an example with the same database, language, template and question)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from query_guard.config.load import load_config
from query_guard.experience.library import open_store
from query_guard.experience.store import ExperienceStore

EXIT_OK, EXIT_MISSING = 0, 1
_LIST_COLUMNS = ("id", "weight", "uses", "language", "database", "question")


def add_parser(sub: Any) -> None:
    """Register `experience` and its subcommands on the `query-guard` parser."""
    parser = sub.add_parser("experience", help="list, show, pin, ban, forget, export, import "
                                               "the examples the proxy learnt")  # fmt: skip
    parser.add_argument("--config", help="TOML configuration file")
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="one line per example (JSON lines with --json)")
    listing.add_argument("--database", help="only this database's examples")
    listing.add_argument("--json", action="store_true")
    for name, text in (
        ("show", "one example in full, as JSON"),
        ("pin", "rank it first"),
        ("ban", "never serve or learn it again"),
        ("forget", "delete it"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("id", type=int)
    export = actions.add_parser("export", help="every example as JSON lines")
    export.add_argument("--out", default="-", help="output file (default: stdout)")
    load = actions.add_parser("import", help="read examples exported as JSON lines")
    load.add_argument("file", help="a JSONL file (- for stdin)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    store = open_store(config.experience, str(config.server["data_dir"]))
    try:
        return _ACTIONS[args.action](store, args)
    finally:
        store.close()


def _list(store: ExperienceStore, args: argparse.Namespace) -> int:
    for example in store.examples(args.database):
        if args.json:
            print(json.dumps(example, ensure_ascii=False))
            continue
        flags = "".join(f" [{f}]" for f in ("pinned", "banned") if example[f])
        cells = [f"{example[c]:.3f}" if c == "weight" else str(example[c]) for c in _LIST_COLUMNS]
        print("\t".join(cells) + flags)
    return EXIT_OK


def _show(store: ExperienceStore, args: argparse.Namespace) -> int:
    example = store.example(args.id)
    if example is None:
        return _missing(args.id)
    print(json.dumps(example, indent=2, ensure_ascii=False))
    return EXIT_OK


def _flag(flag: str) -> Any:
    def mark(store: ExperienceStore, args: argparse.Namespace) -> int:
        if not store.mark(args.id, flag):
            return _missing(args.id)
        print(f"example {args.id} {flag}")
        return EXIT_OK

    return mark


def _forget(store: ExperienceStore, args: argparse.Namespace) -> int:
    if not store.forget(args.id):
        return _missing(args.id)
    print(f"example {args.id} forgotten")
    return EXIT_OK


def _export(store: ExperienceStore, args: argparse.Namespace) -> int:
    out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")  # noqa: SIM115
    try:
        for example in store.examples():
            out.write(json.dumps(example, ensure_ascii=False) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return EXIT_OK


def _import(store: ExperienceStore, args: argparse.Namespace) -> int:
    source = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")  # noqa: SIM115
    count = 0
    try:
        for number, line in enumerate(source, 1):
            if not line.strip():
                continue
            try:
                store.load(json.loads(line))
            except (ValueError, KeyError, TypeError) as exc:
                print(f"query-guard: line {number}: not an exported example: {exc!r}",
                      file=sys.stderr)  # fmt: skip
                return 2
            count += 1
    finally:
        if source is not sys.stdin:
            source.close()
    print(f"{count} example(s) imported")
    return EXIT_OK


def _missing(example_id: int) -> int:
    print(f"query-guard: no example with id {example_id}", file=sys.stderr)
    return EXIT_MISSING


_ACTIONS = {
    "list": _list, "show": _show, "pin": _flag("pinned"), "ban": _flag("banned"),
    "forget": _forget, "export": _export, "import": _import,
}  # fmt: skip
