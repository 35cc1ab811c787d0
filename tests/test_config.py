"""Operator configuration: validation messages name the key; the example documents every key."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from proxy.config import documented_keys, load_config, parse_config
from proxy.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parent.parent / "conf" / "query-guard.toml"


def test_defaults() -> None:
    cfg = parse_config({})
    assert cfg.guard.read_only is True
    assert (cfg.guard.default_limit, cfg.guard.max_limit) == (1000, 10000)
    assert "db.labels" in cfg.guard.allowed_procedures
    assert cfg.server["bolt"] == "127.0.0.1:7687"
    assert cfg.backend["cypher"] == ""  # embedded default


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"guard": {"read_only": "yes"}}, "guard.read_only"),
        ({"guard": {"default_limt": 5}}, "guard.default_limt"),
        ({"guard": {"default_limit": -1}}, "guard.default_limit"),
        ({"guard": {"default_limit": 50, "max_limit": 10}}, "guard.default_limit"),
        ({"guard": {"reciprocity_threshold": 2.0}}, "guard.reciprocity_threshold"),
        ({"guard": {"max_limit": True}}, "guard.max_limit"),
        ({"servr": {}}, "servr"),
        ({"rules": {"limits": 3}}, "rules.limits"),
    ],
)
def test_invalid_values_name_the_key(raw: dict, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    assert info.value.key == key
    assert f"'{key}'" in str(info.value)


def test_example_config_loads_and_documents_every_key() -> None:
    cfg = load_config(EXAMPLE)
    assert cfg.guard.read_only
    text = EXAMPLE.read_text()
    raw = tomllib.loads(text)
    for section, keys in documented_keys().items():
        assert set(raw[section]) == keys, section
    for key in ("base_url", "model", "api_key_env", "timeout_seconds", "max_tokens"):
        assert re.search(rf"^# {key} = ", text, re.M), key


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[guard\nread_only = true")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)
