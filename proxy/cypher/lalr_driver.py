"""A lean driver for a compiled Lark LALR parser: the same tables, lexer and callbacks as
`Lark.parse`, run by one loop without lark's per-token layers (the interactive cursor, the
generator of the contextual lexer, `Rule` hashing on every reduction).

The contextual lexer is lark's too, read once into one entry per parser state
(`query_guard.cypher.lalr_lexer`): that state's terminal alternation split by the text's first
character, its ignored and line-spanning terminals, its keyword table (the keywords that a
NAME also matches), the plain strings a character starts (punctuation: no regex match) and
when a lone space is an ignored text (skipped without a match). The loop matches them in
place, with lark's line counting, and builds each `Token` with every field lark sets, without
the layers of `Token.__new__` and `LineCounter`. A reduction calls lark's callback, its child
filter read once into a plain function (`query_guard.cypher.lalr_filters`); a run of one-value
reductions (`?rule` pass-throughs and one-child rules) is looked up once per (state below, top
state, lookahead), in the table entry of (top state, lookahead). Parse table and lexers are
lists indexed by state; the top state is a local.

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

from query_guard.cypher.lalr_filters import PASS_THROUGH, lean_callback, spliced_lists
from query_guard.cypher.lalr_lexer import StateLexer, state_lexers

__all__ = ["Fallback", "LalrDriver"]

# a state's action on a symbol: an int is "shift to / go to that state", a tuple is
# "reduce by a rule": (number of values it pops, its callback, the rule's symbol); no
# callback: a one-symbol rule that passes its value through (lark's `?rule` inlining)
_Action = int | tuple[int, Callable[[list[Any]], Any] | None, str]
# where a run of one-value reductions ends (the top state), the callbacks it calls and the
# loop's action for the lookahead in that state (a _LoopAction or None; Any: the two types
# refer to each other)
_Run = tuple[int, tuple[Callable[[list[Any]], Any], ...], Any]

# what the loop reads: a shift, a one-value reduction's runs by the state below, a reduction
_LoopAction = int | dict[int, _Run] | tuple[int, int, Callable[[list[Any]], Any], dict[int, int]]

_new_str = str.__new__


# how the loop treats a terminal a state's lexer matched: a token (_PLAIN, or _LINES when it may
# span lines), an ignored text (_SKIP, _SKIP_LINES), an ignored text lark calls back on (_FAIL:
# lark parses); a NAME whose keywords are plain words is (the words typed so far, exact
# keywords, upper-cased keywords, the code of lark's callback, whether it may span lines);
# another terminal with lark's callback is [callback, whether it may span lines]
_PLAIN, _LINES, _SKIP, _SKIP_LINES, _FAIL = 0, 1, 2, 3, 4
_Keywords = tuple[dict[str, str], dict[str, str], dict[str, str], list[Any], bool]
_Code = int | _Keywords | list[Any]
# at most this many words kept per keyword table (names vary; keywords are few)
_KNOWN_WORDS = 256


def _word(code: _Keywords, value: str, name: str) -> str | None:
    """The type lark's keyword callback gives the terminal `name` matching `value` (None: not
    ASCII, the callback must run), kept in the table's known words while they are few."""
    if not value.isascii():
        return None
    known, exact, folded, _, _ = code
    word = (exact and exact.get(value)) or folded.get(value.upper(), name)
    if len(known) < _KNOWN_WORDS:
        known[value] = word
    return word


# a state's lexer as the loop reads it: (matcher by first character, or the terminal when the
# character alone is one, or the (string, terminal)s to try, matcher for any other,
# each terminal's code, the matcher for a space when a lone space may be skipped, the ASCII
# characters after which it is)
_LoopLexer = tuple[
    dict[str, Callable[..., Any] | str | tuple[tuple[str, str], ...]],
    Callable[..., Any],
    dict[str, _Code],
    Callable[..., Any] | None,
    frozenset[str],
]


def _lexer_table(lexers: dict[int, StateLexer], count: int) -> list[_LoopLexer | None]:
    """Each state's lexer as the loop reads it (None for a state without one)."""
    built: dict[int, _LoopLexer] = {}
    words: dict[Any, dict[str, str]] = {}  # the words a keyword table has typed, by table
    # read through Any: the entries' identities say which states share a lexer, and code
    # compiled by mypyc copies a fixed-length tuple it reads as its declared type
    shared: dict[int, Any] = lexers
    for entry in shared.values():
        if id(entry) in built:
            continue
        by_char, whole, ignore, newline, keywords, callbacks, after_space, literals = entry
        # a character alone a token: its terminal's name; a few plain strings: (string, name)s
        loop_by_char: dict[str, Callable[..., Any] | str | tuple[tuple[str, str], ...]]
        loop_by_char = {**by_char}
        for char, strings in literals.items():
            loop_by_char[char] = strings[0][1] if len(strings) == 1 else strings
        codes: dict[str, _Code] = {}
        for name in whole.__self__.groupindex:  # type: ignore[attr-defined]
            lines = name in newline
            if name in ignore:
                codes[name] = _FAIL if name in callbacks else _SKIP_LINES if lines else _SKIP
            elif name in callbacks:
                table = keywords[name]
                if table is None:
                    codes[name] = [callbacks[name], lines]
                else:
                    key = (name, tuple(table[0].items()), tuple(table[1].items()))
                    known = words.setdefault(key, {})
                    callback = [callbacks[name], lines]
                    codes[name] = (known, *table, callback, lines)
            else:
                codes[name] = _LINES if lines else _PLAIN
        # the matcher for a space, when a lone space before one of `after_space` is skipped: a
        # bound method of its own (other characters may share the pattern, not the object)
        space: Callable[..., Any] | None = None
        if after_space:
            space = loop_by_char[" "].__self__.match  # type: ignore[union-attr]
            loop_by_char = {**loop_by_char, " ": space}
        built[id(entry)] = (loop_by_char, whole, codes, space, after_space)
    return [built[id(shared[s])] if s in shared else None for s in range(count)]


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
        lists = spliced_lists((r, c) for r, c in callbacks.items() if not isinstance(r, str))
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
                            at = [i for i, s in enumerate(arg.expansion) if s.name in lists]
                            as_list = arg.origin.name in lists
                            callback = lean_callback(callback, size, frozenset(at), as_list)
                        # a plain str: lark's rule names may be Tokens, whose __eq__ is
                        # Python code that every goto lookup would call
                        reductions[arg] = (size, callback, str(arg.origin.name))
                    actions[symbol] = reductions[arg]
            self._actions[state] = actions
        # the state each nonterminal goes to, by the state below it
        self._gotos: dict[str, dict[int, int]] = {}
        for state, actions in self._actions.items():
            for symbol, action in actions.items():
                if action.__class__ is int:
                    self._gotos.setdefault(str(symbol), {})[state] = action  # type: ignore[assignment]
        # lark's callbacks on shifted terminals: none in the Cypher grammar; with any, lark parses
        self._usable = not any(isinstance(k, str) for k in callbacks)
        # the accepting state has no action: the loop accepts when the lookahead, `$END`, has
        # none there
        self._usable &= not self._actions[self._end]
        self._usable &= not any(a.get("$END").__class__ is int for a in self._actions.values())
        count = max(self._actions) + 1
        self._table = [self._loop_row(self._actions.get(s, {})) for s in range(count)]
        self._lexers = state_lexers(frontend.lexer.lexers)
        self._lexer_table = _lexer_table(self._lexers, count)

    def _loop_row(self, actions: dict[str, _Action]) -> dict[str, _LoopAction]:
        """A state's actions as the loop reads them: a shift (the state it goes to), a
        reduction by (-size, 1 - size: the slices it pops, its callback, the states its
        nonterminal goes to by the state below), or for a one-value reduction, the runs it
        starts by the state below (a cache `_one_value_run` fills as queries meet them; one
        per state and lookahead)."""
        row: dict[str, _LoopAction] = {}
        for symbol, action in actions.items():
            if action.__class__ is int:
                row[symbol] = action
            elif action[0] == 1:  # type: ignore[index]
                row[symbol] = {}
            else:
                size, callback, origin = action  # type: ignore[misc]
                row[symbol] = (-size, 1 - size, callback, self._gotos[origin])  # type: ignore[assignment]
        return row

    def parse(self, text: str, tokens: list[Token] | None = None) -> Any:
        """The value lark's parse of `text` returns; every token lexed is appended to
        `tokens` when given. Raises Fallback whenever lark's own parse is needed."""
        if not self._usable:
            raise Fallback
        try:
            return self._run(text, [] if tokens is None else tokens)
        except Fallback:
            raise
        except Exception as exc:  # a syntax error or a callback's error: lark says which
            raise Fallback from exc

    def _run(self, text: str, tokens: list[Token]) -> Any:
        actions = self._table
        lexers = self._lexer_table
        end_state = self._end
        state = self._start
        states = [state]
        values: list[Any] = []
        push_state = states.append
        push_value = values.append
        push_token = tokens.append
        end = len(text)
        pos = 0
        line = 1
        line_start = 0  # offset of the current line's first character
        while True:
            kind = "$END"
            token: Any = None
            if pos < end:  # lark's BasicLexer.next_token, for the state on top of the stack
                by_char, whole, codes, space, after_space = lexers[state]
                while pos < end:
                    char = text[pos]
                    matcher = by_char.get(char, whole)
                    if matcher.__class__ is str:  # the one-character token `char` is
                        kind = matcher  # type: ignore[assignment]
                        token = _new_str(Token, char)
                        token.type = kind
                        token.start_pos = pos
                        token.value = char
                        token.line = line
                        token.column = pos - line_start + 1
                        pos += 1
                        token.end_line = line
                        token.end_column = pos - line_start + 1
                        token.end_pos = pos
                        push_token(token)
                        break
                    if matcher.__class__ is tuple:  # plain strings: the first the text has
                        for candidate in matcher:  # type: ignore[attr-defined]
                            if text.startswith(candidate[0], pos):
                                break
                        value, kind = candidate
                        token = _new_str(Token, value)
                        token.type = kind
                        token.start_pos = pos
                        token.value = value
                        token.line = line
                        token.column = pos - line_start + 1
                        pos += len(value)
                        token.end_line = line
                        token.end_column = pos - line_start + 1
                        token.end_pos = pos
                        push_token(token)
                        break
                    if matcher is space and pos + 1 < end and text[pos + 1] in after_space:
                        pos += 1  # a lone space: the ignored text it would match
                        continue
                    found = matcher(text, pos)
                    if found is None:
                        raise Fallback  # lark raises UnexpectedCharacters
                    value = found[0]
                    kind = found.lastgroup
                    code = codes[kind]
                    if code.__class__ is tuple:  # a NAME that may be a keyword
                        word = code[0].get(value)  # type: ignore[union-attr]
                        if word is None:
                            word = _word(code, value, kind)  # type: ignore[arg-type]
                        if word is None or (code[4] and "\n" in value):  # type: ignore[index]
                            code = code[3]  # type: ignore[index]  # lark's callback decides
                        else:
                            kind = word
                            code = _PLAIN
                    if code is _PLAIN:
                        token = _new_str(Token, value)
                        token.type = kind
                        token.start_pos = pos
                        token.value = value
                        token.line = line
                        token.column = pos - line_start + 1
                        pos += len(value)
                        token.end_line = line
                        token.end_column = pos - line_start + 1
                        token.end_pos = pos
                        push_token(token)
                        break
                    if code is _SKIP:
                        pos += len(value)
                        kind = "$END"
                        continue
                    if code is _FAIL:
                        raise Fallback  # lark would call it on the ignored token
                    start_line = line
                    column = pos - line_start + 1
                    if code.__class__ is int or code[1]:  # type: ignore[index]
                        breaks = value.count("\n")
                        if breaks:
                            line += breaks
                            line_start = pos + value.rindex("\n") + 1
                    if code is _SKIP_LINES:
                        pos += len(value)
                        kind = "$END"
                        continue
                    token = _new_str(Token, value)
                    token.type = kind
                    token.start_pos = pos
                    token.value = value
                    token.line = start_line
                    token.column = column
                    pos += len(value)
                    token.end_line = line
                    token.end_column = pos - line_start + 1
                    token.end_pos = pos
                    if code.__class__ is list:
                        token = code[0](token)  # type: ignore[index]
                        if not isinstance(token, Token):
                            raise Fallback
                        kind = token.type
                    push_token(token)
                    break
            action = actions[state].get(kind)
            while True:
                if action is None:
                    if token is None and state == end_state:
                        return values[-1]
                    raise Fallback
                if action.__class__ is int:  # a shift (never on `$END`: checked at build)
                    state = action  # type: ignore[assignment]
                    push_state(state)
                    push_value(token)
                    break
                if action.__class__ is dict:  # a run of one-value reductions
                    # pops and replaces only the top state (and value), so where it ends,
                    # which callbacks it calls and the action that follows depend on the
                    # state below, the top and the lookahead alone
                    below = states[-2]
                    run = action.get(below)  # type: ignore[union-attr]
                    if run is None:
                        run = action[below] = self._one_value_run(below, state, kind)  # type: ignore[index]
                    state, calls, action = run
                    states[-1] = state
                    if calls:
                        value = values[-1]
                        for call in calls:
                            value = call([value])
                        values[-1] = value
                    continue
                popped, kept, callback, goto = action  # type: ignore[misc]
                if popped:  # -size: pop the top `size` states and values, push one of each
                    children = values[popped:]
                    del states[kept:]
                    del values[kept:]
                    state = goto[states[-2]]
                    states[-1] = state
                    values[-1] = callback(children)
                else:
                    state = goto[state]
                    push_state(state)
                    push_value(callback([]))
                action = actions[state].get(kind)

    def _one_value_run(self, below: int, top: int, kind: str) -> _Run:
        """Apply one-value reductions on lookahead `kind` while the top state's action is one,
        the state below staying put; stop at the accepting state (for `$END`). The top state
        it ends in, the callbacks it calls, in order (pass-through reductions call none), and
        the loop's action that follows."""
        actions = self._actions
        calls: list[Callable[..., Any]] = []
        while True:
            action = actions[top].get(kind)
            if action is None or action.__class__ is int or action[0] != 1:  # type: ignore[index]
                return top, tuple(calls), self._table[top].get(kind)
            if action[1] is not None and action[1] is not PASS_THROUGH:  # type: ignore[index]
                calls.append(action[1])  # type: ignore[index]
            top = actions[below][action[2]]  # type: ignore[index,assignment]
            if kind == "$END" and top == self._end:
                return top, tuple(calls), None
