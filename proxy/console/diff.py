"""The client's text beside what was forwarded, word by word: each side as segments marked
`same`, `del` (only the client sent it) or `ins` (only the database got it). Whitespace does not
count as a difference (the forwarded text is a canonical re-emission, DESIGN §1).

>>> client, forwarded = side_by_side("MATCH (m)-[:ACTED_IN]->(p)", "MATCH (m)<-[:ACTED_IN]-(p)")
>>> [s.text for s in forwarded if s.kind == "ins"]
['<-', '-']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

# a word, a run of operator characters, or any other single character; with its leading blanks
_TOKEN = re.compile(r"\s*(?:\w+|[<>\-=!]+|\S)|\s+$", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Segment:
    kind: str  # same | del | ins
    text: str


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def side_by_side(client: str, forwarded: str) -> tuple[list[Segment], list[Segment]]:
    """The client's side (same/del) and the forwarded side (same/ins)."""
    a, b = tokens(client), tokens(forwarded)
    matcher = SequenceMatcher(None, [t.strip() for t in a], [t.strip() for t in b],
                              autojunk=False)  # fmt: skip
    left: list[Segment] = []
    right: list[Segment] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            _add(left, "same", a[i1:i2])
            _add(right, "same", b[j1:j2])
            continue
        _add(left, "del", a[i1:i2])
        _add(right, "ins", b[j1:j2])
    return left, right


def _add(side: list[Segment], kind: str, parts: list[str]) -> None:
    """Append `parts` as `kind`; the blanks before a run of changed tokens stay unmarked."""
    for n, part in enumerate(parts):
        word = part.lstrip()
        if kind == "same" or n > 0:
            _append(side, kind, part)
            continue
        _append(side, "same", part[: len(part) - len(word)])
        _append(side, kind, word)


def _append(side: list[Segment], kind: str, text: str) -> None:
    if not text:
        return
    if side and side[-1].kind == kind:
        side[-1] = Segment(kind, side[-1].text + text)
    else:
        side.append(Segment(kind, text))
