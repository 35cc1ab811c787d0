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

import itertools
import re
import string
import unicodedata
from collections.abc import Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from lark import Token

from query_guard.cypher import ast
from query_guard.cypher.build_parts import parse_int, unescape_name, unescape_string
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
_SPLICE_SAFE = re.compile(r"[A-Za-z0-9_ ]+")
_SAFE_GAP = re.compile(r"[ \t\r\n]*")
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
        return "".join(token.value.split()).upper()  # `LIST <` -> `LIST<`
    return str(token.value)


_WORDY_ASCII = frozenset(string.ascii_letters + string.digits + "_$`'\"")


def _wordy(ch: str) -> bool:
    """A letter, digit, `_`, `$`, a quote or backtick, or any non-ASCII character."""
    return ch in _WORDY_ASCII or not ch.isascii()


def _needs_space(kind_a: str, a: str, kind_b: str, b: str) -> bool:
    """Would `a` and `b` written side by side read as other tokens (in any Cypher dialect)?"""
    if "DOUBLE_COLON" in (kind_a, kind_b) or (kind_a == "ON" and b == ":"):
        return True  # `IS :: INTEGER`, `CREATE INDEX ON :Person(name)`: for the reader
    x, y = a[-1], b[0]
    if _wordy(x) and _wordy(y):
        return True
    if x in _OPERATOR_CHARS and y in _OPERATOR_CHARS:
        return True
    if kind_a in _NUMBERS and y == ".":
        return True
    if x == "." and (y.isdigit() or kind_b in _NUMBERS):
        return True
    # not needed for lexing, only for whoever reads the audit log: `) RETURN`, `, x`, `MATCH (`
    return (x in ")]}" and _wordy(y)) or x == "," or (kind_a in _CLAUSE_WORDS and y in "({[")


def emit_tokens(pieces: Sequence[tuple[str, str]]) -> str:
    """Join (token type, canonical text) pairs with the fewest safe spaces (plus the few a
    reader expects: `(n:Person {name: 'x'})`, `) RETURN`, `a, b`, `a.x = 1`)."""
    out: list[str] = []
    prev_kind, prev = "", ""
    braces: list[str] = []  # open brackets, innermost last: a map's `:` gets a space
    for kind, text in pieces:
        if prev and (
            _needs_space(prev_kind, prev, kind, text)
            or (text == "{" and (_wordy(prev[-1]) or (prev == ")" and braces[-1:] == ["("])))
            or (prev == ":" and braces[-1:] == ["{"])
            or (kind in _COMPARISONS and not (kind == "GT" and braces[-1:] == ["<"]))
            or prev_kind in _COMPARISONS
        ):
            out.append(" ")
        out.append(text)
        if text in ("(", "[", "{", "-[", "<-[", "$(") or kind == "TYPE_OPEN":
            braces.append(text[-1])
        elif (text in (")", "]", "}") or (kind == "GT" and braces[-1:] == ["<"])) and braces:
            braces.pop()
        prev_kind, prev = kind, text
    joined = "".join(out)
    if UNSAFE.search(joined):  # rare: fail closed on any such character outside a string
        for kind, text in pieces:
            if kind != "STRING":
                _refuse_unsafe(text)
    return joined


def _pieces(tokens: Sequence[Token]) -> list[tuple[str, str]]:
    return [(t.type, _token_text(t)) for t in tokens]


def _refuse_admin(query: CypherQuery) -> None:
    """Fail closed: an administration command is parsed coarsely (its remainder, SCHEMA_REST,
    is the client's raw text), so a query holding one is refused (plugins/admin_commands.py
    blocks them first, with SEC.ADMIN)."""
    coarse = (
        type(node) is ast.SchemaCommand for node in query.find(ast.SchemaCommand)
    )
    if any(t.type == "SCHEMA_REST" for t in query.tokens) or any(coarse):
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
        spliced = _splice(query, edits)
        if spliced is None:
            from query_guard.cypher.query import CypherQuery

            return emit_query(CypherQuery.parse(apply_edits(query.text, list(edits))))
        return emit_tokens(spliced)
    pieces = _pieces(query.tokens)
    text = emit_tokens(pieces)
    if not _plain_gaps(query.text, query.tokens):
        _check_relex(text, pieces)
    return text


def _plain_gaps(text: str, tokens: Sequence[Token]) -> bool:
    """True when only spaces, tabs and line feeds separate the tokens (then the emitted
    spacing cannot change how any lexer lookahead reads them)."""
    for a, b in itertools.pairwise(tokens):
        end, start = a.end_pos or 0, b.start_pos or 0
        if start > end and not _SAFE_GAP.fullmatch(text, end, start):
            return False
    return True


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


def _splice(query: CypherQuery, edits: Sequence[Edit]) -> list[tuple[str, str]] | None:
    """The token pieces with `edits` applied, or None when an edit cuts a token or inserts
    anything but plain words (then the caller parses the edited text instead)."""
    pieces: list[tuple[str, str]] = []
    todo = sorted(edits, key=lambda e: (e.start, e.end))
    tokens = query.tokens
    i = 0
    for edit in todo:
        if edit.replacement.strip() and not _SPLICE_SAFE.fullmatch(edit.replacement):
            return None
        while i < len(tokens) and (tokens[i].end_pos or 0) <= edit.start:
            pieces.append((tokens[i].type, _token_text(tokens[i])))
            i += 1
        if i < len(tokens) and (tokens[i].start_pos or 0) < edit.start:
            return None  # the edit starts inside a token
        while i < len(tokens) and (tokens[i].start_pos or 0) < edit.end:
            if (tokens[i].end_pos or 0) > edit.end:
                return None  # the edit ends inside a token
            i += 1
        pieces += [("INTEGER" if w.isdigit() else "NAME", w) for w in edit.replacement.split()]
    pieces += _pieces(tokens[i:])
    return pieces


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
