"""The rule fixture format and its runner, for built-in and third-party rules alike.

A fixture file starts with header lines `//! key: value` (a key may repeat), then the input
query, a line `//=>`, and the expected output query. Every fixture states its `action:`
(allow / rewrite / block) and its `codes:` (the set of finding codes; an empty `//! codes:`
for none), so no fixture passes by leaving its verdict unsaid. Optional headers: `schema`
(triples, `(Person, KNOWS, Person), …`) and `config` (`key=value` pairs for `[guard]`).

A rule package tests its rule with one call per fixture::

    from query_guard.api import check_fixture
    import my_rule

    @pytest.mark.parametrize("path", sorted(Path("fixtures").glob("*.cypher")))
    def test_fixture(path):
        check_fixture(path, my_rule)

Only the given rule runs (with `also` plugins, if passed), and a fixture fails if any rule
reports `GUARD.RULE_ERROR`.
"""

from __future__ import annotations

from pathlib import Path

from query_guard.build import default_languages
from query_guard.config.load import parse_config
from query_guard.guard.pipeline import Guard
from query_guard.guard.registry import build_plugin_manager
from query_guard.model import Verdict
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.context import GuardContext


def parse_fixture(path: Path) -> tuple[dict[str, list[str]], str, str]:
    headers: dict[str, list[str]] = {}
    body: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith("//! ") and not body:
            key, _, value = line[4:].partition(":")
            headers.setdefault(key.strip(), []).append(value.strip())
        else:
            body.append(line)
    source, sep, expected = "".join(body).partition("//=>\n")
    assert sep, f"{path}: missing the //=> separator"
    return headers, source.rstrip("\n"), expected.rstrip("\n")


def expectations(path: Path, headers: dict[str, list[str]]) -> tuple[str, list[str]]:
    """The fixture's expected action and (sorted, distinct) finding codes."""
    missing = [key for key in ("action", "codes") if key not in headers]
    assert not missing, f"{path}: every fixture states its action and codes; missing {missing}"
    codes = {c.strip() for line in headers["codes"] for c in line.split(",") if c.strip()}
    return headers["action"][-1], sorted(codes)


def check_verdict(
    path: Path, verdict: Verdict, expected: str, headers: dict[str, list[str]]
) -> None:
    """The verdict is the fixture's: no rule failed, the query, the action and the codes."""
    action, codes = expectations(path, headers)
    summary = [(f.code, f.message) for f in verdict.findings]
    assert "GUARD.RULE_ERROR" not in verdict.codes, summary
    assert verdict.query == expected, summary
    assert str(verdict.action) == action, summary
    assert sorted(set(verdict.codes)) == codes, summary


def guard_settings(lines: list[str]) -> dict[str, object]:
    """The `config:` header lines — `key=value, …` pairs for `[guard]` — as a TOML-like table
    (`true`/`false` become booleans, digits integers)."""
    table: dict[str, object] = {}
    for line in lines:
        for pair in filter(None, (p.strip() for p in line.split(","))):
            key, _, value = pair.partition("=")
            table[key.strip()] = _value(value.strip())
    return table


def _value(text: str) -> object:
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        return text


def check_fixture(path: Path, plugin: object, *also: object) -> Verdict:
    """Judge the fixture at `path` (`.cypher`, `.gremlin` or `.sql`) with `plugin` (a rule
    module or object) and `also`, and assert the verdict is the fixture's; returns it."""
    headers, source, expected = parse_fixture(path)
    last = {key: values[-1] for key, values in headers.items()}
    config = parse_config({"guard": guard_settings([last.get("config", "")])})
    schema = SchemaCatalog.from_triples(last["schema"]) if "schema" in last else None
    pm = build_plugin_manager(builtins=(), extra=(plugin, *also), entry_points=False)
    ctx = GuardContext(schema=schema, settings=config.guard, rule_options=config.rules)
    language = {".gremlin": "gremlin", ".sql": "sql"}.get(path.suffix, "cypher")
    guard = Guard(pm, ctx, default_languages(ctx.settings.sql_dialect), cache_size=0)
    verdict = guard.check(source, language)
    check_verdict(path, verdict, expected, headers)
    return verdict
