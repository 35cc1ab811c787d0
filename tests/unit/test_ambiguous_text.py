"""SEC.AMBIGUOUS_TEXT (plugins/ambiguous_text.py) and, end to end through the Bolt proxy on the
embedded FalkorDB, that the database runs what the guard judged: the carriage-return comment
trick is refused and creates nothing; a comment-laden, escaped read returns the plain rows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import neo4j
import pytest
from neo4j import exceptions as nex

from query_guard.build import build_guard, default_languages
from query_guard.config.load import parse_config
from query_guard.cypher.emit import AmbiguousText, emit_query
from query_guard.cypher.query import CypherQuery
from query_guard.guard.pipeline import Guard
from query_guard.guard.registry import build_plugin_manager
from query_guard.runner import ProxyThread
from query_guard.schema.context import GuardContext
from query_guard.sql.query import SqlQuery, UnsafeName
from tests.e2e.test_e2e_falkordb import AUTH, canon_rows, driver_rows, proxy_config

BLOCKED = [
    "MATCH (m:Movie) //\rCREATE (x:Movie {title: 'Hacked'})\nRETURN m",
    "MATCH (m:Movie) //\r \nRETURN m",
    "MATCH (m:Movie) //\x0bDETACH DELETE m\nRETURN m",
    "MATCH (m:Movie) //\x0cSET m.title = 'x'\nRETURN m",
    "MATCH (m:Movie) //\x85CREATE (x)\nRETURN m",
    "MATCH (m:Movie) //\u2028CREATE (x)\nRETURN m",
    "MATCH (m:Movie) //\u2029CREATE (x)\nRETURN m",
    "MATCH (m:Movie) // \\u000aCREATE (x)\nRETURN m",
    "MATCH (m:Movie) /* \\u002a/ CREATE (x) /* */ RETURN m",
    "MATCH (m:Movie) WHERE m.title = 'x\\u0027 OR true //' RETURN m",
    "MATCH (m:Movie) WHERE m.title = \"x\\u0022 OR true //\" RETURN m",
    "MATCH (m:Movie) WHERE m.title = 'x\\u005c' RETURN m //'",
    "MATCH (m:Movie) WHERE m.title = 'a\\u000ab' RETURN m",
    "MATCH (m:Movie) WHERE m.title = 'a\\U00000027' RETURN m",
    "MATCH (m:Movie) WHERE m.title = 'a\\uu0027' RETURN m",
    "MATCH (m:`Movie\\u0060`) RETURN m",
]
ALLOWED = [
    "MATCH (m:Movie) // Windows line ends\r\nRETURN m",
    "MATCH (m:Movie) // an ordinary comment\nRETURN m",
    "MATCH (m:Movie) /* block\ncomment */ RETURN m",
    "MATCH (m:Movie) WHERE m.title = 'caf\\u00e9' RETURN m",
    "MATCH (m:Movie) WHERE m.title = 'line\\nbreak\\ttab\\\\' RETURN m",
    "MATCH (m:Movie) WHERE m.title = 'carriage\rreturn in a string' RETURN m",
    "MATCH (m:Movie) WHERE m.title CONTAINS '//' RETURN m",
    "MATCH (m:`We``ird label é`) WHERE m.title = 'a\u2028b\x85c' RETURN m",
]
# names a backtick cannot escape a line break or control character in (issue 25)
UNSAFE_NAMES = [
    "MATCH (m:`Mo\rvie`) RETURN m",  # label
    "MATCH (a)-[:`ACTED\nIN`]->(b) RETURN a",  # relationship type
    "MATCH (m) RETURN m.`ti\u2028tle` AS t",  # property key
    "MATCH (`m\x85`) RETURN 1 AS one",  # variable
    "MATCH (m) RETURN m.title AS `t\x00`",  # alias
    "RETURN $`p\x0b` AS p",  # parameter
    "CALL `db\r`.labels()",  # procedure
    "RETURN `to\x0cLower`('A') AS x",  # function
    "RETURN {`k\u2029`: 1} AS m",  # map key
]


@pytest.mark.parametrize("query", BLOCKED)
def test_ambiguous_text_is_blocked(query: str) -> None:
    verdict = build_guard().check(query)
    assert verdict.blocked
    assert "SEC.AMBIGUOUS_TEXT" in verdict.codes
    finding = next(f for f in verdict.findings if f.code == "SEC.AMBIGUOUS_TEXT")
    assert 0 <= finding.span[0] < len(query)
    assert "comment" in finding.message or "escape" in finding.message


@pytest.mark.parametrize("query", ALLOWED)
def test_unambiguous_text_is_allowed(query: str) -> None:
    verdict = build_guard().check(query)
    assert not verdict.blocked, verdict.findings
    assert "SEC.AMBIGUOUS_TEXT" not in verdict.codes


@pytest.mark.parametrize("query", UNSAFE_NAMES)
def test_names_with_line_breaks_are_blocked_where_they_stand(query: str) -> None:
    verdict = build_guard().check(query)
    assert verdict.blocked and verdict.forward == ""
    finding = next(f for f in verdict.findings if f.code == "SEC.AMBIGUOUS_TEXT")
    assert finding.message.startswith("a name contains")
    assert query[finding.span[0]] in "\r\n\u2028\x85\x00\x0b\x0c\u2029"


@pytest.mark.parametrize("query", UNSAFE_NAMES)
def test_the_emitter_refuses_such_names_without_the_rule(query: str) -> None:
    """Fail closed: the emitter itself refuses to print them, so without the rule (only
    read_only loaded) the pipeline still blocks, with nothing forwarded."""
    with pytest.raises(AmbiguousText, match="a name contains"):
        emit_query(CypherQuery.parse(query))
    pm = build_plugin_manager(builtins=["query_guard.rules.read_only"], entry_points=False)
    ctx = GuardContext(settings=parse_config({}).guard)
    verdict = Guard(pm, ctx, default_languages()).check(query)
    assert verdict.blocked and verdict.forward == ""


def test_sql_identifiers_with_line_breaks_are_blocked() -> None:
    """sqlglot writes a quoted identifier's characters raw; SQL has no portable escape."""
    text = 'SELECT "ti\rtle" FROM movies'
    verdict = build_guard().check(text, "sql")
    assert verdict.blocked
    finding = next(f for f in verdict.findings if f.code == "SEC.AMBIGUOUS_TEXT")
    assert text[finding.span[0]] == "\r"
    with pytest.raises(UnsafeName):
        SqlQuery.parse(text).emit("sqlite")
    # in a string literal the character is data: allowed and sent as written
    plain = "SELECT 'a\rb' AS \"x y\" FROM movies"
    assert not build_guard().check(plain, "sql").blocked
    assert SqlQuery.parse(plain).emit("sqlite") == plain


def test_rule_cannot_be_disabled() -> None:
    guard = build_guard(disable=["ambiguous_text", "limits"])
    assert guard.check(BLOCKED[0]).blocked


def test_hidden_behind_prose_quote_is_still_found() -> None:
    """An apostrophe in stripped prose must not hide the comment from the check."""
    text = "Here's the query:\nMATCH (m:Movie) //\rCREATE (x)\nRETURN m"
    verdict = build_guard().check(text)
    assert verdict.blocked and "SEC.AMBIGUOUS_TEXT" in verdict.codes


# ---------------------------------------------------------------- end to end (Bolt, FalkorDB)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyThread]:
    with ProxyThread(proxy_config(tmp_path_factory.mktemp("ambiguous"))) as running:
        yield running


@pytest.fixture(scope="module")
def driver(proxy: ProxyThread) -> Iterator[neo4j.Driver]:
    with neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=AUTH) as drv:
        yield drv


def _count(driver: neo4j.Driver, query: str) -> int:
    with driver.session() as session:
        record = session.run(query).single(strict=True)
    return int(record[0])


def test_carriage_return_trick_is_refused_and_creates_nothing(driver: neo4j.Driver) -> None:
    before = _count(driver, "MATCH (n) RETURN count(n) AS n")
    for query in BLOCKED[:8]:
        with driver.session() as session, pytest.raises(nex.Neo4jError) as info:
            session.run(query).consume()
        assert info.value.code == "Neo.ClientError.Security.Forbidden"
        assert "SEC.AMBIGUOUS_TEXT" in (info.value.message or "")
    assert _count(driver, "MATCH (n) RETURN count(n) AS n") == before
    assert _count(driver, "MATCH (m:Movie {title: 'Hacked'}) RETURN count(m) AS n") == 0


def _rows(driver: neo4j.Driver, query: str, params: dict[str, Any]) -> list[Any]:
    with driver.session() as session:
        records = list(session.run(query, params))
    return canon_rows(query, driver_rows(records))


def test_comment_laden_escaped_read_returns_the_plain_rows(driver: neo4j.Driver) -> None:
    plain = (
        "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) WHERE m.title = 'The Matrix' "
        "RETURN p.name AS name ORDER BY name"
    )
    dressed = (
        "MATCH (p:Person) // the actors\n"
        "  -  [:ACTED_IN]->  /* of one film */ (m:Movie)\n"
        '\tWHERE m.title = "The\\u0020Matrix" OR m.title = \'The \\\'Matrix\\\'\' // by title\n'
        "RETURN p.name   AS name /* sorted */ ORDER BY name"
    )
    expected = _rows(driver, plain, {})
    assert expected, "the plain query should return rows"
    assert _rows(driver, dressed, {}) == expected
    forward = build_guard().check(dressed).forward
    assert "//" not in forward and "/*" not in forward and "\n" not in forward
    assert "m.title = 'The Matrix' OR m.title = 'The \\'Matrix\\''" in forward
