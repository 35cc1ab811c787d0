"""Give raw dotted chains their Gremlin meaning: traversal, predicate, enum, strategy, variable.

Works top-down so that each argument is read in the context of its step (`asNumber(int)` is a
GType, `withStrategies(ReadOnlyStrategy)` a strategy, `xx1` a variable). Anything that is valid
syntax for our generic grammar but not Gremlin -- a chain rooted at `Runtime` or `System`, a
method on a variable, `new File(..)`, `getClass()` -- raises `GremlinScriptError` with its span;
a mere mistake (unknown step, missing spawn step) raises `GremlinSyntaxError`.
"""

from __future__ import annotations

import datetime as _dt
import uuid as _uuid

from query_guard.gremlin import lexicon as lx
from query_guard.gremlin.ast import (
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
    Span,
    Step,
    Strategy,
    StrategyOption,
    String,
    Traversal,
    UUIDLit,
    Variable,
)
from query_guard.gremlin.errors import GremlinScriptError, GremlinSyntaxError
from query_guard.gremlin.transform import RawChain, RawNamed, RawSegment

_KNOWN_METHODS = lx.STEPS | lx.SOURCE_STEPS | lx.TERMINAL_STEPS | lx.SPAWN_STEPS
_STRATEGY_CONTEXT = frozenset({"withStrategies", "withoutStrategies"})
_BARE_LITERALS: dict[str, tuple[str, object]] = {
    "true": ("boolean", True), "false": ("boolean", False), "null": ("null", None),
    "NaN": ("double", float("nan")), "Infinity": ("double", float("inf")),
}


class Interpreter:
    """Turns the output of `ChainBuilder` into a finished AST for one text."""

    def __init__(self, text: str) -> None:
        self.text = text

    # ------------------------------------------------------------ errors

    def syntax(self, span: Span, message: str,
               expected: list[str] | None = None) -> GremlinSyntaxError:
        offset = span[0]
        line = self.text.count("\n", 0, offset) + 1
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return GremlinSyntaxError(line, column, offset, expected or [], message)

    # ------------------------------------------------------------ top level

    def query(self, value: Arg, allow_anonymous: bool = False) -> Traversal:
        if isinstance(value, RawChain):
            head = value.segments[0]
            if head.name == "g" and head.args is None and not head.new:
                return self.root(value)
            if head.name == "__" and head.args is None and allow_anonymous:
                return self.anonymous(value.segments[1:], value.span, value.segments[0])
            if self._looks_like_gremlin(value):
                raise self.syntax(head.span, "a traversal must start with 'g'", ["g"])
            raise self._foreign(value)
        raise self.syntax(value.span, "expected a traversal starting with 'g'", ["g"])

    def _looks_like_gremlin(self, chain: RawChain) -> bool:
        head = chain.segments[0]
        name = head.name
        if head.new or name in lx.GROOVY_KEYWORDS:
            return False
        if name in lx.STEPS or name in lx.PREDICATES or name == "__":
            return True
        # a lone lower-case word is a mistake; `java.lang.Runtime` or `x.foo()` is code
        return head.args is None and len(chain.segments) == 1 and name[:1].islower()

    def _foreign(self, chain: RawChain) -> GremlinScriptError:
        """A chain that is not Gremlin: class reference, Groovy call or object creation."""
        head = chain.segments[0]
        if head.new:
            return GremlinScriptError(f"object creation 'new {head.name}' is not Gremlin",
                                      head.span, "groovy")
        if head.name in lx.GROOVY_KEYWORDS:
            return GremlinScriptError(f"Groovy keyword '{head.name}' is not Gremlin",
                                      head.name_span, "groovy")
        if head.args is not None:
            return GremlinScriptError(f"call of '{head.name}()' is not a Gremlin step",
                                      chain.span, "method_call")
        return GremlinScriptError(f"reference to '{head.name}' is outside the traversal language",
                                  chain.span, "class_reference")

    # ------------------------------------------------------------ traversals

    def root(self, chain: RawChain) -> Traversal:
        segments = chain.segments[1:]
        source: list[Step] = []
        i = 0
        while i < len(segments) and segments[i].name in lx.SOURCE_STEPS:
            self._check_method(segments[i])
            source.append(self.step(segments[i]))
            i += 1
        if i == len(segments):
            end = chain.span[1]
            raise self.syntax((end, end), "expected a spawn step after the traversal source",
                              sorted(lx.SPAWN_STEPS))
        first = segments[i]
        self._check_method(first)
        if first.name not in lx.SPAWN_STEPS:
            raise self.syntax(first.name_span, f"'{first.name}' cannot start a traversal; "
                              "expected a spawn step", sorted(lx.SPAWN_STEPS))
        spawn = self.step(first)
        steps, terminal = self.steps(segments[i + 1:], allow_terminal=True)
        return Traversal(chain.span, source, spawn, steps, False, terminal)

    def anonymous(self, segments: list[RawSegment], span: Span,
                  prefix: RawSegment | None = None) -> Traversal:
        if not segments:
            assert prefix is not None
            raise self.syntax((prefix.span[1], prefix.span[1]), "expected a step after '__'")
        steps, _ = self.steps(segments, allow_terminal=False)
        return Traversal(span, [], None, steps, True, None)

    def steps(self, segments: list[RawSegment],
              allow_terminal: bool) -> tuple[list[Step], Step | None]:
        steps: list[Step] = []
        for n, seg in enumerate(segments):
            if seg.name in lx.TERMINAL_STEPS and seg.args is not None and seg.name not in lx.STEPS:
                if not allow_terminal:
                    raise self.syntax(seg.name_span, f"terminal step '{seg.name}' inside an "
                                      "anonymous traversal")
                if n != len(segments) - 1:
                    # `.next().property(..)` works on the result object: Groovy/Java API use
                    after = segments[n + 1]
                    raise GremlinScriptError(
                        f"method '{after.name}' called on the result of '{seg.name}()' is "
                        "Groovy/Java, not Gremlin", (after.span[0], segments[-1].span[1]),
                        "method_call")
                return steps, self.step(seg)
            self._check_method(seg)
            steps.append(self.step(seg))
        return steps, None

    def _check_method(self, seg: RawSegment) -> None:
        if seg.name in lx.REFLECTION_METHODS or seg.name in lx.GROOVY_KEYWORDS:
            raise GremlinScriptError(f"'{seg.name}' is a Groovy/Java method, not a Gremlin step",
                                     seg.span, "method_call")
        if seg.args is None:
            if seg.name in _KNOWN_METHODS:  # `g.V.out` is a slip, not an attempt at Groovy
                raise self.syntax((seg.span[1], seg.span[1]), f"step '{seg.name}' needs "
                                  "parentheses", ["'('"])
            raise GremlinScriptError(f"property access '.{seg.name}' is Groovy, not Gremlin",
                                     seg.span, "method_call")
        if seg.new:
            raise GremlinScriptError(f"object creation 'new {seg.name}' is not Gremlin",
                                     seg.span, "groovy")
        if seg.name not in _KNOWN_METHODS:
            raise self.syntax(seg.name_span, f"unknown step '{seg.name}'")

    def step(self, seg: RawSegment) -> Step:
        assert seg.args is not None
        args = [self.value(a, seg.name) for a in seg.args.args]
        return Step(seg.span, seg.name, seg.name_span, args)

    # ------------------------------------------------------------ values

    def value(self, node: Arg | RawNamed, ctx: str | None) -> Arg:
        if node.__class__ is String or node.__class__ is Literal:  # decoded by the parser
            return node  # type: ignore[return-value]
        if isinstance(node, RawNamed):
            raise self.syntax(node.key_span, f"named argument '{node.key}:' outside a strategy")
        if isinstance(node, RawChain):
            return self.chain(node, ctx)
        if isinstance(node, (ListLit, SetLit)):
            node.items = [self.value(i, None) for i in node.items]
        elif isinstance(node, MapLit):
            node.entries = [self.entry(e) for e in node.entries]
        return node

    def entry(self, entry: MapEntry) -> MapEntry:
        key = entry.key
        if isinstance(key, RawChain) and not key.paren and len(key.segments) == 1:
            seg = key.segments[0]
            if seg.args is None and not seg.new:  # naked key: `[name: 1]` means "name"
                entry.key = String(seg.span, seg.name, naked=True)
                entry.value = self.value(entry.value, None)
                return entry
        entry.key = self.value(key, None)
        entry.value = self.value(entry.value, None)
        return entry

    def chain(self, chain: RawChain, ctx: str | None) -> Arg:
        segs = chain.segments
        head = segs[0]
        if head.new:
            if len(segs) == 1 and head.name.endswith("Strategy"):
                return self.strategy(head, chain.span)
            raise self._foreign(chain)
        if head.args is None and head.name == "__":
            return self.anonymous(segs[1:], chain.span, head)
        if head.args is None and head.name == "g":
            return self.root(chain)
        if head.args is None and len(segs) == 1:
            return self.bare_name(head, ctx)
        if head.args is None:
            return self.qualified(chain, ctx)
        return self.call(chain, ctx)

    def bare_name(self, seg: RawSegment, ctx: str | None) -> Arg:
        name = seg.name
        if name in _BARE_LITERALS:
            gtype, value = _BARE_LITERALS[name]
            return Literal(seg.span, gtype, value)  # type: ignore[arg-type]
        if ctx in lx.GTYPE_CONTEXT_STEPS and name in lx.ENUMS["GType"]:
            return Enum(seg.span, "GType", lx.ENUMS["GType"][name], long_form=False)
        if name in lx.SHORT_ENUMS:
            kind, value = lx.SHORT_ENUMS[name]
            return Enum(seg.span, kind, value, long_form=False)
        if ctx in _STRATEGY_CONTEXT and name.endswith("Strategy"):
            return Strategy(seg.span, name, [])
        if name in lx.GROOVY_KEYWORDS:
            raise GremlinScriptError(f"Groovy keyword '{name}' is not Gremlin", seg.span, "groovy")
        return Variable(seg.span, name)

    def qualified(self, chain: RawChain, ctx: str | None) -> Arg:
        cls, member = chain.segments[0], chain.segments[1]
        rest = chain.segments[2:]
        if cls.name in ("P", "TextP") and member.args is not None:
            return self.predicate(chain.segments[1:], chain.span, ctx, cls.name)
        if (cls.name == "Cardinality" and member.args is not None and not rest
                and member.name in lx.ENUMS["Cardinality"]):
            return self.cardinality_value(member, chain.span, ctx)
        if cls.name in lx.ENUMS and member.args is not None:
            raise self.syntax(member.name_span, f"{cls.name}.{member.name}() is not Gremlin")
        if cls.name in lx.ENUMS:
            if rest:
                raise GremlinScriptError(f"method '{rest[0].name}' on an enum is not Gremlin",
                                         chain.span, "method_call")
            canonical = lx.ENUMS[cls.name].get(member.name)
            if canonical is None:
                raise self.syntax(member.name_span, f"'{member.name}' is not a member of "
                                  f"{cls.name}", sorted(lx.ENUMS[cls.name]))
            return Enum(chain.span, cls.name, canonical, long_form=True)
        raise self._foreign(chain)

    def call(self, chain: RawChain, ctx: str | None) -> Arg:
        head = chain.segments[0]
        assert head.args is not None
        name = head.name
        if name in lx.PREDICATES and (name != "not" or self._is_predicate_not(head)):
            return self.predicate(chain.segments, chain.span, ctx, None)
        if len(chain.segments) == 1:
            if name in lx.DATETIME_FUNCS:
                return self.datetime(head)
            if name in lx.UUID_FUNCS:
                return self.uuid(head)
            if name in lx.ENUMS["Cardinality"]:
                return self.cardinality_value(head, chain.span, ctx)
            if name.endswith("Strategy") and name[:1].isupper():
                return self.strategy(head, chain.span)
        if name not in lx.STEPS:
            if name[:1].isupper() or name in lx.REFLECTION_METHODS:
                raise self._foreign(chain)
            raise self.syntax(head.name_span, f"unknown step '{name}'")
        return self.anonymous(chain.segments, chain.span)

    def _is_predicate_not(self, head: RawSegment) -> bool:
        # not(P) is the predicate P.not; not(traversal) is the not() step.
        assert head.args is not None
        if len(head.args.args) != 1:
            return False
        arg = head.args.args[0]
        if not isinstance(arg, RawChain):
            return False
        first = arg.segments[0]
        if first.name in ("P", "TextP") and first.args is None:
            return True
        return first.args is not None and first.name in lx.PREDICATES and (
            first.name != "not" or self._is_predicate_not(first))

    def predicate(self, segs: list[RawSegment], span: Span, ctx: str | None,
                  cls: str | None) -> Predicate:
        base = segs[0]
        kind = lx.PREDICATES.get(base.name)
        if kind is None or (cls is not None and cls == "P" and kind == "TextP"):
            raise self.syntax(base.name_span, f"'{base.name}' is not a {cls or 'P'} predicate",
                              sorted(lx.PREDICATES))
        assert base.args is not None
        low, high = lx.PREDICATE_ARITY[base.name]
        if not low <= len(base.args.args) <= (high if high is not None else low + 10**9):
            count = f"{low}" if low == high else f"{low} to {high}"
            raise self.syntax(base.args.span, f"{base.name}() takes {count} argument(s)")
        args = [self.value(a, base.name) for a in base.args.args]
        pred = Predicate(span, kind, base.name, args, [], long_form=cls is not None)
        for seg in segs[1:]:
            if seg.name not in lx.PREDICATE_LINKS or seg.args is None:
                raise self.syntax(seg.name_span, f"'{seg.name}' cannot follow a predicate",
                                  sorted(lx.PREDICATE_LINKS))
            pred.chain.append(self.link(seg, ctx))
        return pred

    def link(self, seg: RawSegment, ctx: str | None) -> PredicateLink:
        assert seg.args is not None
        if seg.name == "negate":
            if seg.args.args:
                raise self.syntax(seg.name_span, "negate() takes no arguments")
            return PredicateLink(seg.span, "negate", None)
        if len(seg.args.args) != 1:
            raise self.syntax(seg.name_span, f"{seg.name}() takes one predicate")
        other = self.value(seg.args.args[0], ctx)
        if not isinstance(other, Predicate):
            raise self.syntax(seg.args.span, f"{seg.name}() needs a predicate argument")
        return PredicateLink(seg.span, seg.name, other)

    def cardinality_value(self, seg: RawSegment, span: Span, ctx: str | None) -> CardinalityValue:
        assert seg.args is not None
        if len(seg.args.args) != 1:
            raise self.syntax(seg.name_span, f"Cardinality.{seg.name}() takes one value")
        return CardinalityValue(span, seg.name, self.value(seg.args.args[0], ctx))

    def strategy(self, seg: RawSegment, span: Span) -> Strategy:
        options: list[StrategyOption] = []
        for a in seg.args.args if seg.args is not None else []:
            if not isinstance(a, RawNamed):
                raise self.syntax(a.span, f"{seg.name} options are written 'name: value'")
            options.append(StrategyOption(a.span, a.key, self.value(a.value, a.key)))
        return Strategy(span, seg.name, options)

    def datetime(self, seg: RawSegment) -> DateTimeLit:
        assert seg.args is not None
        args = seg.args.args
        if not args:
            return DateTimeLit(seg.span, None)
        if len(args) != 1 or not isinstance(args[0], String):
            raise self.syntax(seg.name_span, f"{seg.name}() takes one string")
        text = args[0].value.strip()
        try:
            value = _dt.datetime.fromisoformat(text)
        except ValueError as exc:
            raise self.syntax(args[0].span, f"bad datetime '{text}': {exc}") from None
        if value.tzinfo is None:  # TinkerPop reads zone-less datetimes as UTC
            value = value.replace(tzinfo=_dt.UTC)
        return DateTimeLit(seg.span, value)

    def uuid(self, seg: RawSegment) -> UUIDLit:
        assert seg.args is not None
        args = seg.args.args
        if not args:
            return UUIDLit(seg.span, None)
        if len(args) != 1 or not isinstance(args[0], String):
            raise self.syntax(seg.name_span, "UUID() takes one string")
        try:
            return UUIDLit(seg.span, _uuid.UUID(args[0].value))
        except ValueError:
            raise self.syntax(args[0].span, f"bad UUID '{args[0].value}'") from None
