"""Rewrites that put a proxy-answered procedure's rows into the query itself, so the backend
evaluates whatever the client wrote around the call (YIELD, WHERE, WITH, RETURN):

    CALL db.labels() YIELD label WHERE label STARTS WITH 'P' RETURN label
    → UNWIND [{`label`: 'Movie'}, {`label`: 'Person'}] AS __qg_row
      WITH __qg_row.`label` AS `label` WHERE label STARTS WITH 'P' RETURN label

A call without YIELD (or with `YIELD *`) yields every column; a call that ends its query
returns what it yields. `apoc.any.property(x, 'k')` / `apoc.any.properties(x)` become a plain
property lookup / `properties(x)`, which every backend evaluates on maps.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from query_guard.compat.literals import identifier, literal
from query_guard.compat.procedures import Row
from query_guard.cypher import ast
from query_guard.cypher.query import CypherQuery
from query_guard.model import Edit

ROW = "__qg_row"
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class UnknownColumn(ValueError):
    """A YIELD names a column the procedure does not have."""


def rows_head(
    columns: Sequence[str],
    rows: Sequence[Row],
    yields: Sequence[tuple[str, str]],
    where: str | None = None,
    returns: bool = False,
    carry: bool = False,
) -> str:
    """`UNWIND <rows> AS __qg_row WITH __qg_row.c AS a, … [WHERE …] [RETURN a, …]`."""
    source = literal([{c: row.get(c) for c in columns} for row in rows])
    projection = ", ".join(f"{ROW}.{identifier(c)} AS {identifier(a)}" for c, a in yields)
    text = f"UNWIND {source} AS {ROW} WITH {'*, ' if carry else ''}{projection}"
    if where:
        text += f" WHERE {where}"
    if returns:
        text += " RETURN " + ", ".join(_returned(alias) for _, alias in yields)
    return text


def _returned(alias: str) -> str:
    return alias if _BARE.match(alias) else f"{identifier(alias)} AS {identifier(alias)}"


def yielded(call: ast.CallProcedure, columns: Sequence[str]) -> list[tuple[str, str]]:
    """(column, alias) pairs the call yields; every column when it has no YIELD or `YIELD *`."""
    if call.yield_star or not call.yield_items:
        return [(c, c) for c in columns]
    out = []
    for item in call.yield_items:
        if not isinstance(item.expr, ast.Variable) or item.expr.name not in columns:
            raise UnknownColumn(getattr(item.expr, "name", "?"))
        out.append((item.expr.name, item.alias.name if item.alias else item.expr.name))
    return out


def enclosing(query: CypherQuery, clause: ast.Clause) -> ast.SingleQuery | None:
    for single in query.find(ast.SingleQuery):
        if any(c is clause for c in single.clauses):
            return single
    return None


def call_edit(
    query: CypherQuery, call: ast.CallProcedure, columns: Sequence[str], rows: Sequence[Row]
) -> Edit:
    """The edit replacing `call` (through its YIELD … WHERE) by the rows. Raises UnknownColumn."""
    yields = yielded(call, columns)
    single = enclosing(query, call)
    clauses = single.clauses if single is not None else [call]
    index = next(i for i, c in enumerate(clauses) if c is call)
    where = query.source(call.where) if call.where is not None else None
    head = rows_head(
        columns, rows, yields, where, returns=index == len(clauses) - 1, carry=index > 0
    )
    return Edit(call.span[0], call.span[1], head)


def show_edit(
    query: CypherQuery,
    show: ast.ShowCommand,
    columns: Sequence[str],
    rows: Sequence[Row],
    every: Sequence[str] | None = None,
) -> Edit:
    """The edit replacing a `SHOW … [YIELD …] [ORDER BY …] [SKIP] [LIMIT] [WHERE …] [RETURN …]`
    command by the rows; without RETURN it returns what it yields. Without YIELD it yields
    the default `columns`, under `YIELD *` `every` column, and a YIELD may name any of
    `every`, as Neo4j's SHOW does. Raises UnknownColumn."""
    every = columns if every is None else every
    if show.yield_star:
        yields = [(c, c) for c in every]
    elif not show.yield_items:
        yields = [(c, c) for c in columns]
    else:
        yields = []
        for item in show.yield_items:
            if not isinstance(item.expr, ast.Variable) or item.expr.name not in every:
                raise UnknownColumn(getattr(item.expr, "name", "?"))
            yields.append((item.expr.name, item.alias.name if item.alias else item.expr.name))
    # rows as lists, a column by its position: a SHOW's rows are wide (`SHOW PROCEDURES YIELD *`
    # has 13 columns) and the answer must stay within [limits] max_query_tokens
    needed = list(dict.fromkeys(c for c, _ in yields))
    source = literal([[row.get(c) for c in needed] for row in rows])
    projection = ", ".join(f"{ROW}[{needed.index(c)}] AS {identifier(a)}" for c, a in yields)
    text = f"UNWIND {source} AS {ROW} WITH {projection}"
    if show.order_by:
        text += " ORDER BY " + ", ".join(query.source(i) for i in show.order_by)
    if show.skip is not None:
        text += f" SKIP {query.source(show.skip)}"
    if show.limit is not None:
        text += f" LIMIT {query.source(show.limit)}"
    if show.where is not None:
        # Neo4j filters a SHOW's rows after its ORDER BY / SKIP / LIMIT, as a WITH does
        text += f" WITH * WHERE {query.source(show.where)}"
    if show.returns is not None:
        text += " " + query.source(show.returns)
    else:
        text += " RETURN " + ", ".join(_returned(alias) for _, alias in yields)
    return Edit(show.span[0], show.span[1], text)


def any_property_edits(query: CypherQuery) -> list[Edit]:
    """`apoc.any.property(x, 'k')` → `(x).`k``; `apoc.any.properties(x)` → `properties(x)`."""
    edits = []
    for call in query.find(ast.FunctionCall):
        name = call.name.lower()
        if name == "apoc.any.property" and len(call.args) == 2:
            subject, key = (query.source(a) for a in call.args)
            if isinstance(call.args[1], ast.Literal) and isinstance(call.args[1].value, str):
                text = f"({subject}).{identifier(call.args[1].value)}"
            else:
                text = f"({subject})[{key}]"
            edits.append(Edit(call.span[0], call.span[1], text))
        elif name == "apoc.any.properties" and len(call.args) == 1:
            text = f"properties({query.source(call.args[0])})"
            edits.append(Edit(call.span[0], call.span[1], text))
    return edits
