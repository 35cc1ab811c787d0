"""The Cypher `Language` of the guard pipeline: parser, syntax-error findings (SYN.PARSE with a
keyword guess), the canonical emission and the statement facts."""

from __future__ import annotations

import difflib
import re

from query_guard.cypher.emit import emit_query
from query_guard.cypher.parser import CypherSyntaxError
from query_guard.cypher.query import CypherQuery
from query_guard.cypher.statement import statement_facts
from query_guard.guard.language import Language
from query_guard.model import Finding, Severity


def cypher_language() -> Language:
    """Cypher as the pipeline parses, reports, emits and checks it (hook `guard_cypher`)."""

    def describe(exc: Exception, text: str) -> list[Finding]:
        assert isinstance(exc, CypherSyntaxError)
        pos = min(max(exc.offset, 0), len(text))
        word = re.match(r"[A-Za-z_]+", text[pos:])
        keywords = [w for w in exc.expected if w.isupper()]
        guess = difflib.get_close_matches(word.group().upper(), keywords, 1) if word else []
        return [
            Finding(
                "SYN.PARSE",
                Severity.ERROR,
                f"Cypher syntax error at {exc.message}",
                (pos, min(pos + 1, len(text))),
                hint=f"did you mean {guess[0]}?" if guess else None,
                rule="parser",
            )
        ]

    return Language(
        "cypher", CypherQuery.parse, (CypherSyntaxError,), "guard_cypher", describe, "RETURN 1",
        emit=emit_query, statement=statement_facts,
    )  # fmt: skip
