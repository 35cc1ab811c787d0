"""The SQL schema the rules see: tables, each with its columns in order and their declared
types. Built by a SQL backend's discovery (`sqlite_master` / `information_schema`) or from the
compact text form `from_text` reads (tests, fixtures):

    customers(customer_id integer, customer_name text); orders(order_id integer, total real)

Names keep the database's spelling; lookups are case-insensitive (`table`, `columns`).
`dialect` names the database's identifier rule (sqlglot's normalization strategy: PostgreSQL
folds unquoted names to lower case and matches quoted ones exactly, SQLite ignores case); ""
(the text form) ignores case.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

_TABLE = re.compile(r"\s*([^\s(]+)\s*\(([^)]*)\)\s*")


@dataclass(frozen=True)
class SqlCatalog:
    # table -> column -> declared type ("" when the database declares none)
    tables: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    dialect: str = ""  # the database's sqlglot dialect: how it matches identifiers

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str, str]], dialect: str = "") -> SqlCatalog:
        """From (table, column, type) rows in column order, as discovery queries return them."""
        tables: dict[str, dict[str, str]] = {}
        for table, column, type_ in rows:
            tables.setdefault(table, {})[column] = type_ or ""
        return cls(tables, dialect)

    @classmethod
    def from_text(cls, text: str) -> SqlCatalog:
        tables: dict[str, dict[str, str]] = {}
        for part in filter(None, (p.strip() for p in text.split(";"))):
            match = _TABLE.fullmatch(part)
            if match is None:
                raise ValueError(f"not a table(column type, …) entry: {part!r}")
            columns = tables.setdefault(match[1], {})
            for item in filter(None, (c.strip() for c in match[2].split(","))):
                name, _, type_ = item.partition(" ")
                columns[name] = type_.strip()
        return cls(tables)

    def table(self, name: str) -> str | None:
        """The table's spelling in the database, looked up case-insensitively."""
        if name in self.tables:
            return name
        lowered = name.lower()
        return next((t for t in self.tables if t.lower() == lowered), None)

    def columns(self, table: str) -> list[str]:
        real = self.table(table)
        return list(self.tables[real]) if real is not None else []

    def to_dict(self) -> dict[str, Any]:
        return {"tables": {t: dict(c) for t, c in self.tables.items()}}
