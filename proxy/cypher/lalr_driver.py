"""A lean driver for a compiled Lark LALR parser: the same tables, lexer and callbacks as
`Lark.parse`, run by one loop without lark's per-token layers (the interactive cursor, the
generator of the contextual lexer, `Rule` hashing on every reduction).

It answers only the successful parse. Any failure (a syntax error, a callback that raises)
raises `Fallback`, and the caller re-runs lark's own parser, which
raises exactly the errors it always did — the error paths are lark's, untouched.
Used by the Cypher and the Gremlin parsers (`query_guard.cypher.parser`,
`query_guard.gremlin.parser`); `tests/unit/test_lalr_driver.py` checks it builds the same
values as lark over generated and corpus queries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lark import Lark, Token
from lark.lexer import LexerState, TextSlice
from lark.parse_tree_builder import ExpandSingleChild
from lark.parsers.lalr_analysis import Shift

__all__ = ["Fallback", "LalrDriver"]

# a state's action on a symbol: an int is "shift to / go to that state", a tuple is
# "reduce by a rule": (number of values it pops, its callback, the rule's symbol); no
# callback: a one-symbol rule that passes its value through (lark's `?rule` inlining)
_Action = int | tuple[int, Callable[[list[Any]], Any] | None, str]


class Fallback(Exception):
    """The lean parse did not succeed: let lark parse (and report) this text."""


class _Position:
    """What lark's contextual lexer reads of a parser state: the current state number."""

    __slots__ = ("stack",)

    def __init__(self, stack: list[int]) -> None:
        self.stack = stack

    @property
    def position(self) -> int:
        return self.stack[-1]


class LalrDriver:
    """Parse with `lark`'s compiled LALR tables and contextual lexer (built with
    `parser="lalr", lexer="contextual"` and a transformer)."""

    def __init__(self, lark: Lark) -> None:
        frontend = lark.parser
        inner = frontend.parser.parser  # lark's _Parser: its parse table and callbacks
        table = inner.parse_table
        callbacks = inner.callbacks
        (start,) = lark.options.start
        self._start = table.start_states[start]
        self._end = table.end_states[start]
        reductions: dict[Any, _Action] = {}
        self._actions: dict[int, dict[str, _Action]] = {}
        for state, row in table.states.items():
            actions: dict[str, _Action] = {}
            for symbol, (action, arg) in row.items():
                if action is Shift:
                    actions[symbol] = arg
                else:
                    if arg not in reductions:
                        size, callback = len(arg.expansion), callbacks[arg]
                        if size == 1 and type(callback) is ExpandSingleChild:
                            callback = None
                        reductions[arg] = (size, callback, arg.origin.name)
                    actions[symbol] = reductions[arg]
            self._actions[state] = actions
        self._token_callbacks = {k: v for k, v in callbacks.items() if isinstance(k, str)}
        self._lexers = frontend.lexer.lexers  # the contextual lexer's one lexer per state

    def parse(self, text: str, tokens: list[Token] | None = None) -> Any:
        """The value lark's parse of `text` returns; every token lexed is appended to
        `tokens` when given. Raises Fallback whenever lark's own parse is needed."""
        try:
            return self._run(text, tokens)
        except Fallback:
            raise
        except Exception as exc:  # a syntax error or a callback's error: lark says which
            raise Fallback from exc

    def _run(self, text: str, tokens: list[Token] | None) -> Any:
        actions = self._actions
        token_callbacks = self._token_callbacks
        lexers = self._lexers
        states = [self._start]
        values: list[Any] = []
        position = _Position(states)
        lex_state = LexerState(TextSlice(text, 0, len(text)))
        kind = ""
        while kind != "$END":
            try:
                token = lexers[states[-1]].next_token(lex_state, position)
                kind = token.type
            except EOFError:
                kind = "$END"
            else:
                if tokens is not None:
                    tokens.append(token)
            while True:
                action = actions[states[-1]].get(kind)
                if action is None:
                    raise Fallback
                if action.__class__ is int:
                    if kind == "$END":
                        raise Fallback
                    states.append(action)  # type: ignore[arg-type]
                    callback = token_callbacks.get(kind)
                    values.append(token if callback is None else callback(token))
                    break
                size, callback, origin = action  # type: ignore[misc]
                if callback is None:  # the one value stays; only the state changes
                    del states[-1]
                    states.append(actions[states[-1]][origin])  # type: ignore[arg-type]
                elif size:
                    children = values[-size:]
                    del states[-size:]
                    del values[-size:]
                    states.append(actions[states[-1]][origin])  # type: ignore[arg-type]
                    values.append(callback(children))
                else:
                    states.append(actions[states[-1]][origin])  # type: ignore[arg-type]
                    values.append(callback([]))
                if kind == "$END" and states[-1] == self._end:
                    return values[-1]
        raise Fallback  # pragma: no cover - the loop returns or raises
