"""GuardContext: all a rule may know, gathered by I/O code and handed to the pure pipeline."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from query_guard.config.load import CompatSettings, GuardSettings
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.sql_catalog import SqlCatalog


@dataclass(frozen=True)
class GuardContext:
    schema: SchemaCatalog | None = None
    settings: GuardSettings = field(default_factory=GuardSettings)
    rule_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    gremlin: Mapping[str, Any] = field(default_factory=dict)  # [gremlin.*] tables
    # lower-case names of the procedures the proxy answers itself (proxy.compat), which the
    # read-only rule lets through although the backend lacks them
    served_procedures: frozenset[str] = frozenset()
    compat: CompatSettings = field(default_factory=CompatSettings)
    # the Cypher dialect of the backend: "falkordb" (dialect shims apply) or "" (Neo4j's)
    dialect: str = ""
    sql_schema: SqlCatalog | None = None  # tables and columns of the SQL backend
    # the SQL backend's dialect: functions run there, so its allow-list judges them ("": the
    # backend is not known, `settings.sql_dialect` judges)
    sql_backend_dialect: str = ""

    def options(self, rule: str) -> Mapping[str, Any]:
        """The `[rules.<rule>]` table of the configuration (empty when absent)."""
        return self.rule_options.get(rule, {})

    def option(self, rule: str, key: str, default: Any) -> Any:
        return self.rule_options.get(rule, {}).get(key, default)
