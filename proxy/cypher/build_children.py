"""Named children for the Cypher AST builder: each grammar rule's callback declares the shape
of the children lark hands it, once, and reads them by name (`c[MATCH_CLAUSE.where]`), never
by a number: the shape is the one table that maps names to positions.

A shape is a string of slots, one per child, in grammar order:

* `SYM` or `name=SYM|OTHER` - one child that is the terminal or rule SYM (or OTHER), at
  `c[S.name]` (default name: SYM in lower case; a default name used twice is not readable);
* a trailing `?` - the child may be a None placeholder (an `[optional]` part);
* `*name` - any number of children (lark's `x*` / `x+` / `_rule` splices), `c[S.name]` a list.

The callbacks receive lark's own child list (no view object, no wrapper: the parse is on the
guard's hot path); `S` is the `Slots` the rule's decorator returned.

`check_shapes` matches every shape against the expansions lark compiled from the grammar
(`Lark.rules`): a rule without a callback, a callback without a rule, a child count or symbol
that differs, or a `?` that no longer matches a placeholder fails the parser's construction,
naming the rule - a grammar edit cannot silently shift what a callback reads.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lark.grammar import Rule

_VARIADIC = "*"  # marks a spliced `_rule` in an expansion's slot list


@dataclass(frozen=True, slots=True)
class _Slot:
    name: str | None
    symbols: frozenset[str]
    optional: bool


def _default_name(symbols: frozenset[str]) -> str | None:
    return next(iter(symbols)).lower() if len(symbols) == 1 else None


@dataclass(frozen=True, slots=True)
class Shape:
    """A rule's declared children: fixed slots before and after an optional variadic run."""

    text: str
    prefix: tuple[_Slot, ...]
    star: str | None
    suffix: tuple[_Slot, ...]

    @classmethod
    def parse(cls, text: str) -> Shape:
        before: list[_Slot] = []
        after: list[_Slot] = []
        star: str | None = None
        for word in text.split():
            if word.startswith("*"):
                if star is not None:
                    raise ValueError(f"shape {text!r}: more than one `*` slot")
                star = word[1:]
                continue
            name, _, syms = word.rpartition("=")
            optional = syms.endswith("?")
            symbols = frozenset(syms.rstrip("?").split("|"))
            (after if star is not None else before).append(
                _Slot(name or _default_name(symbols), symbols, optional)
            )
        return cls(text, tuple(before), star, tuple(after))

    def positions(self, rule: str) -> dict[str, int | slice]:
        """Each readable slot's index (negative after the `*` run); the run's slice."""
        slots = [*self.prefix, *self.suffix]
        explicit = [s.name for s in slots if s.name is not None]
        found: dict[str, int | slice] = {}
        for i, slot in enumerate(slots):
            if slot.name is None or explicit.count(slot.name) > 1:
                continue
            if slot.name == self.star or slot.name.startswith("_") or slot.name == "shape":
                raise ValueError(f"rule {rule!r}: slot name {slot.name!r} is taken")
            found[slot.name] = i if i < len(self.prefix) else i - len(slots)
        if self.star:
            found[self.star] = slice(len(self.prefix), -len(self.suffix) or None)
        return found

    def mismatches(self, rule: str, expansions: list[list[str | None]]) -> list[str]:
        """Why the expansions (slot lists: symbol, None placeholder, `*` splice) do not fit."""
        errors: list[str] = []
        placeholder: set[int] = set()
        fixed = [*self.prefix, *self.suffix]
        for slots in expansions:
            shown = " ".join(s or "~" for s in slots)
            head, tail = slots[: len(self.prefix)], slots[len(slots) - len(self.suffix) :]
            if self.star is None and len(slots) != len(self.prefix):
                errors.append(f"{rule}: {len(slots)} children ({shown}), shape {self.text!r}")
                continue
            if len(slots) < len(fixed) or any(s == _VARIADIC for s in [*head, *tail]):
                errors.append(f"{rule}: children ({shown}) do not fit shape {self.text!r}")
                continue
            for i, (slot, symbol) in enumerate(zip(fixed, [*head, *tail], strict=True)):
                if symbol is None:
                    placeholder.add(i)
                    if not slot.optional:
                        errors.append(f"{rule}: slot {slot.name} may be absent ({shown})")
                elif symbol not in slot.symbols:
                    errors.append(f"{rule}: slot {slot.name} is {symbol} ({shown})")
        for i, slot in enumerate(fixed):
            if slot.optional and i not in placeholder:
                errors.append(f"{rule}: slot {slot.name} is marked `?` but is never absent")
        return errors


@dataclass(frozen=True, slots=True)
class Builder:
    shape: Shape
    build: Callable[[list[Any]], Any]  # lark's callback itself: no wrapper on the hot path


class Slots:
    """Where the named children of one rule sit in the list lark passes: `c[S.where]` for a
    slot, `c[S.items]` (a slice) for the `*` run. Decorating a function with it registers that
    function as the rule's builder."""

    def __init__(self, table: Rules, rule: str, shape: Shape) -> None:
        self._table = table
        self._rule = rule
        self.shape = shape
        for name, position in shape.positions(rule).items():
            setattr(self, name, position)

    def __call__(self, build: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
        if self._rule in self._table:
            raise ValueError(f"two callbacks for rule {self._rule!r}")
        self._table[self._rule] = Builder(self.shape, build)
        return build

    if TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any: ...


class Rules(dict[str, Builder]):
    """The callbacks of one family of grammar rules, by rule name (or alias)."""

    def rule(self, name: str, shape: str) -> Slots:
        return Slots(self, name, Shape.parse(shape))


def merge(*families: Mapping[str, Builder]) -> dict[str, Builder]:
    """One table from the families' tables; a rule claimed twice is an error."""
    table: dict[str, Builder] = {}
    for family in families:
        for name, builder in family.items():
            if name in table:
                raise ValueError(f"two callbacks for rule {name!r}")
            table[name] = builder
    return table


def _expansion_slots(rule: Rule) -> list[str | None]:
    """The children lark passes for one expansion (keep_all_tokens, maybe_placeholders)."""
    empty = rule.options.empty_indices
    if empty:
        nones = [len(ones) for ones in "".join(str(int(b)) for b in empty).split("0")]
    else:
        nones = [0] * (len(rule.expansion) + 1)
    slots: list[str | None] = []
    for i, sym in enumerate(rule.expansion):
        slots += [None] * nones[i]
        spliced = not sym.is_term and sym.name.startswith("_")
        slots.append(_VARIADIC if spliced else sym.name)
    return slots + [None] * nones[-1]


def check_shapes(grammar_rules: Iterable[Rule], table: Mapping[str, Builder]) -> None:
    """Raise ValueError unless every callback-receiving rule of the compiled grammar has
    exactly one builder whose shape fits each of its expansions."""
    expansions: dict[str, list[list[str | None]]] = defaultdict(list)
    for rule in grammar_rules:
        if rule.origin.name.startswith("_"):  # spliced into the parent, never a callback
            continue
        if rule.options.expand1 and rule.alias is None and len(rule.expansion) == 1:
            continue  # `?rule: x` passes its only child up
        expansions[rule.alias or rule.origin.name].append(_expansion_slots(rule))
    errors = [f"{name}: no callback" for name in sorted(expansions.keys() - table.keys())]
    errors += [f"{name}: not a grammar rule" for name in sorted(table.keys() - expansions.keys())]
    for name in sorted(expansions.keys() & table.keys()):
        errors += table[name].shape.mismatches(name, expansions[name])
    if errors:
        raise ValueError("Cypher grammar and AST builder disagree:\n  " + "\n  ".join(errors))
