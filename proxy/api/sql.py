"""SQL for rules: the parsed statement (sqlglot underneath), the catalog of tables and columns,
the function allow-list per dialect, Apache AGE calls."""

from query_guard.schema.sql_catalog import SqlCatalog
from query_guard.sql.functions import (
    MAX_FORMAT_WIDTH,
    call_name,
    is_allowed_call,
    is_secret_call,
    is_secret_catalog,
    unbounded_format,
)
from query_guard.sql.language import age_calls
from query_guard.sql.query import SqlQuery, SqlStatement, dialect_of, unsafe_names

__all__ = [
    "MAX_FORMAT_WIDTH", "SqlCatalog", "SqlQuery", "SqlStatement", "age_calls", "call_name",
    "dialect_of", "is_allowed_call", "is_secret_call", "is_secret_catalog", "unbounded_format",
    "unsafe_names",
]  # fmt: skip
