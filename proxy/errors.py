"""Exceptions for callers that cannot go on. Query faults are findings, not exceptions."""

from __future__ import annotations

from collections.abc import Sequence


class QueryGuardError(Exception):
    """Base of query-guard's own exceptions."""


class ConfigError(QueryGuardError):
    """A configuration file or value is invalid; the message names the dotted key and, when
    known, the file and line: `conf.toml:12: guard.default_limit: must be int, got 'x'`.
    A file with several faults raises one `ConfigError` for the first, listing every one
    (`errors`, in file order) in its message."""

    def __init__(
        self,
        key: str,
        problem: str,
        source: str = "",
        line: int | None = None,
        more: Sequence[ConfigError] = (),
    ):
        self.key = key
        self.problem = problem
        self.source = source
        self.line = line
        self.errors: list[ConfigError] = [self, *more]
        where = f"{source}:{line}: " if source and line else f"{source}: " if source else ""
        self.one_line = f"{where}{key}: {problem}"
        if more:
            place = f" in {source}" if source else ""
            listed = "\n".join(f"  {e.one_line}" for e in self.errors)
            super().__init__(f"{len(self.errors)} configuration errors{place}:\n{listed}")
        else:
            super().__init__(self.one_line)

    @classmethod
    def combine(cls, errors: Sequence[ConfigError]) -> ConfigError:
        """One error reporting all of `errors` (file order; unlocated ones last)."""
        ordered = sorted(errors, key=lambda e: (e.line is None, e.line or 0))
        first = ordered[0]
        return cls(first.key, first.problem, first.source, first.line, ordered[1:])


class SchemaFormatError(QueryGuardError):
    """A schema file or string is not in any format query-guard reads."""


class PluginError(QueryGuardError):
    """A plugin could not be loaded or implements an unknown hook."""
