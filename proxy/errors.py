"""Exceptions for callers that cannot go on. Query faults are findings, not exceptions."""

from __future__ import annotations


class QueryGuardError(Exception):
    """Base of query-guard's own exceptions."""


class ConfigError(QueryGuardError):
    """A configuration file or value is invalid; the message names the dotted key and, when
    known, the file and line: `conf.toml:12: guard.default_limit: must be int, got 'x'`."""

    def __init__(self, key: str, problem: str, source: str = "", line: int | None = None):
        self.key = key
        self.problem = problem
        self.source = source
        self.line = line
        where = f"{source}:{line}: " if source and line else f"{source}: " if source else ""
        super().__init__(f"{where}{key}: {problem}")


class SchemaFormatError(QueryGuardError):
    """A schema file or string is not in any format query-guard reads."""


class PluginError(QueryGuardError):
    """A plugin could not be loaded or implements an unknown hook."""
