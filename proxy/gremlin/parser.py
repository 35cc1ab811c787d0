"""Parse Gremlin traversal text into the typed AST (`query_guard.gremlin.ast`).

`parse_traversal(text)` returns a `Traversal` or raises one of two structured errors:
`GremlinSyntaxError` (line, column, offset, expected tokens) for text that is not a traversal,
`GremlinScriptError` (reason, span, kind) for code outside the traversal language -- closures,
Groovy statements, class references, several statements. No other exception escapes, whatever
the input (deep nesting included).
"""

from __future__ import annotations

import functools
import importlib.util
import re

from lark import Lark, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.exceptions import VisitError

from query_guard.cypher.lalr_driver import Fallback, LalrDriver
from query_guard.cypher.lexical import segments
from query_guard.gremlin.ast import Traversal
from query_guard.gremlin.callbacks import read_filters
from query_guard.gremlin.errors import GremlinError, GremlinScriptError, GremlinSyntaxError
from query_guard.gremlin.interpret import Interpreter
from query_guard.gremlin.script import detect_script
from query_guard.gremlin.transform import ChainBuilder

GRAMMAR = "gremlin.lark"  # package data of the top-level `grammars` package

# Texts nested deeper than this are refused up front: the interpreter, the printer and the
# rules recurse (about six frames per level), and real traversals stay far below it.
MAX_NESTING = 64

_TOKEN_NAMES = {
    "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'", "LBRACE": "'{'",
    "RBRACE": "'}'", "_DOT": "'.'", "_COMMA": "','", "_COLON": "':'", "SEMI": "';'",
    "NAME": "identifier", "STRING": "string", "INT": "integer", "FLOAT": "float",
    "SIGNED_INF": "Infinity", "NEW": "'new'", "$END": "end of input",
}


@functools.cache
def gremlin_parser() -> Lark:
    """The LALR parser for `grammars/gremlin.lark`, built once (it is immutable).

    strict=True (lark re-checks for conflicts and terminal collisions) needs `interegular`, a
    declared dependency; without it the conflict-free grammar still builds, unchecked."""
    lark = Lark.open_from_package(
        "query_guard.grammars",
        GRAMMAR,
        parser="lalr",
        lexer="contextual",
        strict=importlib.util.find_spec("interegular") is not None,
        maybe_placeholders=True,
        transformer=ChainBuilder(),
    )
    read_filters(lark.parser.parser.parser.callbacks)  # lark's parser and the driver share them
    return lark


@functools.cache
def _driver() -> LalrDriver:
    """The lean LALR loop over `gremlin_parser()`'s own tables, lexer and callbacks."""
    return LalrDriver(gremlin_parser())


def _parse_value(text: str) -> object:
    """lark's parse of `text`: by the lean driver when the text parses, else by lark itself,
    which raises the syntax errors it always did."""
    try:
        return _driver().parse(text)
    except Fallback:
        return gremlin_parser().parse(text)


def parse_traversal(text: str, *, allow_anonymous: bool = False) -> Traversal:
    """Parse one Gremlin traversal (`g....`; with `allow_anonymous`, also `__....`)."""
    if not isinstance(text, str):
        raise GremlinSyntaxError(1, 1, 0, [], "query text must be a string")
    _check_nesting(text)
    if "$" in text or "\\u" in text:
        _check_interpolation(text)
    try:
        value = _parse_value(text)
        return Interpreter(text).query(value, allow_anonymous=allow_anonymous)  # type: ignore[arg-type]
    except GremlinError:
        raise
    except VisitError as exc:  # an error raised inside a transformer callback
        if isinstance(exc.orig_exc, GremlinError):
            raise exc.orig_exc from None
        raise _internal(text, exc) from None
    except UnexpectedInput as exc:
        raise _from_lark(text, exc) from None
    except RecursionError:
        raise GremlinSyntaxError(1, 1, 0, [], "traversal is nested too deeply") from None
    except Exception as exc:  # the contract: never anything but GremlinError
        raise _internal(text, exc) from None


def _check_nesting(text: str) -> None:
    if text.count("(") + text.count("[") + text.count("{") <= MAX_NESTING:
        return  # too few openers to nest that deep (the scan below would find nothing)
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
            if depth > MAX_NESTING:
                line = text.count("\n", 0, i) + 1
                col = i - (text.rfind("\n", 0, i) + 1) + 1
                raise GremlinSyntaxError(line, col, i, [], f"nesting deeper than {MAX_NESTING}")
        elif ch in ")]}":
            depth -= 1


_UNICODE_ESCAPE = re.compile(r"\\u+([0-9a-fA-F]{4})")
# `$` starting a Groovy GString placeholder: `${expr}` or `$name`, unless the `$` is escaped
_PLACEHOLDER = re.compile(r"(?<!\\)((?:\\\\)*)\$(?=[{A-Za-z_])")


def _check_interpolation(text: str) -> None:
    """A double-quoted string with a `${…}` or `$name` placeholder runs code when the text
    reaches a Groovy script engine (GString interpolation): SEC.SCRIPT. Groovy decodes `\\u`
    escapes before it reads the string, so `\\u0024{` counts too."""
    for seg in segments(text, backticks=False):
        if seg.kind != "string" or text[seg.start] != '"':
            continue
        body = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text[seg.start : seg.end])
        if _PLACEHOLDER.search(body):
            raise GremlinScriptError(
                "a double-quoted string with a ${…} or $name placeholder is Groovy string "
                "interpolation (it runs code); use a single-quoted string",
                (seg.start, seg.end),
                kind="groovy",
            )


def _from_lark(text: str, exc: UnexpectedInput) -> GremlinError:
    offset = exc.pos_in_stream if exc.pos_in_stream is not None else len(text)
    if isinstance(exc, UnexpectedEOF) or (
            isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        offset = len(text)
    script = detect_script(text, offset)
    if script is not None:
        return script
    expected = sorted({_TOKEN_NAMES.get(t, t) for t in _expected(exc)})
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    if isinstance(exc, UnexpectedCharacters):
        what = f"unexpected character {text[offset]!r}" if offset < len(text) else "unexpected end"
    elif isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
        what = f"unexpected {exc.token.value!r}"
    else:
        what = "unexpected end of input"
    message = what + (f"; expected {', '.join(expected)}" if expected else "")
    return GremlinSyntaxError(line, column, offset, expected, message)


def _expected(exc: UnexpectedInput) -> set[str]:
    if isinstance(exc, UnexpectedToken):
        return set(exc.accepts or exc.expected or ())
    if isinstance(exc, UnexpectedCharacters):
        return set(exc.allowed or ())
    if isinstance(exc, UnexpectedEOF):
        return set(exc.expected or ())
    return set()


def _internal(text: str, exc: BaseException) -> GremlinSyntaxError:
    # A bug of ours must still surface as a parse failure, never as a crash of the proxy.
    return GremlinSyntaxError(1, 1, 0, [], f"internal parser error: {type(exc).__name__}: {exc}")
