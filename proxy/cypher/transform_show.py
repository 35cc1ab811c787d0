"""lark callbacks for Neo4j 5's SHOW / TERMINATE commands -> `ShowCommand` clauses.

One family of the AST builder's rules (assembled in builders.py). The builders pick their
pieces by name (the declared shapes) or by what they are (a `Part` of a named kind, a
`ProjectionItem`, a `Return`, a keyword token), never by position.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from query_guard.cypher.build_children import Children, Rules
from query_guard.cypher.build_parts import Part, ex, exprs

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


def _words(children: Sequence[Any]) -> list[str]:
    return [t.value.upper() for t in children if isinstance(t, Token) and t.type not in _NOT_WORDS]


def _parts(children: Sequence[Any]) -> dict[str, Part]:
    return {x.kind: x for x in children if type(x) is Part}


def _names(children: Sequence[Any]) -> list[Expr]:
    found = _parts(children).get("names")
    return list(found.value) if found is not None else []


def _executable(children: Sequence[Any]) -> str | None:
    found = _parts(children).get("executable")
    return found.value if found is not None else None


RULES = Rules()
rule = RULES.rule

# ---------------------------------------------------------------- statement


@rule("show_command", "use_clause? *parts")
def show_command(c: Children) -> SingleQuery:
    """`[USE graph] SHOW …`: the USE stays a clause of its own, as in queries."""
    return SingleQuery(c.span, [x for x in c if isinstance(x, (OtherClause, ShowCommand))])


@rule("show_part", "SHOW show_target show_body?")
def show_part(c: Children) -> ShowCommand:
    target: ShowTarget = c.show_target.value
    return _command(c, ["SHOW", *target.words], target)


@rule("terminate_part", "TERMINATE TRANSACTION|TRANSACTIONS show_names show_body?")
def terminate_part(c: Children) -> ShowCommand:
    words = _words(c)
    target = ShowTarget(words, "TERMINATE TRANSACTIONS", _names(c))
    return _command(c, words, target)


def _command(c: Children, words: list[str], target: ShowTarget) -> ShowCommand:
    body: ShowBody = c.show_body.value if c.show_body is not None else ShowBody()
    return ShowCommand(
        c.span,
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


def _target(c: Children, target: str) -> Part:
    value = ShowTarget(_words(c), target, _names(c), _executable(c))
    return Part("target", value, c.span)


@rule("show_indexes", "ALL|BTREE|RANGE|TEXT|POINT|LOOKUP|FULLTEXT|VECTOR? INDEX|INDEXES")
def show_indexes(c: Children) -> Part:
    return _target(c, "INDEXES")


@rule("show_constraints", "kind=constraint_kind? CONSTRAINT|CONSTRAINTS")
def show_constraints(c: Children) -> Part:
    target = _target(c, "CONSTRAINTS")
    if c.kind is not None:
        target.value.words[:0] = c.kind.value
    return target


@rule("constraint_kind", "*words")
def constraint_kind(c: Children) -> Part:
    return Part("constraint_kind", _words(c.words), c.span)


@rule("show_functions", "*words executable_by?")
def show_functions(c: Children) -> Part:
    return _target(c, "FUNCTIONS")


@rule("show_procedures", "PROCEDURE|PROCEDURES executable_by?")
def show_procedures(c: Children) -> Part:
    return _target(c, "PROCEDURES")


@rule("executable_by", "EXECUTABLE *who")
def executable_by(c: Children) -> Part:
    name = next((x for x in c.who if type(x) is Part), None)
    words = _words(c)
    who = "CURRENT USER" if "CURRENT" in words else (name.value if name else None)
    return Part("executable", who, c.span)


@rule("show_transactions", "TRANSACTION|TRANSACTIONS show_names?")
def show_transactions(c: Children) -> Part:
    return _target(c, "TRANSACTIONS")


@rule("show_settings", "SETTING|SETTINGS show_names?")
def show_settings(c: Children) -> Part:
    return _target(c, "SETTINGS")


@rule("show_names", "*items")
def show_names(c: Children) -> Part:
    return Part("names", exprs(c.items), c.span)


@rule("show_admin", "*words")
def show_admin(c: Children) -> Part:
    words = _words(c.words)
    return Part("target", ShowTarget(words, " ".join(words)), c.span)


# ---------------------------------------------------------------- bodies


@rule("show_body", "*parts")
def show_body(c: Children) -> Part:
    parts = _parts(c.parts)
    body = ShowBody()
    if "yield" in parts:
        body = parts["yield"].value
    elif "where" in parts:
        body.where = parts["where"].value
    body.returns = next((x for x in c.parts if isinstance(x, Return)), None)
    return Part("body", body, c.span)


@rule("show_yield", "YIELD *items order_by? skip=show_skip? limit=show_limit? where=show_where?")
def show_yield(c: Children) -> Part:
    def value(part: Part | None) -> Any:
        return part.value if part is not None else None

    body = ShowBody(
        yield_items=[x for x in c.items if isinstance(x, ProjectionItem)],
        yield_star=any(isinstance(x, Token) and x.type == "STAR" for x in c.items),
        order_by=value(c.order_by) or [],
        skip=value(c.skip),
        limit=value(c.limit),
        where=value(c.where),
    )
    return Part("yield", body, c.span)


@rule("show_skip", "SKIP|OFFSET expr")
def show_skip(c: Children) -> Part:
    return Part("skip", ex(c.expr), c.span)


@rule("show_limit", "LIMIT expr")
def show_limit(c: Children) -> Part:
    return Part("limit", ex(c.expr), c.span)


@rule("show_where", "WHERE expr")
def show_where(c: Children) -> Part:
    return Part("where", ex(c.expr), c.span)
