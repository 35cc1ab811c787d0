"""Hypothesis strategies for valid configuration files, drawn from the schema's models, and a
TOML writer with varied layouts that records the line of every key it writes."""

from __future__ import annotations

import json
import random
import types
import typing
from typing import Any

from annotated_types import Ge, Gt, Le, MinLen
from hypothesis import strategies as st

from query_guard.config.schema import ConfigFile, table_model

SECTIONS = ("server", "backend", "guard", "audit", "compat", "repair", "limits")
TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=8)
NAME = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=8)
DIALECTS = st.sampled_from(["postgres", "sqlite", "duckdb", "mysql", "tsql"])
SOURCES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,7}", fullmatch=True).filter(lambda n: n != "g")


def _bounds(metadata: list[Any]) -> tuple[float | None, float | None]:
    lo = hi = None
    for m in metadata:
        if isinstance(m, Ge):
            lo = m.ge
        elif isinstance(m, Gt):
            lo = m.gt + 1
        elif isinstance(m, Le):
            hi = m.le
    return lo, hi  # type: ignore[return-value]


def _strategy(key: str, annotation: Any, metadata: list[Any]) -> st.SearchStrategy[Any]:
    if key == "sql_dialect":
        return DIALECTS
    if key == "gremlin_graphs":  # traversal source names: identifiers
        return st.dictionaries(SOURCES, TEXT, max_size=3)
    if key == "advertised_address":  # "host:port", one or a list
        address = st.builds("{}:{}".format, st.sampled_from(["lb", "qg-1", "10.0.0.2"]),
                            st.integers(1, 65535))  # fmt: skip
        return st.one_of(address, st.lists(address, max_size=3))
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):  # `Positive | Literal["auto"]`
        return st.one_of([_strategy(key, *_unwrapped(arg)) for arg in args])
    if origin is typing.Literal:
        return st.sampled_from(args)
    lo, hi = _bounds(metadata)
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        return st.integers(int(lo) if lo is not None else -(2**40), 2**40)
    if annotation is float:
        low, high = lo if lo is not None else -1e9, hi if hi is not None else 1e9
        ints = st.integers(int(low) + (int(low) < low), int(high))
        return st.one_of(ints, st.floats(low, high, allow_nan=False, allow_infinity=False))
    if annotation is str:
        return TEXT
    if origin is list:
        item = args[0]
        names = typing.get_origin(item) is typing.Annotated and any(
            isinstance(m, MinLen) for f in typing.get_args(item)[1:] for m in f.metadata
        )
        return st.lists(NAME if names else TEXT, max_size=3)
    if origin is dict:
        return st.dictionaries(TEXT, TEXT, max_size=3)
    raise AssertionError(f"no strategy for {key}: {annotation}")


def _unwrapped(annotation: Any) -> tuple[Any, list[Any]]:
    """`Annotated[int, Field(gt=0)]` -> (int, [Gt(0)])."""
    if typing.get_origin(annotation) is not typing.Annotated:
        return annotation, []
    base, *extras = typing.get_args(annotation)
    return base, [m for extra in extras for m in getattr(extra, "metadata", [extra])]


def _section(name: str) -> st.SearchStrategy[dict[str, Any]]:
    model = table_model(ConfigFile.model_fields[name].annotation)
    assert model is not None
    fields = {
        f.alias or k: _strategy(f.alias or k, f.annotation, f.metadata)
        for k, f in model.model_fields.items()
        if table_model(f.annotation) is None
    }
    return st.fixed_dictionaries({}, optional=fields)


@st.composite
def configs(draw: st.DrawFn) -> tuple[dict[str, dict[str, Any]], int]:
    """A valid raw configuration (some keys of some sections) and a layout seed."""
    raw = {name: draw(_section(name)) for name in SECTIONS if draw(st.booleans())}
    guard = raw.get("guard")
    if guard is not None:  # default_limit may not exceed max_limit
        cap, limit = guard.get("max_limit", 10000), guard.get("default_limit", 1000)
        if cap and limit > cap:
            guard["default_limit"] = cap
    return raw, draw(st.integers(0, 2**32))


def value_text(value: Any, rng: random.Random) -> list[str]:
    """TOML for `value`: one line, or several for a list written across lines."""
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, int | float):
        return [repr(value)]
    if isinstance(value, str):
        if rng.random() < 0.3 and "'" not in value:
            return [f"'{value}'"]
        return [json.dumps(value, ensure_ascii=False)]
    if isinstance(value, dict):
        pairs = [
            f"{json.dumps(k, ensure_ascii=False)} = {value_text(v, rng)[0]}"
            for k, v in value.items()
        ]
        return ["{ " + ", ".join(pairs) + " }" if pairs else "{}"]
    items = [value_text(v, rng)[0] for v in value]
    if items and rng.random() < 0.5:
        return ["[", *[f"    {item},  # item {i}" for i, item in enumerate(items)], "]"]
    return ["[" + ", ".join(items) + "]"]


def to_toml(
    raw: dict[str, dict[str, Any]], layout: int
) -> tuple[str, dict[tuple[str | int, ...], int]]:
    """`raw` as TOML text, laid out by `layout`, and the line of every key written."""
    rng = random.Random(layout)
    dotted = {name for name in raw if rng.random() < 0.3}
    out: list[str] = ["# generated"]
    lines: dict[tuple[str | int, ...], int] = {}

    def key(name: str) -> str:
        return f'"{name}"' if rng.random() < 0.2 else name

    def emit(section: str, prefix: str) -> None:
        for name, value in raw[section].items():
            if rng.random() < 0.2:
                out.append("")
            first, *rest = value_text(value, rng)
            lines[(section, name)] = len(out) + 1
            eq = rng.choice(["=", " = ", "  =\t"])
            out.append(
                f"{prefix}{key(name)}{eq}{first}" + ("  # note" if rng.random() < 0.2 else "")
            )
            for i, more in enumerate(rest[:-1]):
                lines[(section, name, i)] = len(out) + 1
                out.append(more)
            out.extend(rest[-1:])

    for section in sorted(dotted):
        emit(section, f"{key(section)}.")
    for section in raw:
        if section not in dotted:
            out.append(rng.choice([f"[{section}]", f'[ "{section}" ]', f"[{section}]  # table"]))
            lines[(section,)] = len(out)
            emit(section, "")
    return "\n".join(out) + "\n", lines
