"""docs/functions.md, generated: Cypher's allowed functions by group, then SQL's per dialect
(`python -m query_guard.sql.functions_page > docs/functions.md`; a test keeps it in step)."""

from __future__ import annotations

from query_guard.cypher.functions import render_markdown as render_cypher_markdown
from query_guard.sql.functions import (
    COMMON_FUNCTIONS,
    DIALECT_FUNCTIONS,
    SECRET_CATALOGS,
    SQLGLOT_PURE,
)


def render_markdown() -> str:
    """The SQL part of docs/functions.md."""
    lines = [
        "## SQL functions",
        "",
        'SQL queries (`--language sql`, `/v1/query` with `language: "sql"`) may call only',
        'pure built-ins; any other function is blocked with `SEC.FUNCTION` ("function X is',
        'not on the SQL allow-list") unless it matches a shell pattern in',
        "`[guard] sql_allowed_functions`. Calls sqlglot recognises are judged by its expression",
        "class (the same in every dialect); other calls by the name written, lower-cased,",
        "against the common list plus the dialect's own — the SQL backend's dialect, where the",
        "call runs (without a backend, `[guard] sql_dialect`); a dialect without a list of",
        "its own gets the common list only. A schema-qualified call",
        "(`myschema.f(x)`) is not a built-in and needs the operator's pattern",
        "(PostgreSQL's `pg_catalog.` prefix excepted).",
        "",
    ]

    def section(title: str, groups: dict[str, tuple[str, ...]]) -> None:
        lines.extend([f"### {title}", ""])
        for group, names in groups.items():
            lines.append(f"- **{group}**: " + ", ".join(f"`{n}`" for n in sorted(set(names))))
        lines.append("")

    section("sqlglot expressions (every dialect)", SQLGLOT_PURE)
    section("Common (every dialect; the default for other dialects)", COMMON_FUNCTIONS)
    for dialect, groups in DIALECT_FUNCTIONS.items():
        section(f"{dialect} (besides the common list)", groups)
    lines += [
        "### System catalogs never read (`SEC.CATALOG`, every dialect)",
        "",
        "A pattern with a dot names `schema.table`; without one, that table in any schema.",
        "`information_schema.tables` / `.columns` and SQLite's `sqlite_master` stay readable.",
        "",
    ]
    for group, patterns in SECRET_CATALOGS.items():
        lines.append(f"- **{group}**: " + ", ".join(f"`{p}`" for p in patterns))
    lines.append("")
    return "\n".join(lines)


def functions_page() -> str:
    """docs/functions.md: Cypher's allowed functions by group, then SQL's per dialect."""
    return render_cypher_markdown() + render_markdown()


if __name__ == "__main__":
    print(functions_page(), end="")
