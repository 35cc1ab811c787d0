"""The ArcadeDB error codes the Bolt upstream path answers with Neo4j's code instead.

ArcadeDB's Bolt plugin reports most query failures with a handful of Neo4j codes, wider than
Neo4j's own: a runtime type error comes as `Statement.SemanticError` whose message starts
`TypeError:`, where Neo4j says `Statement.TypeError` (the driver raises `CypherTypeError`,
which clients catch: neo4j-graphrag's enhanced schema does around `toString` of a property).
The proxy otherwise answers every upstream error exactly as the database sent it, so a client
sees what a direct connection sees; `TRANSLATED` is the one explicit list of exceptions, and an
entry belongs in it only when ArcadeDB's message alone makes Neo4j's class unambiguous. The
message always stays ArcadeDB's. A code or message no entry matches (Neo4j's own, any other
server's) passes unchanged. Listed in docs/backends.md.
"""

from __future__ import annotations

from typing import NamedTuple


class Translation(NamedTuple):
    """Upstream `code` with a message starting `prefix` is answered with `neo4j_code`."""

    code: str
    prefix: str
    neo4j_code: str
    why: str


TRANSLATED: tuple[Translation, ...] = (
    Translation(
        "Neo.ClientError.Statement.SemanticError",
        "TypeError:",
        "Neo.ClientError.Statement.TypeError",
        "a value of the wrong type at run time (toString / toInteger / toFloat / toBoolean of a "
        "list or map, keys() or labels() of a number): Neo4j's CypherTypeError",
    ),
    Translation(
        "Neo.DatabaseError.General.UnknownError",
        "Unknown procedure/function:",
        "Neo.ClientError.Procedure.ProcedureNotFound",
        "CALL of a name that is no procedure (ArcadeDB raises it only from CALL): a client "
        "error in Neo4j, which clients test for (langchain-neo4j's APOC check)",
    ),
)


def neo4j_code(code: str, message: str) -> str:
    """The code a client is answered with for an upstream error `code` with `message`."""
    for entry in TRANSLATED:
        if code == entry.code and message.startswith(entry.prefix):
            return entry.neo4j_code
    return code
