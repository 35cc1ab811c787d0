r"""The canonical emitter: the Cypher text that leaves the proxy, re-printed from the guard's
own tokens (DESIGN §1), so the database runs exactly what the guard judged.

The tokens are those of the contextual lexer run that produced the judged AST
(`query_guard.cypher.parser.parse_tokens`). Comments and whitespace are not tokens, so they are
gone; tokens are joined by nothing, or by one space where the two would otherwise read as one (two
word-like tokens, two operator characters, a number beside a dot) or a reader expects one.
String literals are decoded and re-encoded with single quotes and only the escapes every
Cypher reader agrees on (`\\`, `\'`, `\n`, `\r`, `\t`, `\b`, `\f`, and `\uXXXX` for other
control characters); names in backticks are re-quoted with doubled backticks; `- [` becomes
`-[`, `!=` becomes `<>`, integers are written in decimal. Example:

    MATCH (m:Movie) // note
      WHERE m.title = "caf\u00e9 \"Au Lait\"" RETURN m
    -> MATCH (m:Movie) WHERE m.title = 'café "Au Lait"' RETURN m

`emit_query` refuses (AmbiguousText) in the rare case where dropping a comment or an unusual
whitespace character between two tokens would let them lex differently; it checks that case
by re-parsing the emitted text. It also refuses a name holding a line break or another
control character (proxy/guard/unsafe_chars.py): backticks cannot escape one, and outside string
literals the forwarded text never carries one raw (plugins/ambiguous_text.py blocks such a
name first, with a position).
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import fields
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from lark import Token

from query_guard.cypher import ast
from query_guard.cypher.build_parts import parse_int, unescape_name, unescape_string
from query_guard.cypher.splice import plain_gaps, splice
from query_guard.guard.tree import TreeNode
from query_guard.guard.unsafe_chars import UNSAFE, describe
from query_guard.model import Edit, apply_edits

if TYPE_CHECKING:
    from query_guard.cypher.query import CypherQuery

__all__ = [
    "AmbiguousText",
    "Unforwardable",
    "canonical_name",
    "canonical_string",
    "emit_query",
    "emit_tokens",
    "structure",
]


class AmbiguousText(ValueError):
    """The query's tokens cannot be re-printed without a reader possibly seeing others."""


class Unforwardable(ValueError):
    """The query holds text the guard did not parse into tokens (an administration command's
    coarse remainder): it is never forwarded."""


_SIMPLE_ESCAPES = {
    "\\": "\\\\",
    "'": "\\'",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}
_ASCII_SPECIAL = re.compile(r"[\\'\x00-\x1f\x7f]")
# written as \uXXXX: control characters (a NUL or a \x85 must not reach a C or Java lexer raw)
# and lone surrogates (not encodable). Everything else, invisible or not, is written as itself:
# inside quotes only a quote or a backslash can end or bend a string, and FalkorDB, unlike
# Neo4j, does not decode \u escapes.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cs"})
_OPERATOR_CHARS = frozenset("-<>=!~+*/%^.|&:?")
_NUMBERS = frozenset({"INTEGER", "FLOAT"})
_COMPARISONS = frozenset(
    {"EQ", "NEQ", "NEQ_BANG", "LT", "GT", "LE", "GE", "REGEX_MATCH", "PLUS_EQ", "CONCAT"}
)
_CLAUSE_WORDS = frozenset(
    [
        "MATCH",
        "MERGE",
        "CREATE",
        "WHERE",
        "AND",
        "OR",
        "XOR",
        "NOT",
        "IN",
        "RETURN",
        "WITH",
        "UNWIND",
        "DELETE",
        "SET",
        "REMOVE",
        "DISTINCT",
        "CASE",
        "WHEN",
        "THEN",
        "ELSE",
        "AS",
        "BY",
        "ON",
        "CALL",
        "OPTIONAL",
        "YIELD",
        "FOR",
        "EACH",
        "REQUIRE",
        "ASSERT",
        "SHORTEST",  # path selectors and match modes before a pattern
        "PATH",
        "PATHS",
        "GROUP",
        "GROUPS",
        "ELEMENT",
        "ELEMENTS",
        "RELATIONSHIP",
        "RELATIONSHIPS",
    ]
)

# words whose token type changes the spacing around them (`MATCH (`, `ON :Person`)
_SPACED_KEYWORDS = _CLAUSE_WORDS | {"ON"}


def canonical_string(value: str) -> str:
    """`value` as a single-quoted Cypher string every reader decodes to `value`."""
    if value.isascii() and not _ASCII_SPECIAL.search(value):
        return f"'{value}'"
    out: list[str] = []
    for ch in value:
        simple = _SIMPLE_ESCAPES.get(ch)
        if simple is not None:
            out.append(simple)
        elif ch.isascii() and ch.isprintable():
            out.append(ch)
        elif unicodedata.category(ch) in _ESCAPED_CATEGORIES:
            code = ord(ch)
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def canonical_name(value: str) -> str:
    """`value` as a backtick-quoted name (backticks doubled). Raises AmbiguousText for a name
    holding a line break or another control character (backticks have no escapes)."""
    _refuse_unsafe(value)
    return "`" + value.replace("`", "``") + "`"


def _refuse_unsafe(text: str) -> None:
    m = UNSAFE.search(text)
    if m is not None:
        raise AmbiguousText(
            f"a name contains {describe(m.group())}, which a Cypher name cannot escape; "
            "rename it without line breaks or control characters"
        )


# token types whose canonical text differs from the written one (everything else is itself)
_REWRITTEN = frozenset(
    {
        "STRING",
        "ESCAPED_NAME",
        "PARAM",
        "DASH_BRACKET",
        "LARROW_BRACKET",
        "LABEL_BAR",
        "NEQ_BANG",
        "INTEGER",
        "TYPE_OPEN",
    }
)


def _token_text(token: Token) -> str:
    kind = token.type
    if kind not in _REWRITTEN:
        return str(token.value)
    if kind == "STRING":
        return canonical_string(unescape_string(token.value))
    if kind == "ESCAPED_NAME":
        return canonical_name(unescape_name(token.value))
    if kind == "PARAM" and token.value.startswith("$`"):
        return "$" + canonical_name(unescape_name(token.value[1:]))
    if kind == "DASH_BRACKET":
        return "-["
    if kind == "LARROW_BRACKET":
        return "<-["
    if kind == "LABEL_BAR":
        return "|"
    if kind == "NEQ_BANG":
        return "<>"  # Neo4j 5 refuses `!=`; the AST already reads it as `<>`
    if kind == "INTEGER":
        return str(parse_int(token.value))  # `017` is octal here, 0x/0o are not everywhere
    if kind == "TYPE_OPEN":
        return " ".join(token.value[:-1].split()).upper() + "<"  # `LIST <` -> `LIST<`
    return str(token.value)


_WORDY_ASCII = frozenset(string.ascii_letters + string.digits + "_$`'\"")


def _wordy(ch: str) -> bool:
    """A letter, digit, `_`, `$`, a quote or backtick, or any non-ASCII character."""
    return ch in _WORDY_ASCII or not ch.isascii()


def _pair_spaced(x: str, y: str) -> bool:
    """Does the last character `x` of a token need a space before the first `y` of the next,
    whatever the tokens: both word-like or both operator characters (they would read as one
    token), or (only for whoever reads the audit log) `) RETURN`, `, x`."""
    return (
        (_wordy(x) and _wordy(y))
        or (x in _OPERATOR_CHARS and y in _OPERATOR_CHARS)
        or (x in ")]}" and _wordy(y))
        or x == ","
    )


# `_pair_spaced` of every two ASCII characters: the characters after each that get a space
_ASCII = tuple(map(chr, range(128)))
_SPACED_AFTER = MappingProxyType(
    {x: frozenset(y for y in _ASCII if _pair_spaced(x, y)) for x in _ASCII}
)
_OPENING = frozenset({"(", "[", "{", "-[", "<-[", "$("})
# the kinds of token after which (before which) `emit_tokens` may space other than by the
# characters: the pair's kinds decide the rest, or its characters `.` and `:` before, `{` after
_RARE_BEFORE = _COMPARISONS | _NUMBERS | _CLAUSE_WORDS | {"DOUBLE_COLON", "ON"}
_RARE_AFTER = _COMPARISONS | {"DOUBLE_COLON"}
_CLOSING = frozenset({")", "]", "}"})


def emit_tokens(pieces: Sequence[tuple[str, str]]) -> str:
    """Join (token type, canonical text) pairs with the fewest safe spaces (plus the few a
    reader expects: `(n:Person {name: 'x'})`, `) RETURN`, `a, b`, `a.x = 1`).

    A space goes between two tokens when they would read as other tokens side by side (in any
    Cypher dialect), or when a reader expects one (`_spaced`). Most pairs are answered by
    their two kinds alone (`_kind_rows`: one lookup, hot path)."""
    out: list[str] = []
    append = out.append
    in_map, elsewhere = _kind_rows()
    rows = elsewhere  # by the innermost open bracket: changed only at a bracket
    row: Mapping[str, bool] | None = None  # the previous token's kind's answers
    prev_kind, prev = "", ""
    braces: list[str] = []  # open brackets, innermost last: a map's `:` gets a space
    for kind, text in pieces:
        if prev:
            spaced = row.get(kind) if row is not None else None
            if spaced is None:
                spaced = _spaced(prev_kind, prev, kind, text, braces)
            if spaced:
                append(" ")
        append(text)
        if text in _BRACKETS or kind in _BRACKET_KINDS:
            if text in _OPENING or kind == "TYPE_OPEN":
                braces.append(text[-1])
            elif (text in _CLOSING or (kind == "GT" and braces[-1:] == ["<"])) and braces:
                braces.pop()
            rows = in_map if braces[-1:] == ["{"] else elsewhere
        prev_kind, prev, row = kind, text, rows.get(kind)
    joined = "".join(out)
    if UNSAFE.search(joined):  # rare: fail closed on any such character outside a string
        for kind, text in pieces:
            if kind != "STRING":
                _refuse_unsafe(text)
    return joined


def _spaced(prev_kind: str, prev: str, kind: str, text: str, braces: list[str]) -> bool:
    """Does a space go between `prev` and `text` (`braces`: the open brackets)? It reads the
    kinds only through `_KIND_FLAGS`, the texts only through their characters."""
    x, y = prev[-1], text[0]
    after = _SPACED_AFTER.get(x)
    return (
        (y in after if after is not None and y < "\x80" else _pair_spaced(x, y))
        or (
            # the rest holds only beside these kinds and characters (most pairs are not)
            (prev_kind in _RARE_BEFORE or kind in _RARE_AFTER or x in ".:" or y == "{")
            and (
                (kind in _COMPARISONS and not (kind == "GT" and braces[-1:] == ["<"]))
                or prev_kind in _COMPARISONS
                # `IS :: INTEGER`, `CREATE INDEX ON :Person(name)`: for the reader
                or kind == "DOUBLE_COLON"
                or prev_kind == "DOUBLE_COLON"
                or (prev_kind == "ON" and text == ":")
                or (y == "." and prev_kind in _NUMBERS)
                or (x == "." and (y.isdigit() or kind in _NUMBERS))
                or (y in "({[" and prev_kind in _CLAUSE_WORDS)  # `MATCH (`
                # `(n:Person {name: 'x'})`: a map after a word or a node's `(`, its keys' :
                or (text == "{" and (_wordy(x) or (prev == ")" and braces[-1:] == ["("])))
                or (prev == ":" and braces[-1:] == ["{"])
            )
        )
    )


_BRACKETS = _OPENING | _CLOSING
_BRACKET_KINDS = frozenset({"TYPE_OPEN", "GT"})
_KIND_FLAGS = (_RARE_BEFORE, _RARE_AFTER, _COMPARISONS, _NUMBERS, _CLAUSE_WORDS,
               {"GT"}, {"DOUBLE_COLON"}, {"ON"})  # fmt: skip


@cache
def _kind_rows() -> tuple[Mapping[str, Mapping[str, bool]], Mapping[str, Mapping[str, bool]]]:
    """`_spaced` by kinds alone where the kinds decide it, inside a map and elsewhere
    (`query_guard.cypher.spacing`): worked out once, on the first query's emission, and never
    changed (a constant computed late, not state)."""
    from query_guard.cypher.parser import _parser
    from query_guard.cypher.spacing import kind_rows

    def canonical(kind: str, text: str) -> str:
        return _token_text(Token(kind, text))

    return kind_rows(_parser().terminals, canonical, _spaced, _KIND_FLAGS)


def _pieces(tokens: Sequence[Token]) -> list[tuple[str, str]]:
    # a token's value is its text (a str): most are printed as written
    return [(t.type, t.value if t.type not in _REWRITTEN else _token_text(t)) for t in tokens]


def _refuse_admin(query: CypherQuery) -> None:
    """Fail closed: an administration command is parsed coarsely (its remainder, SCHEMA_REST,
    is the client's raw text), so a query holding one is refused (plugins/admin_commands.py
    blocks them first, with SEC.ADMIN)."""
    coarse = (type(node) is ast.SchemaCommand for node in query.find(ast.SchemaCommand))
    if "SCHEMA_REST" in query.token_types or any(coarse):
        raise Unforwardable(
            "administration commands (databases, users, roles, privileges, aliases, servers) "
            "are never forwarded by the proxy; run them on the database directly"
        )


def emit_query(query: CypherQuery, edits: Sequence[Edit] = ()) -> str:
    """The canonical text of `query` (with `edits` applied, when they replace whole tokens with
    plain words; otherwise the edited text is parsed again). Raises AmbiguousText, or
    Unforwardable for an administration command."""
    _refuse_admin(query)
    if edits:
        spliced = splice(query.text, query.tokens, edits, _pieces, _SPACED_KEYWORDS)
        if spliced is None:
            from query_guard.cypher.query import CypherQuery

            return emit_query(CypherQuery.parse(apply_edits(query.text, list(edits))))
        return emit_tokens(spliced)
    pieces = _pieces(query.tokens)
    text = emit_tokens(pieces)
    if not plain_gaps(query.text, query.tokens):
        _check_relex(text, pieces)
    return text


def _check_relex(text: str, pieces: Sequence[tuple[str, str]]) -> None:
    from query_guard.cypher.parser import CypherSyntaxError, parse_tokens

    try:
        _, tokens = parse_tokens(text)
    except CypherSyntaxError:
        tokens = []
    if _pieces(tokens) != list(pieces):
        raise AmbiguousText(
            "a comment or unusual whitespace separates tokens that would read differently "
            "without it; remove the comments and use plain spaces"
        )


# ---------------------------------------------------------------- comparing trees


def structure(node: Any) -> Any:
    """A comparable rendering of an AST without positions (for "same AST" checks)."""
    if isinstance(node, TreeNode):
        return (
            type(node).__name__,
            tuple(
                (f.name, structure(getattr(node, f.name)))
                for f in fields(node)  # type: ignore[arg-type]
                if f.name != "span" and not f.name.endswith("_span")
            ),
        )
    if isinstance(node, (list, tuple)):
        if len(node) == 2 and all(type(x) is int for x in node):
            return None  # a span inside a tuple (map entries carry their key's span)
        return tuple(structure(x) for x in node)
    return node
