"""The guard's edits spliced into the judged tokens (`query_guard.cypher.emit.emit_query`), so
that the canonical text of an edited query needs no second parse.

An edit that replaces whole tokens with plain words (an appended `LIMIT 1000`, a renamed
relationship type) becomes NAME / INTEGER pieces. An arrow flip (plugins/align_directions.py,
plugins/redirect_self_loops.py: `-` / `<-` / `->` written over part of an arrow token) becomes
the arrow token the edited text reads as (`-[` → `<-[`, `-->` → `<--`, `->` → `-`), when the
query has only plain spaces between its tokens (else the edited text is parsed again and its
lexing checked, as for any query); beside a flip, plain words are spliced only when they read as
the same pieces in the edited text (names and decimal integers with spaces around them). Any
other edit: None, and the caller parses the edited text.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Collection, Sequence
from operator import attrgetter

from lark import Token

from query_guard.model import Edit

Pieces = list[tuple[str, str]]

_START, _END = attrgetter("start_pos"), attrgetter("end_pos")
_SPLICE_SAFE = re.compile(r"[A-Za-z0-9_ ]+")
_SAFE_GAP = re.compile(r"[ \t\r\n]*")
# what the lexer skips besides _SAFE_GAP's characters (grammars/cypher.lark: WS also holds \f,
# U+00A0 and U+FEFF; a comment starts with `/`): a text without these has only plain gaps
_GAP_OTHER = re.compile("[/\f\u00a0\ufeff]")
# what an arrow token reads as once flipped, spaces dropped: (token type, canonical text)
_ARROWS = {
    "-[": ("DASH_BRACKET", "-["), "<-[": ("LARROW_BRACKET", "<-["),
    "-": ("MINUS", "-"), "->": ("ARROW_RIGHT", "->"),
    "--": ("ARROW_UNDIRECTED", "--"), "-->": ("ARROW_OUT", "-->"),
    "<--": ("ARROW_IN", "<--"), "<-->": ("ARROW_BOTH", "<-->"),
}  # fmt: skip
_ARROW_TYPES = frozenset(kind for kind, _ in _ARROWS.values())
_FLIPS = frozenset({"<-", "-", "->"})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[1-9][0-9]*|0")


def splice(
    text: str,
    tokens: Sequence[Token],
    edits: Sequence[Edit],
    pieces: Callable[[Sequence[Token]], Pieces],
    keywords: Collection[str],
) -> Pieces | None:
    """The token pieces of `text` with `edits` applied (`pieces` renders tokens), or None when
    only a parse of the edited text can say. `keywords`: words whose token type changes the
    spacing (a word beside a flip that is one of them is not spliced). The tokens are in text
    order, so the ones an edit touches are found by bisection."""
    out: Pieces = []
    todo = sorted(edits, key=lambda e: (e.start, e.end))
    i = k = 0
    flipped = False
    plain: list[Edit] = []
    while k < len(todo):
        edit = todo[k]
        j = bisect.bisect_right(tokens, edit.start, i, key=_END)  # the first ending after it
        out += pieces(tokens[i:j])
        i = j
        if edit.replacement in _FLIPS and i < len(tokens):
            token = tokens[i]
            start, end = token.start_pos, token.end_pos
            group: list[Edit] = []
            while k < len(todo) and todo[k].replacement in _FLIPS and start <= todo[k].start:
                if todo[k].end > end:
                    break
                group.append(todo[k])
                k += 1
            if (
                token.type not in _ARROW_TYPES
                or not group
                or (k < len(todo) and todo[k].start <= end)
            ):
                return None
            written = text[start:end]
            for e in reversed(group):  # offsets into the token's own text
                written = written[: e.start - start] + e.replacement + written[e.end - start :]
            arrow = _ARROWS.get("".join(written.split()))
            if arrow is None:
                return None
            out.append(arrow)
            i += 1
            flipped = True
            continue
        if edit.replacement.strip() and not _SPLICE_SAFE.fullmatch(edit.replacement):
            return None
        if i < len(tokens) and tokens[i].start_pos < edit.start:
            return None  # the edit starts inside a token
        j = bisect.bisect_left(tokens, edit.end, i, key=_START)  # the first starting after it
        if j > i and tokens[j - 1].end_pos > edit.end:
            return None  # the edit ends inside a token
        i = j
        out += [("INTEGER" if w.isdigit() else "NAME", w) for w in edit.replacement.split()]
        plain.append(edit)
        k += 1
    out += pieces(tokens[i:])
    if flipped and not (plain_gaps(text, tokens) and all(_apart(text, e, keywords) for e in plain)):
        return None
    return out


def _apart(text: str, edit: Edit, keywords: Collection[str]) -> bool:
    """Do the plain words of `edit` read as the pieces `splice` made of them in the edited
    text: names (no keyword the spacing depends on) and decimal integers, a space before
    them, and after them a space, the end or a closing bracket?"""
    words = edit.replacement.split()
    after = text[edit.end : edit.end + 1]
    return (
        bool(words)
        and edit.replacement[0] == " "
        and (after in ("", ";", ")", "}", "]") or after.isspace() or edit.replacement[-1] == " ")
        and all(_WORD.fullmatch(w) and w.upper() not in keywords for w in words)
    )


def plain_gaps(text: str, tokens: Sequence[Token]) -> bool:
    """True when only spaces, tabs and line feeds separate the tokens (then the emitted
    spacing cannot change how any lexer lookahead reads them)."""
    if not _GAP_OTHER.search(text):  # no comment and no other ignored space anywhere (hot path)
        return True
    for a, b in itertools.pairwise(tokens):
        end, start = a.end_pos or 0, b.start_pos or 0
        if start > end and not _SAFE_GAP.fullmatch(text, end, start):
            return False
    return True
