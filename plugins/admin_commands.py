"""Administration commands — never forwarded, read-only or not (`SEC.ADMIN`, error, always on).

Neo4j's administration commands (CREATE / DROP / ALTER / START / STOP DATABASE, COMPOSITE
DATABASE, ALIAS, USER, ROLE, SERVER; GRANT, DENY, REVOKE, RENAME, ENABLE, DEALLOCATE,
REALLOCATE, DRYRUN) manage the server, not the graph an app asks about. The guard parses only
their leading keywords (the rest of the statement is one opaque piece of text), so it cannot
re-print what it judged; such a statement is refused, whatever `[guard] read_only` says. Index
and constraint commands (`CREATE … INDEX`, `CREATE CONSTRAINT`, `DROP INDEX|CONSTRAINT`) are
parsed in full and are not administration: with writes allowed they run, re-printed from the
guard's tokens; on a read-only endpoint the read_only rule blocks them (SEC.WRITE). The SHOW
commands are the read_only rule's too.

Example::

    CREATE USER eve SET PASSWORD 'pw'
    ->  blocked: SEC.ADMIN  CREATE USER is an administration command, which this proxy never
        forwards; run it on the database directly (an app's queries need no administration)
"""

from __future__ import annotations

from query_guard.api import Finding, GuardContext, Severity, hookimpl
from query_guard.api.cypher import CypherQuery, ast, is_admin


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    return [
        Finding(
            "SEC.ADMIN",
            Severity.ERROR,
            f"{' '.join(node.kind.split())} is an administration command, which this proxy "
            "never forwards; run it on the database directly (an app's queries need no "
            "administration)",
            node.span,
        )
        for node in query.find(ast.SchemaCommand)
        if is_admin(node)
    ]


