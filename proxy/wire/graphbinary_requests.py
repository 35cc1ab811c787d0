"""GraphBinary readers for the values only *requests* carry: predicates, lambdas, strategies,
classes.

gremlinpython is a client: its `GraphBinaryReader` reads what a server answers and leaves the
request-only types unreadable (their `objectify` raises). The Gremlin front reads requests, so
it registers these readers on top of gremlinpython's own (`request_reader()`); each is the
inverse of the matching gremlinpython serializer (`PSerializer`, `TextPSerializer`,
`LambdaSerializer`, `TraversalStrategySerializer`, `ClassSerializer`), building the same
gremlinpython objects the client started from.
"""

from __future__ import annotations

import functools
import io
from enum import Enum
from typing import Any

from gremlin_python.process import traversal as tv
from gremlin_python.process.traversal import P, TextP, TraversalStrategy
from gremlin_python.structure.io.graphbinaryV1 import DataType, GraphBinaryReader
from gremlin_python.structure.io.util import SymbolUtil

_PAIRED = frozenset({"between", "inside", "outside", "and", "or"})
_LISTED = frozenset({"within", "without"})


class Lambda:
    """A lambda read from a request; the bytecode reader refuses it (`SEC.SCRIPT`)."""

    def __init__(self, language: str, script: str, arguments: int) -> None:
        self.language = language
        self.script = script
        self.arguments = arguments

    def __repr__(self) -> str:
        return f"Lambda({self.language!r}, {self.script!r})"


class GremlinClass:
    """A `Class` argument (a strategy's name in `withoutStrategies`)."""

    def __init__(self, name: str) -> None:
        self.name = name


def _string(buf: io.BytesIO, reader: GraphBinaryReader) -> str:
    return str(reader.to_object(buf, DataType.string, False))


def _nullable(buf: io.BytesIO, nullable: bool) -> bool:
    """True when the value is null (consumes the flag byte of a nullable value)."""
    return nullable and buf.read(1)[0] == 0x01


def _predicate(kind: type[P] | type[TextP]) -> type:
    class Reader:
        @classmethod
        def objectify(
            cls, buf: io.BytesIO, reader: GraphBinaryReader, nullable: bool = True
        ) -> Any:
            if _nullable(buf, nullable):
                return None
            operator = _string(buf, reader)
            count = reader.to_object(buf, DataType.int, False)
            args = [reader.read_object(buf) for _ in range(count)]
            if operator in _LISTED:
                return kind(operator, args)
            if operator in _PAIRED and len(args) == 2:
                return kind(operator, args[0], args[1])
            return kind(operator, args[0] if args else None)

    return Reader


class _LambdaReader:
    @classmethod
    def objectify(cls, buf: io.BytesIO, reader: GraphBinaryReader, nullable: bool = True) -> Any:
        if _nullable(buf, nullable):
            return None
        language = _string(buf, reader)
        script = _string(buf, reader)
        arguments = reader.to_object(buf, DataType.int, False)
        return Lambda(language, script, arguments)


class _ClassReader:
    @classmethod
    def objectify(cls, buf: io.BytesIO, reader: GraphBinaryReader, nullable: bool = True) -> Any:
        if _nullable(buf, nullable):
            return None
        return GremlinClass(_string(buf, reader))


class _StrategyReader:
    @classmethod
    def objectify(cls, buf: io.BytesIO, reader: GraphBinaryReader, nullable: bool = True) -> Any:
        if _nullable(buf, nullable):
            return None
        fqcn = _ClassReader.objectify(buf, reader, False).name
        configuration = reader.to_object(buf, DataType.map, False)
        name = fqcn.rsplit(".", 1)[-1]
        return TraversalStrategy(name, configuration, fqcn)


def _enum(python_type: type[Enum]) -> type:
    """gremlinpython spells members that are Python keywords or builtins with a trailing `_`
    (`Pick.any_`, `Scope.global_`, `Pop.all_`) and its own reader misses them by their wire
    name (`any`); this one tries both."""

    class Reader:
        @classmethod
        def objectify(
            cls, buf: io.BytesIO, reader: GraphBinaryReader, nullable: bool = True
        ) -> Any:
            if _nullable(buf, nullable):
                return None
            name = str(reader.read_object(buf))
            members = python_type.__members__
            for candidate in (SymbolUtil.to_snake_case(name), name, name + "_"):
                if candidate in members:
                    return members[candidate]
            raise ValueError(f"{python_type.__name__}.{name} is not a known token")

    return Reader


_ENUMS = {
    DataType.barrier: tv.Barrier, DataType.cardinality: tv.Cardinality,
    DataType.column: tv.Column, DataType.direction: tv.Direction, DataType.dt: tv.DT,
    DataType.gtype: tv.GType, DataType.merge: tv.Merge, DataType.operator: tv.Operator,
    DataType.order: tv.Order, DataType.pick: tv.Pick, DataType.pop: tv.Pop,
    DataType.scope: tv.Scope, DataType.t: tv.T,
}  # fmt: skip


@functools.cache
def request_reader() -> GraphBinaryReader:
    """gremlinpython's reader plus the request-only types: one per process (it holds only
    its table of readers; building that table cost more than reading a small request)."""
    readers: dict[DataType, type] = {kind: _enum(cls) for kind, cls in _ENUMS.items()}
    readers.update(
        {
            DataType.p: _predicate(P),
            DataType.textp: _predicate(TextP),
            DataType.lambda_: _LambdaReader,
            DataType.clazz: _ClassReader,
            DataType.traversalstrategy: _StrategyReader,
        }
    )
    return GraphBinaryReader(readers)
