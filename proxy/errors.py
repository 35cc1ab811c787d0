"""Exceptions for callers that cannot go on. Query faults are findings, not exceptions."""

from __future__ import annotations


class QueryGuardError(Exception):
    """Base of query-guard's own exceptions."""


class ConfigError(QueryGuardError):
    """A configuration file or value is invalid; the message names the key."""

    def __init__(self, key: str, problem: str):
        super().__init__(f"config key '{key}': {problem}")
        self.key = key
        self.problem = problem


class SchemaFormatError(QueryGuardError):
    """A schema file or string is not in any format query-guard reads."""


class PluginError(QueryGuardError):
    """A plugin could not be loaded or implements an unknown hook."""
