"""A lean driver for a compiled Lark LALR parser: the same tables, lexer and callbacks as
`Lark.parse`, run by one loop without lark's per-token layers (the interactive cursor, the
generator of the contextual lexer, `Rule` hashing on every reduction).

The contextual lexer is lark's too, read once into one entry per parser state
(`query_guard.cypher.lalr_lexer`): that state's terminal alternation split by the text's first
character, its ignored and line-spanning terminals, and its keyword table (the keywords that
a NAME also matches). The loop matches them in place, with lark's line counting, and builds
each `Token` with every field lark sets, without the layers of `Token.__new__` and
`LineCounter`. A reduction calls lark's callback, its child filter read once into a plain
function (`query_guard.cypher.lalr_filters`); a run of one-value reductions (`?rule`
pass-throughs and one-child rules) is looked up once per (state below, top state, lookahead).

It answers only the successful parse. Any failure (a syntax error, a callback that raises)
raises `Fallback`, and the caller re-runs lark's own parser, which
raises exactly the errors it always did — the error paths are lark's, untouched.
Used by the Cypher parser (`query_guard.cypher.parser`);
`tests/unit/test_lalr_driver.py` checks it builds the same values and tokens as lark over
generated and corpus queries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lark import Lark, Token
from lark.parse_tree_builder import ExpandSingleChild
from lark.parsers.lalr_analysis import Shift

from query_guard.cypher.lalr_filters import lean_callback
from query_guard.cypher.lalr_lexer import state_lexers

__all__ = ["Fallback", "LalrDriver"]

# a state's action on a symbol: an int is "shift to / go to that state", a tuple is
# "reduce by a rule": (number of values it pops, its callback, the rule's symbol); no
# callback: a one-symbol rule that passes its value through (lark's `?rule` inlining)
_Action = int | tuple[int, Callable[[list[Any]], Any] | None, str]
# where a run of one-value reductions ends (the top state), the callbacks it calls and the
# action the lookahead has in that state
_Run = tuple[int, tuple[Callable[[list[Any]], Any], ...], _Action | None]

_new_str = str.__new__


class Fallback(Exception):
    """The lean parse did not succeed: let lark parse (and report) this text."""


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
                        else:
                            callback = lean_callback(callback, size)
                        # a plain str: lark's rule names may be Tokens, whose __eq__ is
                        # Python code that every goto lookup would call
                        reductions[arg] = (size, callback, str(arg.origin.name))
                    actions[symbol] = reductions[arg]
            self._actions[state] = actions
        # (state below, top state, lookahead) -> the top state after the one-value reductions
        # that lookahead makes there, and their callbacks: filled as queries meet them
        self._passes: dict[tuple[int, int, str], _Run] = {}
        self._token_callbacks = {k: v for k, v in callbacks.items() if isinstance(k, str)}
        self._lexers = state_lexers(frontend.lexer.lexers)

    def parse(self, text: str, tokens: list[Token] | None = None) -> Any:
        """The value lark's parse of `text` returns; every token lexed is appended to
        `tokens` when given. Raises Fallback whenever lark's own parse is needed."""
        try:
            return self._run(text, [] if tokens is None else tokens)
        except Fallback:
            raise
        except Exception as exc:  # a syntax error or a callback's error: lark says which
            raise Fallback from exc

    def _run(self, text: str, tokens: list[Token]) -> Any:
        actions = self._actions
        token_callbacks = self._token_callbacks
        lexers = self._lexers
        end_state = self._end
        passes = self._passes
        states = [self._start]
        values: list[Any] = []
        end = len(text)
        pos = 0
        line = 1
        line_start = 0  # offset of the current line's first character
        kind = ""
        while kind != "$END":
            kind = "$END"
            token: Any = None
            if pos < end:  # lark's BasicLexer.next_token, for the state on top of the stack
                by_char, whole, ignore, newline, keywords, lex_callbacks = lexers[states[-1]]
                while pos < end:
                    found = by_char.get(text[pos], whole)(text, pos)
                    if found is None:
                        raise Fallback  # lark raises UnexpectedCharacters
                    value = found.group()
                    type_ = found.lastgroup
                    if type_ in ignore:
                        if type_ in lex_callbacks:
                            raise Fallback  # lark would call it on the ignored token
                        if type_ in newline:
                            breaks = value.count("\n")
                            if breaks:
                                line += breaks
                                line_start = pos + value.rindex("\n") + 1
                        pos += len(value)
                        continue
                    start, start_line, column = pos, line, pos - line_start + 1
                    if type_ in newline:
                        breaks = value.count("\n")
                        if breaks:
                            line += breaks
                            line_start = pos + value.rindex("\n") + 1
                    pos += len(value)
                    callback = None
                    if type_ in lex_callbacks:
                        table = keywords[type_]
                        if table is not None and value.isascii():
                            exact, folded = table
                            type_ = (exact and exact.get(value)) or folded.get(value.upper(), type_)
                        else:
                            callback = lex_callbacks[type_]
                    token = _new_str(Token, value)
                    token.type = type_
                    token.start_pos = start
                    token.value = value
                    token.line = start_line
                    token.column = column
                    token.end_line = line
                    token.end_column = pos - line_start + 1
                    token.end_pos = pos
                    if callback is not None:
                        token = callback(token)
                        if not isinstance(token, Token):
                            raise Fallback
                    kind = token.type
                    tokens.append(token)
                    break
            action = actions[states[-1]].get(kind)
            while True:
                if action is None:
                    raise Fallback
                if action.__class__ is int:
                    if token is None:
                        raise Fallback
                    states.append(action)  # type: ignore[arg-type]
                    if token_callbacks and kind in token_callbacks:
                        values.append(token_callbacks[kind](token))
                    else:
                        values.append(token)
                    break
                size, callback, origin = action  # type: ignore[misc]
                if size == 1:  # the state below stays: a run of one-value reductions
                    # pops and replaces only the top state (and value), so where it ends,
                    # which callbacks it calls and the action that follows depend on the
                    # state below, the top and the lookahead alone
                    key = (states[-2], states[-1], kind)
                    run = passes.get(key)
                    if run is None:
                        run = passes[key] = self._one_value_run(key)
                    states[-1], calls, action = run
                    if calls:
                        value = values[-1]
                        for call in calls:
                            value = call([value])
                        values[-1] = value
                    if token is None and states[-1] == end_state:
                        return values[-1]
                    continue
                if size:
                    children = values[-size:]
                    del states[-size:]
                    del values[-size:]
                    states.append(actions[states[-1]][origin])  # type: ignore[arg-type]
                    values.append(callback(children))
                else:
                    states.append(actions[states[-1]][origin])  # type: ignore[arg-type]
                    values.append(callback([]))
                if token is None and states[-1] == end_state:
                    return values[-1]
                action = actions[states[-1]].get(kind)
        raise Fallback  # pragma: no cover - the loop returns or raises

    def _one_value_run(self, key: tuple[int, int, str]) -> _Run:
        """Apply one-value reductions on lookahead `kind` while the top state's action is one,
        the state below staying put; stop at the accepting state (for `$END`). The top state
        it ends in and the callbacks it calls, in order (pass-through reductions call none)."""
        below, top, kind = key
        actions = self._actions
        calls: list[Callable[..., Any]] = []
        while True:
            action = actions[top].get(kind)
            if action is None or action.__class__ is int or action[0] != 1:  # type: ignore[index]
                return top, tuple(calls), action
            if action[1] is not None:  # type: ignore[index]
                calls.append(action[1])  # type: ignore[index]
            top = actions[below][action[2]]  # type: ignore[index,assignment]
            if kind == "$END" and top == self._end:
                return top, tuple(calls), actions[top].get(kind)
