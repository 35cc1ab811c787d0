"""Read gremlinpython `Bytecode` (as sent by a client) into the Gremlin AST.

Every node gets the synthetic span (0, 0). The reader is the inverse of
`query_guard.gremlin.bytecode.to_bytecode`: AST -> bytecode -> AST prints the same canonical text.
Lambdas (a Python function in the bytecode, a GraphSON `g:Lambda`, a `Lambda`-named object)
raise `GremlinScriptError`; other foreign objects raise `BytecodeError`. An element a client
puts into its bytecode (`g.E(edge)`, `is(vertex)`, `withSideEffect("a", vertex)`) stands for
its id, as Gremlin Server reads `g.V(vertex)`; a property for its value, a path for its
objects.
"""

from __future__ import annotations

import datetime as _dt
import enum as _std_enum
import uuid as _uuid
from decimal import Decimal
from types import BuiltinFunctionType, FunctionType, LambdaType, MethodType
from typing import Any

from aenum import Enum as _AEnum
from gremlin_python import statics
from gremlin_python.process import traversal as _tv
from gremlin_python.process.traversal import Binding, Bytecode, P, TextP, TraversalStrategy
from gremlin_python.structure.graph import Element, Path, Property

from query_guard.gremlin import lexicon as lx
from query_guard.gremlin.ast import (
    NO_SPAN,
    Arg,
    CardinalityValue,
    DateTimeLit,
    Enum,
    ListLit,
    Literal,
    MapEntry,
    MapLit,
    Predicate,
    PredicateLink,
    SetLit,
    Step,
    Strategy,
    StrategyOption,
    String,
    Traversal,
    UUIDLit,
    Variable,
)
from query_guard.gremlin.errors import BytecodeError, GremlinScriptError


class Float32(float):
    """A Gremlin `float` (`1.5f`); gremlinpython has no such type and sends it as a double."""


_TOKENS_VALUES = {0: "none", 1: "ids", 2: "labels", 4: "keys", 8: "values", 15: "all"}
_INDEXER_VALUES = {0: "list", 1: "map"}
_IO_FORMATS = ("gryo", "graphson", "graphml")
_INT_CLASSES: tuple[tuple[type, str], ...] = (
    (statics.SingleByte, "byte"), (statics.short, "short"), (statics.long, "long"),
    (statics.bigint, "biginteger"),
)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _is_lambda(obj: object) -> bool:
    if isinstance(obj, (FunctionType, LambdaType, MethodType, BuiltinFunctionType)):
        return True
    if isinstance(obj, dict) and obj.get("@type") == "g:Lambda":
        return True
    # gremlinpython has no Lambda class (it sends functions); other codecs may have one.
    return type(obj).__name__ in ("Lambda", "GremlinLambda")


class BytecodeReader:
    """Stateless translator; one instance may read any number of bytecodes."""

    def traversal(self, bc: Bytecode, *, anonymous: bool, terminal: str | None = None) -> Traversal:
        if not isinstance(bc, Bytecode):
            raise BytecodeError(f"expected Bytecode, got {type(bc).__name__}")
        source = [self.step(inst) for inst in bc.source_instructions]
        steps = [self.step(inst) for inst in bc.step_instructions]
        term = Step(NO_SPAN, terminal, NO_SPAN, []) if terminal else None
        if anonymous:
            if source:
                raise BytecodeError("an anonymous traversal has no source instructions")
            return Traversal(NO_SPAN, [], None, steps, True, None)
        if not steps:
            raise BytecodeError("bytecode has no steps")
        if steps[0].name not in lx.SPAWN_STEPS:
            raise BytecodeError(f"'{steps[0].name}' cannot start a traversal")
        return Traversal(NO_SPAN, source, steps[0], steps[1:], False, term)

    def step(self, inst: list[Any]) -> Step:
        if not inst or not isinstance(inst[0], str):
            raise BytecodeError(f"malformed instruction {inst!r}")
        name, raw = inst[0], list(inst[1:])
        args = self.with_args(raw) if name == "with" and raw else [self.value(a) for a in raw]
        return Step(NO_SPAN, name, NO_SPAN, args)

    def with_args(self, raw: list[Any]) -> list[Arg]:
        # WithOptions/IO/... constants are plain strings and ints in bytecode: restore the names.
        key = raw[0]
        if not isinstance(key, str) or key not in lx.WITH_OPTION_KEYS:
            return [self.value(a) for a in raw]
        kind, member = lx.WITH_OPTION_KEYS[key]
        args: list[Arg] = [Enum(NO_SPAN, kind, member)]
        for value in raw[1:]:
            table = {"tokens": _TOKENS_VALUES, "indexer": _INDEXER_VALUES}.get(member)
            if table is not None and type(value) is int and value in table:
                args.append(Enum(NO_SPAN, "WithOptions", table[value]))
            elif kind == "IO" and value in _IO_FORMATS:
                args.append(Enum(NO_SPAN, "IO", value))
            else:
                args.append(self.value(value))
        return args

    def value(self, obj: Any) -> Arg:
        if _is_lambda(obj):
            raise GremlinScriptError("lambda in bytecode: code outside the traversal language",
                                     NO_SPAN, "lambda")
        if obj is None:
            return Literal(NO_SPAN, "null", None)
        if isinstance(obj, bool):
            return Literal(NO_SPAN, "boolean", obj)
        if isinstance(obj, int):
            return self.integer(obj)
        if isinstance(obj, float):
            return Literal(NO_SPAN, "float" if isinstance(obj, Float32) else "double", float(obj))
        if isinstance(obj, statics.BigDecimal):
            return Literal(NO_SPAN, "bigdecimal", obj.value)
        if isinstance(obj, Decimal):
            return Literal(NO_SPAN, "bigdecimal", obj)
        if isinstance(obj, str):
            return String(NO_SPAN, str(obj))
        if isinstance(obj, Binding):
            return Variable(NO_SPAN, obj.key)
        if isinstance(obj, (_AEnum, _std_enum.Enum)):
            return Enum(NO_SPAN, type(obj).__name__, _camel(obj.name))
        if isinstance(obj, P):
            return self.predicate(obj)
        if isinstance(obj, _tv.CardinalityValue):
            return self.cardinality_value(obj)
        if isinstance(obj, Bytecode):
            return self.traversal(obj, anonymous=True)
        if isinstance(obj, _tv.Traversal):
            return self.traversal(obj.bytecode, anonymous=True)
        if isinstance(obj, (list, tuple)):
            return ListLit(NO_SPAN, [self.value(i) for i in obj])
        if isinstance(obj, (set, frozenset)):
            return SetLit(NO_SPAN, [self.value(i) for i in obj])
        if isinstance(obj, dict):
            return MapLit(NO_SPAN, [MapEntry(NO_SPAN, self.value(k), self.value(v))
                                    for k, v in obj.items()])
        if isinstance(obj, TraversalStrategy):
            return self.strategy(obj)
        if isinstance(obj, type) and issubclass(obj, TraversalStrategy):
            return Strategy(NO_SPAN, obj.__name__, [])
        if isinstance(obj, _dt.datetime):
            value = obj if obj.tzinfo is not None else obj.replace(tzinfo=_dt.UTC)
            return DateTimeLit(NO_SPAN, value)
        if isinstance(obj, _uuid.UUID):
            return UUIDLit(NO_SPAN, obj)
        if isinstance(obj, Element):
            return self.value(obj.id)
        if isinstance(obj, Property):
            return self.value(obj.value)
        if isinstance(obj, Path):
            return self.value(list(obj.objects))
        raise BytecodeError(f"cannot read {type(obj).__name__} from bytecode")

    def integer(self, value: int) -> Literal:
        for cls, gtype in _INT_CLASSES:
            if isinstance(value, cls):
                return Literal(NO_SPAN, gtype, int(value))
        gtype = ("int" if -(2**31) <= value < 2**31
                 else "long" if -(2**63) <= value < 2**63 else "biginteger")
        return Literal(NO_SPAN, gtype, int(value))

    def predicate(self, p: P) -> Predicate:
        op = p.operator
        if op in ("and", "or") and isinstance(p.value, P) and isinstance(p.other, P):
            base = self.predicate(p.value)
            base.chain.append(PredicateLink(NO_SPAN, op, self.predicate(p.other)))
            return base
        kind = "TextP" if isinstance(p, TextP) else lx.PREDICATES.get(op, "P")
        if op in ("within", "without") and isinstance(p.value, (list, tuple)):
            args = [self.value(v) for v in p.value]
        elif p.other is not None:
            args = [self.value(p.value), self.value(p.other)]
        else:
            args = [self.value(p.value)]
        return Predicate(NO_SPAN, kind, op, args, [])

    def cardinality_value(self, cv: Bytecode) -> CardinalityValue:
        inst = cv.source_instructions[0] if cv.source_instructions else []
        if len(inst) != 3 or not isinstance(inst[1], _tv.Cardinality):
            raise BytecodeError("malformed CardinalityValue")
        return CardinalityValue(NO_SPAN, _camel(inst[1].name), self.value(inst[2]))

    def strategy(self, s: TraversalStrategy) -> Strategy:
        options = [StrategyOption(NO_SPAN, str(k), self.value(v))
                   for k, v in (s.configuration or {}).items()]
        return Strategy(NO_SPAN, s.strategy_name, options)
