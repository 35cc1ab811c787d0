"""Configuration errors in words: a pydantic `ValidationError` against the schema
(`query_guard.config.schema`) as the dotted keys it concerns (`guard.allowed_procedures[2]`)
and a message an operator can act on — a misspelt key or table gets "did you mean"."""

from __future__ import annotations

import difflib
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from query_guard.config.locate import KeyPath
from query_guard.config.schema import keys_of, model_at

_WANTED = {
    "int_type": "int", "float_type": "float", "bool_type": "bool", "string_type": "str",
    "list_type": "list", "dict_type": "a table",
    "model_type": "a table", "model_attributes_type": "a table", "tuple_type": "list",
}  # fmt: skip


def describe(
    exc: ValidationError, model: type[BaseModel], prefix: KeyPath = ()
) -> tuple[KeyPath, str]:
    """The first error of `exc` as (key path, message)."""
    return describe_all(exc, model, prefix)[0]


def describe_all(
    exc: ValidationError, model: type[BaseModel], prefix: KeyPath = ()
) -> list[tuple[KeyPath, str]]:
    """Every error of `exc` (pydantic collects them all) as (key path, message)."""
    return [_describe(err, model, prefix) for err in exc.errors(include_url=False)]


def did_you_mean(name: object, known: list[str]) -> str:
    """` (did you mean 'x'?)` for the closest known name, or ``."""
    close = difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _describe(err: Any, model: type[BaseModel], prefix: KeyPath) -> tuple[KeyPath, str]:
    loc: KeyPath = tuple(err["loc"])
    kind, value, ctx = err["type"], err.get("input"), err.get("ctx") or {}
    got = f", got {value!r}"
    if kind == "extra_forbidden":
        holder = model_at(model, loc[:-1])
        noun = getattr(holder, "noun", "key")
        names = sorted(keys_of(holder)) if holder is not None else []
        hint = did_you_mean(loc[-1], names)
        problem = f"unknown {noun}{hint}; known {noun}s: {', '.join(names) or 'none'}"
    elif kind in _WANTED:
        wanted = _WANTED[kind]
        problem = f"must be {wanted}{got}"
    elif kind == "literal_error":
        problem = f"must be one of {ctx.get('expected')}{got}"
    elif kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        op = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
        bound = next(f"{op[k]} {v}" for k, v in ctx.items() if k in op)
        problem = f"must be {bound}{got}"
    elif kind == "string_too_short":
        problem = "must not be empty"
    elif kind == "too_short":
        problem = (
            "must not be empty"
            if isinstance(value, str)
            else (f"must have at least {ctx.get('min_length')} item(s){got}")
        )
    elif kind == "too_long":
        problem = f"must have at most {ctx.get('max_length')} item(s){got}"
    elif kind == "missing":
        problem = "is required"
    elif kind == "value_error":
        problem = str(ctx.get("error") or err["msg"])
    else:
        problem = f"{err['msg'][0].lower()}{err['msg'][1:]}{got}"
    return (*prefix, *loc), problem


def dotted(path: KeyPath) -> str:
    """`("guard", "allowed_procedures", 2)` -> `guard.allowed_procedures[2]`; keys that are
    not bare TOML keys are quoted."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = part if part and all(c.isalnum() or c in "_-" for c in part) else repr(part)
            out += f".{text}" if out else text
    return out


def key_path(key: str) -> KeyPath:
    """`dotted()` read back: `rules.no_star.colour` -> `("rules", "no_star", "colour")`."""
    out: list[str | int] = []
    for m in re.finditer(r"'([^']*)'|\[(\d+)\]|([^.\[']+)", key):
        quoted, index, bare = m.groups()
        out.append(int(index) if index is not None else quoted if quoted is not None else bare)
    return tuple(out)
