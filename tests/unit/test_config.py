"""Operator configuration: a strict schema (no coercion, closed tables, checked choices), errors
that name the dotted key and the file line, an example that documents every key, and a reader
in the code for every key."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from query_guard.cli.main import main
from query_guard.config.load import (
    CompatSettings,
    GuardSettings,
    declared_keys,
    documented_keys,
    load_config,
    parse_config,
)
from query_guard.config.locate import key_lines
from query_guard.config.schema import ConfigFile, keys_of, model_at
from query_guard.errors import ConfigError
from tests.sources import python_files

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "conf" / "query-guard.toml"


def test_defaults() -> None:
    cfg = parse_config({})
    assert cfg.guard.read_only is True
    assert (cfg.guard.default_limit, cfg.guard.max_limit) == (1000, 10000)
    assert "db.labels" in cfg.guard.allowed_procedures
    assert cfg.server["bolt"] == "127.0.0.1:7687"
    assert cfg.backend["cypher"] == ""  # embedded default
    assert cfg.limits["max_result_rows"] == 10000  # -1 = [guard] max_limit
    assert "llm" not in cfg.repair


def _error(raw: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    return info.value


@pytest.mark.parametrize(
    ("raw", "key", "problem"),
    [
        ({"guard": {"read_only": "yes"}}, "guard.read_only", "must be bool, got 'yes'"),
        ({"guard": {"read_only": 1}}, "guard.read_only", "must be bool, got 1"),
        ({"guard": {"max_limit": True}}, "guard.max_limit", "must be int, got True"),
        ({"guard": {"default_limit": "5"}}, "guard.default_limit", "must be int, got '5'"),
        ({"guard": {"default_limit": 5.0}}, "guard.default_limit", "must be int, got 5.0"),
        ({"guard": {"disable": "limits"}}, "guard.disable", "must be list, got 'limits'"),
        ({"guard": {"allowed_functions": ["a", 3]}}, "guard.allowed_functions[1]", "must be str"),
        ({"server": {"http_max_body_bytes": "1MB"}}, "server.http_max_body_bytes", "must be int"),
        ({"server": {"users": {"bob": 7}}}, "server.users.bob", "must be str, got 7"),
        ({"backend": {"tls_verify": "no"}}, "backend.tls_verify", "must be bool, got 'no'"),
        ({"backend": {"databases": [""]}}, "backend.databases[0]", "must not be empty"),
        ({"audit": {"include_parameters": 0}}, "audit.include_parameters", "must be bool"),
        ({"repair": {"budget": False}}, "repair.budget", "must be int, got False"),
        ({"repair": {"llm": {"max_tokens": "9"}}}, "repair.llm.max_tokens", "must be int"),
        ({"repair": {"llm": {"timeout_seconds": 0}}}, "repair.llm.timeout_seconds", "must be > 0"),
        ({"limits": {"max_nesting": 1.5}}, "limits.max_nesting", "must be int, got 1.5"),
        ({"limits": {"max_nesting": -1}}, "limits.max_nesting", "must be ≥ 0, got -1"),
        ({"limits": {"max_result_rows": -2}}, "limits.max_result_rows", "must be ≥ -1"),
        ({"limits": {"guard_workers": 0}}, "limits.guard_workers", "must be ≥ 1"),
        ({"limits": {"idle_timeout_seconds": "1m"}}, "limits.idle_timeout_seconds", "float"),
        ({"compat": {"procedures": 1}}, "compat.procedures", "must be one of 'proxy' or 'backend'"),
        ({"gremlin": {"similarity": {"edges": {"a": "b"}, "threshold": "hi"}}},
         "gremlin.similarity.threshold", "must be float, got 'hi'"),
        ({"gremlin": {"schema": "x"}}, "gremlin.schema", "must be a table, got 'x'"),
        ({"rules": {"limits": 3}}, "rules.limits", "must be a table, got 3"),
        ({"guard": []}, "guard", "must be a table"),
    ],
)  # fmt: skip
def test_wrong_types_are_refused_not_coerced(raw: dict, key: str, problem: str) -> None:
    err = _error(raw)
    assert err.key == key
    assert problem in err.problem
    assert str(err).startswith(f"{key}: ")


@pytest.mark.parametrize(
    ("raw", "key", "problem"),
    [
        ({"guard": {"on_rule_error": "ignore"}}, "guard.on_rule_error", "'warn' or 'block'"),
        ({"compat": {"procedures": "both"}}, "compat.procedures", "'proxy' or 'backend'"),
        ({"compat": {"schema_statements": "ok"}}, "compat.schema_statements", "'acknowledge'"),
        ({"repair": {"speculative": "always"}}, "repair.speculative", "'suggest' or 'apply'"),
        ({"backend": {"credentials": "mine"}}, "backend.credentials", "'configured'"),
        ({"guard": {"sql_dialect": "cobol"}}, "guard.sql_dialect", "cobol"),
        ({"guard": {"reciprocity_threshold": 2.0}}, "guard.reciprocity_threshold", "≤ 1"),
        ({"guard": {"default_limit": 50, "max_limit": 10}}, "guard.default_limit", "max_limit"),
        ({"server": {"advertised_address": "lb"}}, "server.advertised_address", "'host:port'"),
        ({"server": {"advertised_address": ["a:1", "b"]}}, "server.advertised_address", "'b'"),
        ({"guard": {"max_limit": 10}}, "guard.default_limit", "must not exceed"),
    ],
)
def test_choices_and_ranges_are_checked(raw: dict, key: str, problem: str) -> None:
    err = _error(raw)
    assert (err.key, problem in err.problem) == (key, True), err


def _sections_and_tables() -> list[tuple[str, ...]]:
    """Every modelled table: the sections, [repair.llm], [gremlin.similarity], …"""
    out: list[tuple[str, ...]] = []

    def walk(model: Any, prefix: tuple[str, ...]) -> None:
        for key in keys_of(model):
            sub = model_at(model, (key,))
            if sub is not None:
                out.append((*prefix, key))
                walk(sub, (*prefix, key))

    walk(ConfigFile, ())
    return out


@pytest.mark.parametrize("table", _sections_and_tables(), ids=".".join)
def test_an_unknown_key_is_refused_in_every_table(table: tuple[str, ...]) -> None:
    raw: dict[str, Any] = {"colour": "red"}
    if table[-1] == "similarity":
        raw["edges"] = {"a": "b"}  # required
    for part in reversed(table):
        raw = {part: raw}
    err = _error(raw)
    assert err.key == ".".join((*table, "colour"))
    known = keys_of(model_at(ConfigFile, table))  # type: ignore[arg-type]
    assert err.problem == f"unknown key; known keys: {', '.join(sorted(known))}"


def test_an_unknown_section_lists_the_known_ones() -> None:
    err = _error({"servr": {}})
    assert err.key == "servr"
    assert err.problem.startswith(
        "unknown section (did you mean 'server'?); known sections: audit, backend, compat"
    )
    assert _error({"gremlin": {"graph": {}}}).key == "gremlin.graph"


# ---------------------------------------------------------------- file lines


def _load_error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "conf.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return str(info.value).replace(str(path), "conf.toml")


def test_errors_name_the_file_line(tmp_path: Path) -> None:
    text = '# query-guard\n[server]\nbolt = "127.0.0.1:7687"\n\n[guard]\nread_only = true\n'
    assert _load_error(tmp_path, text + 'default_limit = "x"\n') == (
        "conf.toml:7: guard.default_limit: must be int, got 'x'"
    )
    assert _load_error(tmp_path, text + "colour = 1\n").startswith(
        "conf.toml:7: guard.colour: unknown key; known keys: allowed_functions, "
    )
    # a cross-key check names the key and, when the key is left out, its table's header
    assert _load_error(tmp_path, text + "max_limit = 10\n").startswith(
        "conf.toml:5: guard.default_limit: must not exceed guard.max_limit (10), got 1000"
    )
    many = text + 'allowed_procedures = [\n  "db.labels",  # a comment, ]\n  7,\n]\n'
    assert _load_error(tmp_path, many) == (
        "conf.toml:9: guard.allowed_procedures[1]: must be str, got 7"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[ "repair" . llm ]\nmodel = "m"\nmax_tokens = 0\n',
         "conf.toml:3: repair.llm.max_tokens: must be > 0, got 0"),
        ('repair.llm.model = "m"\n\n[server]\nusers = { alice = "h", bob = 1 }\n',
         "conf.toml:4: server.users.bob: must be str, got 1"),
        ('[gremlin.similarity]\nnote = """\ncase_label = 1\n"""\n',
         "2 configuration errors in conf.toml:\n"
         "  conf.toml:1: gremlin.similarity.edges: is required\n"
         "  conf.toml:2: gremlin.similarity.note: unknown key; known keys: case_label, edges, "
         "score_property, threshold, window, window_property"),
        ('[gremlin.schema]\nedges = [\n  ["a", "b", "c"],\n  ["a", "b"],\n]\n',
         "conf.toml:4: gremlin.schema.edges[1]: must have at least 3 item(s), got ['a', 'b']"),
        ("[audit]\n'include_parameters' = 'yes'\n",
         "conf.toml:2: audit.include_parameters: must be bool, got 'yes'"),
        ("[servr]\n", "conf.toml:1: servr: unknown section (did you mean 'server'?); known "
         "sections: audit, backend, "
         "compat, context, experience, export, gremlin, guard, limits, plan, repair, rules, "
             "server"),
    ],
)  # fmt: skip
def test_keys_are_located_whatever_the_toml_layout(
    tmp_path: Path, text: str, expected: str
) -> None:
    assert _load_error(tmp_path, text) == expected


def test_the_locator_follows_strings_arrays_of_tables_and_dates() -> None:
    from query_guard.config.locate import locate

    text = (
        'top = 1979-05-27 07:32:00Z  # a date and time with a space\n'
        '"a \\"quoted\\" key".x = """\n'
        "[not.a.table]\n"
        'fake = 1 """\n'
        "[[fruit]]\n"
        "name = 'apple' # [x]\n"
        "[[fruit]]\n"
        "name = 'pear'\n"
        "[t]\n"
        "inline = { a = { b = [1, 2] }, c = '}' }\n"
        "later = 1\n"
    )
    assert tomllib.loads(text)["fruit"][1] == {"name": "pear"}
    lines = key_lines(text)
    assert lines[("top",)] == 1
    assert lines[('a "quoted" key', "x")] == 2
    assert ("not",) not in lines and ("fake",) not in lines  # inside the string
    assert (lines[("fruit", 0, "name")], lines[("fruit", 1, "name")]) == (6, 8)
    assert lines[("t", "inline", "a", "b", 1)] == 10
    assert locate(text, ("t", "later")) == 11
    assert locate(text, ("t", "missing", 3)) == 9  # the table's header
    assert locate(text, ("nowhere",)) is None
    assert key_lines("[broken\nx = 1") == {}  # text tomllib refuses: nothing, no exception


def test_check_with_a_bad_config_exits_2_naming_file_line_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[limits]\nmax_nesting = 12\nguard_workers = 0\n")
    assert main(["check", "--config", str(bad), "MATCH (n) RETURN n"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:3: limits.guard_workers: must be ≥ 1, got 0" in err


def test_serve_names_the_line_of_a_value_refused_while_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    data = tmp_path / "data"
    bad.write_text(f'[server]\ndata_dir = "{data}"\nbolt = "nonsense"\n')
    assert main(["serve", "--config", str(bad)]) == 2
    assert f"{bad}:3: server.bolt: must look like 'host:port'" in capsys.readouterr().err
    assert not data.exists()  # refused before starting anything


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[guard\nread_only = true")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


# ---------------------------------------------------------------- documented and read


def test_example_config_loads_and_documents_every_key() -> None:
    cfg = load_config(EXAMPLE)
    assert cfg.guard.read_only
    text = EXAMPLE.read_text()
    raw = tomllib.loads(text)
    for section, keys in documented_keys().items():
        assert set(raw[section]) == keys, section
    for path in declared_keys():
        if path[0] in ("repair", "gremlin") and len(path) == 3:  # commented examples
            assert re.search(rf"^# (# )?{path[-1]} = ", text, re.M), path


NOT_READERS = {"proxy/config/load.py", "proxy/config/schema.py", "proxy/config/locate.py"}
# keys the configuration turns into another setting; that setting must be read instead
DERIVED = {("backend", "databases"): "allowed_databases"}
TYPED = {
    "guard": {f.name for f in dataclasses.fields(GuardSettings)},
    "limits": {f.name for f in dataclasses.fields(GuardSettings)},
    "compat": {f.name for f in dataclasses.fields(CompatSettings)},
}


def _sources() -> dict[str, str]:
    files = python_files("proxy", "plugins")
    texts = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in files}
    return {name: text for name, text in texts.items() if name not in NOT_READERS}


def readers(path: tuple[str | int, ...], sources: dict[str, str]) -> list[str]:
    """Files that read the key at `path`: as a table entry (`table["key"]`, `.get("key"`),
    or as an attribute where the key reaches its readers typed (`settings.max_limit`, the
    `[gremlin.*]` tables)."""
    if path in DERIVED:
        return readers(("guard", DERIVED[path]), sources)
    key = str(path[-1])
    entry = re.compile(rf"""\[\s*["']{key}["']\s*\]|\.get\(\s*["']{key}["']""")
    typed = path[0] == "gremlin" or key in TYPED.get(str(path[0]), set())
    attribute = re.compile(rf"\.{key}\b")
    return [
        name
        for name, text in sources.items()
        if entry.search(text) or (typed and attribute.search(text))
    ]


def test_every_config_key_is_read_somewhere() -> None:
    sources = _sources()
    unread = [".".join(map(str, p)) for p in declared_keys() if not readers(p, sources)]
    assert unread == []
    assert len(declared_keys()) > 70
    assert readers(("guard", "no_such_key"), sources) == []  # the finder can say "unread"
    assert readers(("audit", "include_parameters"), sources) == ["proxy/server.py"]


def test_every_builtin_rule_option_is_read_by_its_rule() -> None:
    from query_guard.guard.options import declared_options
    from query_guard.guard.registry import build_plugin_manager

    pm = build_plugin_manager(entry_points=False)
    seen = 0
    for name, plugin in pm.list_name_plugin():
        text = Path(plugin.__file__).read_text(encoding="utf-8")
        for key in declared_options(plugin) or {}:
            read = rf"""\.option\([^,()]+,\s*["']{key}["']|\.options\([^)]*\)\s*\[\s*["']{key}"""
            assert re.search(read, text), f"rules.{name}.{key} is declared but not read"
            seen += 1
    assert seen >= 4


# ---------------------------------------------------------------- round trip


def test_valid_configs_round_trip_through_toml(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Any valid value of every scalar key, written as TOML in varied layouts, loads back as
    written, and each key is located on the line it was written on."""
    from hypothesis import given, settings

    from tests.budget import examples
    from tests.config_strategies import configs, to_toml

    directory = tmp_path_factory.mktemp("round-trip")

    @settings(max_examples=examples(40))
    @given(configs())
    def round_trip(sample: tuple[dict[str, dict[str, Any]], int]) -> None:
        raw, layout = sample
        text, lines = to_toml(raw, layout)
        path = directory / "conf.toml"
        path.write_text(text, encoding="utf-8")
        cfg = load_config(path)
        tables = {"server": cfg.server, "backend": cfg.backend, "guard": cfg.guard_raw,
                  "audit": cfg.audit, "repair": cfg.repair, "limits": cfg.limits}  # fmt: skip
        for section, values in raw.items():
            for key, value in values.items():
                got = getattr(cfg.compat, key) if section == "compat" else tables[section][key]
                if (section, key, value) == ("limits", "max_result_rows", -1):
                    value = cfg.guard.max_limit
                assert got == value, (section, key)
                assert type(got) is type(value) or isinstance(got, float), (section, key)
        found = key_lines(text)
        assert {k: found.get(k) for k in lines} == lines, text

    round_trip()


# ---------------------------------------------------------------- every error at once


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "query_guard", *args], capture_output=True, text=True,
        timeout=120, check=False, cwd=cwd,
    )  # fmt: skip


def test_a_user_sees_every_config_error_at_once_with_did_you_mean(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[guard]\ndefault_limt = 5\nread_only = "x"\n\n[servr]\nbolt = "x"\n')
    done = _cli("check", "--config", str(bad), "RETURN 1")
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == f"query-guard: 3 configuration errors in {bad}:"
    assert lines[1].startswith(
        f"  {bad}:2: guard.default_limt: unknown key (did you mean 'default_limit'?); known keys: "
    )
    assert lines[2] == f"  {bad}:3: guard.read_only: must be bool, got 'x'"
    assert lines[3].startswith(f"  {bad}:5: servr: unknown section (did you mean 'server'?)")


def test_rule_tables_report_every_error_with_did_you_mean(tmp_path: Path) -> None:
    bad = tmp_path / "rules.toml"
    bad.write_text("[rules.limts]\nx = 1\n\n[rules.gremlin_scans]\nblok = true\n")
    done = _cli("check", "--config", str(bad), "RETURN 1")
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0] == f"query-guard: 2 configuration errors in {bad}:"
    assert lines[1].startswith(f"  {bad}:1: rules.limts: unknown rule (did you mean 'limits'?)")
    assert lines[2].startswith(
        f"  {bad}:5: rules.gremlin_scans.blok: unknown option (did you mean 'block'?)"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "--dialect", "nosuch", "SELECT 1"], "query-guard: --dialect: Unknown dialect"),
        (["check", "--schema", "nope.json", "RETURN 1"],
         "query-guard: --schema: cannot read schema file nope.json"),
        (["check", "--disable", "limts", "RETURN 1"],
         "query-guard: --disable: cannot disable unknown rule(s) limts"),
        (["check", "--config", "nope.toml", "RETURN 1"],
         "query-guard: --config: file not found: nope.toml"),
        (["schema", "--uri", "bolt://127.0.0.1:1", "--user", "u", "--password-env", "NO_SUCH_VAR"],
         "query-guard: --password-env: environment variable NO_SUCH_VAR is not set"),
    ],
)  # fmt: skip
def test_a_message_names_the_flag_that_caused_it(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = _cli(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(message), done.stderr
