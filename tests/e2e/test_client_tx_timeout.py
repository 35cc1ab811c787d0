"""A driver's transaction timeout (`tx_timeout`) through the Bolt front, on ArcadeDB (which
ignores the value itself): the transaction is stopped when it runs out and the client hears
Neo4j's code for a client-configured timeout, for an auto-commit query, a query in an explicit
transaction and a COMMIT that comes too late; the connection then serves the next query."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest

from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread

CODE = "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"
PASSWORD_ENV = "QG_TEST_CLIENT_TX_TIMEOUT_PASSWORD"
SLOW = (
    "MATCH (a:Person), (b:Person), (c:Person) "
    "WHERE a.born + b.born + c.born < 0 RETURN count(*) AS n"
)
QUICK = "MATCH (p:Person) RETURN count(p) AS n"


@pytest.fixture
def driver(
    arcadedb_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[neo4j.Driver]:
    monkeypatch.setenv(PASSWORD_ENV, arcadedb_server.root_password)
    config = parse_config({
        "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp_path)},
        "backend": {"cypher": arcadedb_server.url, "database": arcadedb_server.database,
                    "credentials": "configured", "user": "root", "password_env": PASSWORD_ENV},
    })  # fmt: skip
    with (
        ProxyThread(config) as proxy,
        neo4j.GraphDatabase.driver(
            f"bolt://{proxy.address}", auth=("neo4j", "x"), max_connection_pool_size=1
        ) as client,
    ):
        yield client


def _code(exc: pytest.ExceptionInfo[neo4j.exceptions.Neo4jError]) -> str | None:
    return exc.value.code


def test_an_auto_commit_query_past_its_timeout(driver: neo4j.Driver) -> None:
    with driver.session() as session:
        started = time.perf_counter()
        with pytest.raises(neo4j.exceptions.Neo4jError) as exc:
            session.run(neo4j.Query(SLOW, timeout=0.2)).consume()
        assert _code(exc) == CODE and time.perf_counter() - started < 5
        assert session.run(QUICK).single()["n"] > 100


def test_a_query_in_a_transaction_past_its_timeout(driver: neo4j.Driver) -> None:
    with driver.session() as session:
        tx = session.begin_transaction(timeout=0.2)
        with pytest.raises(neo4j.exceptions.Neo4jError) as exc:
            tx.run(SLOW).consume()
        assert _code(exc) == CODE
        tx.close()
        assert session.run(QUICK).single()["n"] > 100


def test_a_commit_after_the_timeout(driver: neo4j.Driver) -> None:
    with driver.session() as session:
        tx = session.begin_transaction(timeout=0.2)
        assert tx.run(QUICK).single()["n"] > 100
        time.sleep(0.3)
        with pytest.raises(neo4j.exceptions.Neo4jError) as exc:
            tx.commit()
        assert _code(exc) == CODE
        with session.begin_transaction(timeout=5) as fine:  # time enough: commits
            assert fine.run(QUICK).single()["n"] > 100
            fine.commit()
