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
from query_guard.cypher.build_children import Rules, Slots
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


SHOW_COMMAND = rule("show_command", "use_clause? *parts")


@SHOW_COMMAND
def show_command(c: list[Any]) -> SingleQuery:
    """`[USE graph] SHOW …`: the USE stays a clause of its own, as in queries."""
    return SingleQuery(span_of(c), [x for x in c if isinstance(x, (OtherClause, ShowCommand))])


SHOW_PART = rule("show_part", "SHOW show_target show_body?")


@SHOW_PART
def show_part(c: list[Any]) -> ShowCommand:
    target: ShowTarget = c[SHOW_PART.show_target].value
    return _command(c, SHOW_PART, ["SHOW", *target.words], target)


TERMINATE_PART = rule("terminate_part", "TERMINATE TRANSACTION|TRANSACTIONS show_names show_body?")


@TERMINATE_PART
def terminate_part(c: list[Any]) -> ShowCommand:
    words = _words(c)
    target = ShowTarget(words, "TERMINATE TRANSACTIONS", _names(c))
    return _command(c, TERMINATE_PART, words, target)


def _command(c: list[Any], s: Slots, words: list[str], target: ShowTarget) -> ShowCommand:
    body_part = c[s.show_body]
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


def _target(c: list[Any], target: str) -> Part:
    value = ShowTarget(_words(c), target, _names(c), _executable(c))
    return Part("target", value, span_of(c))


SHOW_INDEXES = rule(
    "show_indexes", "ALL|BTREE|RANGE|TEXT|POINT|LOOKUP|FULLTEXT|VECTOR? INDEX|INDEXES"
)


@SHOW_INDEXES
def show_indexes(c: list[Any]) -> Part:
    return _target(c, "INDEXES")


SHOW_CONSTRAINTS = rule("show_constraints", "kind=constraint_kind? CONSTRAINT|CONSTRAINTS")


@SHOW_CONSTRAINTS
def show_constraints(c: list[Any]) -> Part:
    target = _target(c, "CONSTRAINTS")
    if c[SHOW_CONSTRAINTS.kind] is not None:
        target.value.words[:0] = c[SHOW_CONSTRAINTS.kind].value
    return target


CONSTRAINT_KIND = rule("constraint_kind", "*words")


@CONSTRAINT_KIND
def constraint_kind(c: list[Any]) -> Part:
    return Part("constraint_kind", _words(c[CONSTRAINT_KIND.words]), span_of(c))


SHOW_FUNCTIONS = rule("show_functions", "*words executable_by?")


@SHOW_FUNCTIONS
def show_functions(c: list[Any]) -> Part:
    return _target(c, "FUNCTIONS")


SHOW_PROCEDURES = rule("show_procedures", "PROCEDURE|PROCEDURES executable_by?")


@SHOW_PROCEDURES
def show_procedures(c: list[Any]) -> Part:
    return _target(c, "PROCEDURES")


EXECUTABLE_BY = rule("executable_by", "EXECUTABLE *who")


@EXECUTABLE_BY
def executable_by(c: list[Any]) -> Part:
    name = next((x for x in c[EXECUTABLE_BY.who] if type(x) is Part), None)
    words = _words(c)
    who = "CURRENT USER" if "CURRENT" in words else (name.value if name else None)
    return Part("executable", who, span_of(c))


SHOW_TRANSACTIONS = rule("show_transactions", "TRANSACTION|TRANSACTIONS show_names?")


@SHOW_TRANSACTIONS
def show_transactions(c: list[Any]) -> Part:
    return _target(c, "TRANSACTIONS")


SHOW_SETTINGS = rule("show_settings", "SETTING|SETTINGS show_names?")


@SHOW_SETTINGS
def show_settings(c: list[Any]) -> Part:
    return _target(c, "SETTINGS")


SHOW_NAMES = rule("show_names", "*items")


@SHOW_NAMES
def show_names(c: list[Any]) -> Part:
    return Part("names", exprs(c[SHOW_NAMES.items]), span_of(c))


SHOW_ADMIN = rule("show_admin", "*words")


@SHOW_ADMIN
def show_admin(c: list[Any]) -> Part:
    words = _words(c[SHOW_ADMIN.words])
    return Part("target", ShowTarget(words, " ".join(words)), span_of(c))


# ---------------------------------------------------------------- bodies


SHOW_BODY = rule("show_body", "*parts")


@SHOW_BODY
def show_body(c: list[Any]) -> Part:
    parts = _parts(c[SHOW_BODY.parts])
    body = ShowBody()
    if "yield" in parts:
        body = parts["yield"].value
    elif "where" in parts:
        body.where = parts["where"].value
    body.returns = next((x for x in c[SHOW_BODY.parts] if isinstance(x, Return)), None)
    return Part("body", body, span_of(c))


SHOW_YIELD = rule(
    "show_yield", "YIELD *items order_by? skip=show_skip? limit=show_limit? where=show_where?"
)


@SHOW_YIELD
def show_yield(c: list[Any]) -> Part:
    def value(part: Part | None) -> Any:
        return part.value if part is not None else None

    body = ShowBody(
        yield_items=[x for x in c[SHOW_YIELD.items] if isinstance(x, ProjectionItem)],
        yield_star=any(isinstance(x, Token) and x.type == "STAR" for x in c[SHOW_YIELD.items]),
        order_by=value(c[SHOW_YIELD.order_by]) or [],
        skip=value(c[SHOW_YIELD.skip]),
        limit=value(c[SHOW_YIELD.limit]),
        where=value(c[SHOW_YIELD.where]),
    )
    return Part("yield", body, span_of(c))


SHOW_SKIP = rule("show_skip", "SKIP|OFFSET expr")


@SHOW_SKIP
def show_skip(c: list[Any]) -> Part:
    return Part("skip", ex(c[SHOW_SKIP.expr]), span_of(c))


SHOW_LIMIT = rule("show_limit", "LIMIT expr")


@SHOW_LIMIT
def show_limit(c: list[Any]) -> Part:
    return Part("limit", ex(c[SHOW_LIMIT.expr]), span_of(c))


SHOW_WHERE = rule("show_where", "WHERE expr")


@SHOW_WHERE
def show_where(c: list[Any]) -> Part:
    return Part("where", ex(c[SHOW_WHERE.expr]), span_of(c))
