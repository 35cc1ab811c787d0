"""Translate between the Gremlin AST and gremlinpython `Bytecode`, both ways.

`to_bytecode` builds exactly what gremlinpython's fluent API builds for the same traversal
(`g.V().has('name', P.gt(1))` -> the same instructions, `P`/`TextP`/enum objects, `Binding` for
variables, nested `Bytecode` for anonymous traversals, source instructions for `with*`), so a
checked text can be executed as bytecode, never as a Groovy script. `from_bytecode` reads bytecode
a client sent into the same AST (spans are (0, 0)), so the same rules guard both paths; a lambda
anywhere in it raises `GremlinScriptError` (SEC.SCRIPT material).
"""

from __future__ import annotations

import datetime as _dt
import functools
import inspect
import uuid as _uuid
import warnings
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from gremlin_python import statics
from gremlin_python.process import strategies as _strategies
from gremlin_python.process import traversal as _tv
from gremlin_python.process.strategies import OptionsStrategy
from gremlin_python.process.traversal import Binding, Bytecode, P, TextP, TraversalStrategy

from query_guard.gremlin.ast import (
    Arg,
    CardinalityValue,
    DateTimeLit,
    Enum,
    ListLit,
    Literal,
    MapLit,
    Predicate,
    SetLit,
    Step,
    Strategy,
    String,
    Traversal,
    UUIDLit,
    Variable,
)
from query_guard.gremlin.bytecode_reader import BytecodeReader, Float32
from query_guard.gremlin.errors import BytecodeError
from query_guard.gremlin.printer import to_text

__all__ = ["Float32", "from_bytecode", "python_enum", "to_bytecode"]

# Constant holders whose members are plain strings/ints in gremlinpython, not enums.
CONSTANT_CLASSES: dict[str, type] = {
    "WithOptions": _tv.WithOptions, "IO": _tv.IO, "ConnectedComponent": _tv.ConnectedComponent,
    "PageRank": _tv.PageRank, "PeerPressure": _tv.PeerPressure, "ShortestPath": _tv.ShortestPath,
}
_INT_TYPES: dict[str, Any] = {
    "long": statics.long, "short": statics.short, "byte": statics.SingleByte,
    "biginteger": statics.bigint,
}
_STRATEGY_STEPS = ("withStrategies", "withoutStrategies")


def to_bytecode(traversal: Traversal, bindings: Mapping[str, object] | None = None) -> Bytecode:
    """The gremlinpython bytecode of `traversal` (terminal step not included: the caller runs
    it as `next()`/`toList()`/...). `bindings` give values to variables (`Binding(name, v)`)."""
    return _Writer(bindings or {}).traversal(traversal)


def from_bytecode(bytecode: Bytecode, *, anonymous: bool = False,
                  terminal: str | None = None) -> Traversal:
    """The AST of `bytecode` (spans (0, 0)). Raises `GremlinScriptError` for lambdas and
    `BytecodeError` for anything else that is not a traversal."""
    return BytecodeReader().traversal(bytecode, anonymous=anonymous, terminal=terminal)


def _snake(name: str) -> str:
    out = "".join("_" + c.lower() if c.isupper() else c for c in name)
    return out.lstrip("_")


def python_enum(kind: str, value: str) -> object:
    """gremlinpython's object for an enum (`T.id`, `Pop.all_`) or a constant
    (`WithOptions.tokens`)."""
    if kind in CONSTANT_CLASSES:
        return getattr(CONSTANT_CLASSES[kind], value)
    cls = getattr(_tv, kind)
    # gremlinpython 3.8 spells members in snake case (`Barrier.norm_sack`, `Merge.on_create`),
    # with a trailing `_` where the name is a Python word (`Pop.all_`); `Direction.OUT` stays.
    for name in (_snake(value), _snake(value) + "_", value, value + "_"):
        if name in cls.__members__:
            return cls[name]
    raise BytecodeError(f"gremlinpython has no {kind}.{value}")


@functools.cache
def _fqcn(cls: type[TraversalStrategy]) -> str | None:
    """The Java class name gremlinpython gives a strategy (found by building one)."""
    params = inspect.signature(cls.__init__).parameters.values()
    required = {p.name: None for p in params
                if p.name != "self" and p.default is inspect.Parameter.empty
                and p.kind is p.POSITIONAL_OR_KEYWORD}
    try:
        with warnings.catch_warnings():  # deprecated strategies warn when built; we only look
            warnings.simplefilter("ignore", DeprecationWarning)
            return cls(**required).fqcn  # type: ignore[arg-type]
    except Exception:  # a constructor we cannot satisfy; the strategy goes without its name
        return None


def strategy_class(name: str) -> type[TraversalStrategy]:
    cls = getattr(_strategies, name, None)
    if isinstance(cls, type) and issubclass(cls, TraversalStrategy):
        return cls
    # A provider-specific strategy gremlinpython does not know: an empty subclass carries the name.
    return type(name, (TraversalStrategy,), {})


class _Writer:
    def __init__(self, bindings: Mapping[str, object]) -> None:
        self.bindings = bindings

    def traversal(self, t: Traversal) -> Bytecode:
        bc = Bytecode()
        for step in t.source:
            self.source_step(bc, step)
        for step in t.all_steps:
            args = [self.value(a, step.name) for a in step.args]
            bc.add_step(step.name, *args)
            for a in args:
                if isinstance(a, Bytecode):  # like gremlinpython, parents see child bindings
                    bc.bindings.update(a.bindings)
        return bc

    def source_step(self, bc: Bytecode, step: Step) -> None:
        args = [self.value(a, step.name) for a in step.args]
        if step.name == "with":  # gremlinpython folds g.with_(k, v) into one OptionsStrategy
            if not args or len(args) > 2 or not isinstance(args[0], str):
                raise BytecodeError("with() takes a string key and an optional value")
            value = True if len(args) == 1 else args[1]
            for inst in bc.source_instructions:
                if inst[0] == "withStrategies" and type(inst[1]) is OptionsStrategy:
                    inst[1].configuration[args[0]] = value
                    return
            bc.add_source("withStrategies", OptionsStrategy(**{args[0]: value}))
            return
        bc.add_source(step.name, *args)

    def value(self, node: Arg, ctx: str | None = None) -> Any:
        if isinstance(node, String):
            return node.value
        if isinstance(node, Literal):
            return self.literal(node)
        if isinstance(node, Variable):
            return Binding(node.name, self.bindings.get(node.name))
        if isinstance(node, Enum):
            return python_enum(node.kind, node.value)
        if isinstance(node, Predicate):
            return self.predicate(node)
        if isinstance(node, Traversal):
            if not node.anonymous:
                raise BytecodeError("a traversal spawned from 'g' cannot be an argument in "
                                    "bytecode; use an anonymous traversal (__.)")
            return self.traversal(node)
        if isinstance(node, ListLit):
            return [self.value(i) for i in node.items]
        if isinstance(node, SetLit):
            return self.set(node)
        if isinstance(node, MapLit):
            return self.map(node)
        if isinstance(node, Strategy):
            return self.strategy(node, as_class=ctx == "withoutStrategies")
        if isinstance(node, DateTimeLit):
            return node.value if node.value is not None else _dt.datetime.now(_dt.UTC)
        if isinstance(node, UUIDLit):
            return node.value if node.value is not None else _uuid.uuid4()
        if isinstance(node, CardinalityValue):
            card = python_enum("Cardinality", node.cardinality)
            return _tv.CardinalityValue(card, self.value(node.value))
        raise BytecodeError(f"cannot translate {type(node).__name__} to bytecode")

    def literal(self, node: Literal) -> Any:
        value = node.value
        if node.gtype in _INT_TYPES:
            return _INT_TYPES[node.gtype](value)
        if node.gtype == "float":
            return Float32(value)  # type: ignore[arg-type]
        if node.gtype == "bigdecimal":
            return statics.bigdecimal(value if isinstance(value, Decimal) else Decimal(str(value)))
        return value

    def set(self, node: SetLit) -> set[Any]:
        # Sorted by canonical text so that translation is deterministic.
        items = sorted(node.items, key=to_text)
        try:
            return {self.value(i) for i in items}
        except TypeError as exc:
            raise BytecodeError(f"set element cannot be sent as bytecode: {exc}") from None

    def map(self, node: MapLit) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for e in node.entries:
            try:
                out[self.value(e.key)] = self.value(e.value)
            except TypeError as exc:
                raise BytecodeError(f"map key cannot be sent as bytecode: {exc}") from None
        return out

    def predicate(self, node: Predicate) -> P:
        cls = TextP if node.kind == "TextP" else P
        args = node.args
        if node.name in ("within", "without"):
            if len(args) == 1 and isinstance(args[0], (ListLit, SetLit)):
                items = args[0].items
                args = sorted(items, key=to_text) if isinstance(args[0], SetLit) else items
            pred: P = cls(node.name, [self.value(a) for a in args])
        elif node.name == "not" and len(args) == 1:
            pred = P("not", self.value(args[0]))
        else:
            values = [self.value(a) for a in args]
            if len(values) > 2:
                raise BytecodeError(f"{node.kind}.{node.name}() takes at most two values")
            pred = cls(node.name, *values) if values else cls(node.name, None)
        for link in node.chain:
            if link.op == "negate":  # Java's P.not(p) is p.negate(); gremlinpython has no negate
                pred = P("not", pred)
            else:
                assert link.other is not None
                pred = P(link.op, pred, self.predicate(link.other))
        return pred

    def strategy(self, node: Strategy, as_class: bool) -> Any:
        cls = strategy_class(node.name)
        if as_class:  # withoutStrategies takes classes, as in the fluent API
            return cls
        config = {o.key: self.value(o.value) for o in node.config}
        obj = cls.__new__(cls)
        TraversalStrategy.__init__(obj, configuration=config, fqcn=_fqcn(cls))
        if cls.__module__ != _strategies.__name__:
            obj.strategy_name = node.name
        return obj

