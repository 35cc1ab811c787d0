"""lark callbacks for Neo4j 5's SHOW / TERMINATE commands -> `ShowCommand` clauses.

Part of the inline transformer (see transform.py). The builders pick their pieces by what they
are (a `Part` of a named kind, a `ProjectionItem`, a `Return`, a keyword token), never by
position, so the grammar's optional parts can move without changing meanings here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lark import Token

from query_guard.cypher.ast import (
    Expr,
    OtherClause,
    ProjectionItem,
    Return,
    ShowCommand,
    SingleQuery,
    SortItem,
)
from query_guard.cypher.build_parts import Part, ex, exprs, span_of

# tokens of a target that are names or punctuation, not part of the command's kind
_NOT_WORDS = frozenset({"PARAM", "COMMA", "DOT", "NAME", "ESCAPED_NAME"})


@dataclass(slots=True)
class ShowTarget:
    words: list[str]  # the keywords as written (upper case)
    target: str
    names: list[Expr] = field(default_factory=list)
    executable_by: str | None = None


@dataclass(slots=True)
class ShowBody:
    yield_items: list[ProjectionItem] = field(default_factory=list)
    yield_star: bool = False
    order_by: list[SortItem] = field(default_factory=list)
    skip: Expr | None = None
    limit: Expr | None = None
    where: Expr | None = None
    returns: Return | None = None


def _words(children: list[Any]) -> list[str]:
    return [
        t.value.upper() for t in children if isinstance(t, Token) and t.type not in _NOT_WORDS
    ]


def _parts(children: list[Any]) -> dict[str, Part]:
    return {x.kind: x for x in children if type(x) is Part}


def _names(children: list[Any]) -> list[Expr]:
    found = _parts(children).get("names")
    return list(found.value) if found is not None else []


def _executable(children: list[Any]) -> str | None:
    found = _parts(children).get("executable")
    return found.value if found is not None else None


class ShowBuilder:
    """Callbacks for the `show_*` rules of grammars/cypher.lark (mixed into CypherBuilder)."""

    # ---------------------------------------------------------------- statement

    def show_command(self, c: list[Any]) -> SingleQuery:
        """`[USE graph] SHOW …`: the USE stays a clause of its own, as in queries."""
        return SingleQuery(span_of(c), [x for x in c if isinstance(x, (OtherClause, ShowCommand))])

    def show_part(self, c: list[Any]) -> ShowCommand:
        target: ShowTarget = _parts(c)["target"].value
        return self._command(c, ["SHOW", *target.words], target)

    def terminate_part(self, c: list[Any]) -> ShowCommand:
        words = _words(c)
        target = ShowTarget(words, "TERMINATE TRANSACTIONS", _names(c))
        return self._command(c, words, target)

    def _command(self, c: list[Any], words: list[str], target: ShowTarget) -> ShowCommand:
        body_part = _parts(c).get("body")
        body: ShowBody = body_part.value if body_part is not None else ShowBody()
        return ShowCommand(
            span_of(c),
            " ".join(words),
            target.target,
            target.names,
            target.executable_by,
            body.yield_items,
            body.yield_star,
            body.order_by,
            body.skip,
            body.limit,
            body.where,
            body.returns,
        )

    # ---------------------------------------------------------------- targets

    def _target(self, c: list[Any], target: str) -> Part:
        value = ShowTarget(_words(c), target, _names(c), _executable(c))
        return Part("target", value, span_of(c))

    def show_indexes(self, c: list[Any]) -> Part:
        return self._target(c, "INDEXES")

    def show_constraints(self, c: list[Any]) -> Part:
        kind = _parts(c).get("constraint_kind")
        target = self._target(c, "CONSTRAINTS")
        if kind is not None:
            target.value.words[:0] = kind.value
        return target

    def constraint_kind(self, c: list[Any]) -> Part:
        return Part("constraint_kind", _words(c), span_of(c))

    def show_functions(self, c: list[Any]) -> Part:
        return self._target(c, "FUNCTIONS")

    def show_procedures(self, c: list[Any]) -> Part:
        return self._target(c, "PROCEDURES")

    def executable_by(self, c: list[Any]) -> Part:
        name = next((x for x in c if type(x) is Part), None)
        words = _words(c)
        who = "CURRENT USER" if "CURRENT" in words else (name.value if name else None)
        return Part("executable", who, span_of(c))

    def show_transactions(self, c: list[Any]) -> Part:
        return self._target(c, "TRANSACTIONS")

    def show_settings(self, c: list[Any]) -> Part:
        return self._target(c, "SETTINGS")

    def show_names(self, c: list[Any]) -> Part:
        return Part("names", exprs(c), span_of(c))

    def show_admin(self, c: list[Any]) -> Part:
        words = _words(c)
        return Part("target", ShowTarget(words, " ".join(words)), span_of(c))

    # ---------------------------------------------------------------- bodies

    def show_body(self, c: list[Any]) -> Part:
        parts = _parts(c)
        body = ShowBody()
        if "yield" in parts:
            body = parts["yield"].value
        elif "where" in parts:
            body.where = parts["where"].value
        body.returns = next((x for x in c if isinstance(x, Return)), None)
        return Part("body", body, span_of(c))

    def show_yield(self, c: list[Any]) -> Part:
        parts = _parts(c)

        def value(kind: str) -> Any:
            return parts[kind].value if kind in parts else None

        body = ShowBody(
            yield_items=[x for x in c if isinstance(x, ProjectionItem)],
            yield_star=any(isinstance(x, Token) and x.type == "STAR" for x in c),
            order_by=value("order") or [],
            skip=value("skip"),
            limit=value("limit"),
            where=value("where"),
        )
        return Part("yield", body, span_of(c))

    def show_skip(self, c: list[Any]) -> Part:
        return Part("skip", ex(exprs(c)[0]), span_of(c))

    def show_limit(self, c: list[Any]) -> Part:
        return Part("limit", ex(exprs(c)[0]), span_of(c))

    def show_where(self, c: list[Any]) -> Part:
        return Part("where", ex(exprs(c)[0]), span_of(c))
