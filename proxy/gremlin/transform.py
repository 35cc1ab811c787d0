"""Lark callbacks for `grammars/gremlin.lark`: tokens to literals and raw dotted chains.

The grammar is generic, so this stage only decodes literals and collects chains of `name(args)`
segments (`RawChain`) with exact spans. `query_guard.gremlin.interpret` then decides what each chain
means, top-down, because that depends on context (`asNumber(int)` vs. a variable named `int`).
The transformer runs inline in the LALR parser (no parse tree is built), which keeps parsing fast.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from lark import Token, Transformer

from query_guard.gremlin.ast import Arg, ListLit, Literal, MapEntry, MapLit, SetLit, Span, String
from query_guard.gremlin.errors import GremlinScriptError, GremlinSyntaxError

# ---------------------------------------------------------------- raw (pre-semantic) nodes


@dataclass(eq=False, slots=True)
class RawArgs:
    args: list[Arg | RawNamed]
    span: Span  # from "(" to ")"


@dataclass(eq=False, slots=True)
class RawNamed:
    """`key: value` in an argument list (strategy configuration)."""

    key: str
    key_span: Span
    value: Arg
    span: Span


@dataclass(eq=False, slots=True)
class RawSegment:
    name: str
    name_span: Span
    args: RawArgs | None  # None: no parentheses (`T.id`, `xx1`, `ReadOnlyStrategy`)
    span: Span
    new: bool = False  # `new SeedStrategy(...)`


@dataclass(eq=False, slots=True)
class RawChain(Arg):
    """`a.b(..).c(..)` before interpretation; never left in a finished AST."""

    segments: list[RawSegment]
    paren: bool = False  # written as `(x)` in a map key


# ---------------------------------------------------------------- literal decoding

_INT_LIMITS = {
    "byte": 2**7, "short": 2**15, "int": 2**31, "long": 2**63,
}
_INT_SUFFIX = {"b": "byte", "s": "short", "i": "int", "l": "long", "n": "biginteger"}
_FLOAT_SUFFIX = {"f": "float", "d": "double", "m": "bigdecimal"}
_ESCAPE = re.compile(r"\\(u+[0-9a-fA-F]{4}|[0-3][0-7]{2}|[0-7]{1,2}|[btnfr\"'\\]|\r?\n|[\s\S]?)")
_SIMPLE_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "'": "'",
                   "\\": "\\"}


def _span(tok: Token) -> Span:
    return (tok.start_pos or 0, tok.end_pos or 0)


def _syntax_error(tok: Token, message: str) -> GremlinSyntaxError:
    return GremlinSyntaxError(tok.line or 1, tok.column or 1, tok.start_pos or 0, [], message)


def unescape(tok: Token) -> str:
    """Resolve Java escapes in a quoted string token (quotes included)."""
    body = str(tok)[1:-1]
    if "\\" not in body:
        return body

    def repl(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[esc]
        if esc.startswith("u"):
            return chr(int(esc.lstrip("u"), 16))
        if esc[:1].isdigit():
            return chr(int(esc, 8))
        if esc in ("\n", "\r\n"):
            return ""  # line continuation
        raise _syntax_error(tok, f"invalid escape sequence '\\{esc}' in string literal")

    return _ESCAPE.sub(repl, body)


def decode_integer(tok: Token) -> Literal:
    text = str(tok).replace("_", "")
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    suffix = digits[-1].lower() if digits[-1].lower() in _INT_SUFFIX else ""
    is_hex = digits[:2].lower() == "0x"
    if suffix and not (is_hex and suffix in "bcdef"):
        digits = digits[:-1]
    if is_hex:
        magnitude = int(digits[2:], 16)
    elif len(digits) > 1 and digits.startswith("0"):
        magnitude = int(digits, 8)
    else:
        magnitude = int(digits)
    value = sign * magnitude
    if suffix:
        gtype = _INT_SUFFIX[suffix]
    else:  # like Java's Integer.decode, then Long, then BigInteger
        gtype = next((t for t in ("int", "long") if -_INT_LIMITS[t] <= value < _INT_LIMITS[t]),
                     "biginteger")
    limit = _INT_LIMITS.get(gtype)
    if limit is not None and not -limit <= value < limit:
        raise _syntax_error(tok, f"integer literal {tok} is out of range for {gtype}")
    return Literal(_span(tok), gtype, value)


def decode_float(tok: Token) -> Literal:
    text = str(tok).replace("_", "")
    suffix = text[-1].lower() if text[-1].lower() in _FLOAT_SUFFIX else ""
    body = text[:-1] if suffix else text
    gtype = _FLOAT_SUFFIX.get(suffix, "double")
    if gtype == "bigdecimal":
        try:
            return Literal(_span(tok), gtype, Decimal(body))
        except InvalidOperation as exc:  # pragma: no cover - the lexer admits only numbers
            raise _syntax_error(tok, f"bad BigDecimal literal {tok}") from exc
    return Literal(_span(tok), gtype, float(body))


# ---------------------------------------------------------------- the transformer


def _items(children: list[object]) -> list[Arg]:
    # `[a (, a)*]` yields None for an empty optional; brackets are the first and last child.
    return [c for c in children[1:-1] if c is not None]  # type: ignore[misc]


def _arg_span(node: object) -> Span:
    return node.span  # type: ignore[attr-defined,no-any-return]


class ChainBuilder(Transformer[Token, object]):
    """Inline LALR callbacks; each returns an AST literal/collection or a raw chain."""

    def string(self, children: list[Token]) -> String:
        return String(_span(children[0]), unescape(children[0]))

    def integer(self, children: list[Token]) -> Literal:
        return decode_integer(children[0])

    def floating(self, children: list[Token]) -> Literal:
        return decode_float(children[0])

    def signed_inf(self, children: list[Token]) -> Literal:
        tok = children[0]
        return Literal(_span(tok), "double", float("-inf") if tok.startswith("-") else float("inf"))

    def list(self, children: list[object]) -> ListLit:
        return ListLit((_span(children[0])[0], _span(children[-1])[1]), _items(children))  # type: ignore[arg-type]

    def set(self, children: list[object]) -> SetLit:
        return SetLit((_span(children[0])[0], _span(children[-1])[1]), _items(children))  # type: ignore[arg-type]

    def empty_map(self, children: list[Token]) -> MapLit:
        return MapLit((_span(children[0])[0], _span(children[-1])[1]), [])

    def map(self, children: list[object]) -> MapLit:
        entries: list[MapEntry] = children[1:-1]  # type: ignore[assignment]
        return MapLit((_span(children[0])[0], _span(children[-1])[1]), entries)  # type: ignore[arg-type]

    def map_entry(self, children: list[Arg]) -> MapEntry:
        key, value = children
        return MapEntry((key.span[0], value.span[1]), key, value)

    def map_key(self, children: list[Arg]) -> Arg:
        return children[0]

    def paren_key(self, children: list[object]) -> Arg:
        value: Arg = children[1]  # type: ignore[assignment]
        if isinstance(value, RawChain):
            value.paren = True
        return value

    def call_args(self, children: list[object]) -> RawArgs:
        args = [c for c in children[1:-1] if c is not None]
        lpar: Token = children[0]  # type: ignore[assignment]
        rpar: Token = children[-1]  # type: ignore[assignment]
        return RawArgs(args, (lpar.start_pos or 0, rpar.end_pos or 0))  # type: ignore[arg-type]

    def named_arg(self, children: list[object]) -> RawNamed:
        name: Token = children[0]  # type: ignore[assignment]
        value: Arg = children[1]  # type: ignore[assignment]
        return RawNamed(str(name), _span(name), value, (_span(name)[0], value.span[1]))

    def segment(self, children: list[object]) -> RawSegment:
        name: Token = children[0]  # type: ignore[assignment]
        args: RawArgs | None = children[1] if len(children) > 1 else None  # type: ignore[assignment]
        start = name.start_pos or 0
        stop = name.end_pos or 0
        name_span = (start, stop)
        end = args.span[1] if args is not None else stop
        return RawSegment(str(name), name_span, args, (start, end))

    def new_segment(self, children: list[object]) -> RawSegment:
        new: Token = children[0]  # type: ignore[assignment]
        seg = self.segment(children[1:])
        seg.span = (_span(new)[0], seg.span[1])
        seg.new = True
        return seg

    def chain(self, children: list[RawSegment]) -> RawChain:
        return RawChain((children[0].span[0], children[-1].span[1]), list(children))

    def literal_chain(self, children: list[object]) -> RawChain:
        target, first = children[0], children[1]
        assert isinstance(first, RawSegment)
        raise GremlinScriptError(
            f"method '{first.name}' called on a literal: Groovy code, not a traversal",
            (_arg_span(target)[0], first.span[1]),
            "method_call",
        )

    def start(self, children: list[object]) -> Arg:
        return children[0]  # type: ignore[return-value]
