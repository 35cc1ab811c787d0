"""Access control through the real path (neo4j driver → query-guard → FalkorDB): a client
reaches only the graphs `[backend] databases` names — not another graph on the same server,
by the Bolt database field or by `USE`; `[server] users` checks logons against scrypt hashes
and the audit line names the user."""

from __future__ import annotations

import asyncio
import io
import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
import redis
from neo4j import exceptions as nex

from query_guard.backends.embedded import EmbeddedFalkorDB
from query_guard.config.auth import UserDirectory, hash_password, verify_password
from query_guard.config.listen import check_exposure
from query_guard.config.load import parse_config
from query_guard.errors import ConfigError
from query_guard.runner import ProxyThread
from query_guard.server import ProxyServer
from tests.conftest import graph_url

SECRET = "secret_graph"  # created on the same FalkorDB, outside the proxy


@pytest.fixture
def secret_graph(falkordb_server: EmbeddedFalkorDB) -> Iterator[str]:
    with redis.Redis(host=falkordb_server.host, port=falkordb_server.port) as client:
        client.execute_command("GRAPH.QUERY", SECRET, "CREATE (:Secret {pin: 1234})")
    try:
        yield SECRET
    finally:
        with redis.Redis(host=falkordb_server.host, port=falkordb_server.port) as client:
            client.execute_command("GRAPH.DELETE", SECRET)


def _proxy(tmp_path: Path, falkordb: EmbeddedFalkorDB, **sections: Any) -> ProxyThread:
    raw: dict[str, Any] = {
        "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp_path / "data")},
        "backend": {"cypher": graph_url(falkordb, "movies")},
        "guard": {"discover_schema": False},
        "repair": {"enabled": False},
    }
    for name, table in sections.items():
        raw[name] = {**raw.get(name, {}), **table}
    return ProxyThread(parse_config(raw))


def test_the_served_databases_follow_the_configuration() -> None:
    assert parse_config({}).guard.allowed_databases == ("movies", "neo4j", "")
    url = {"cypher": "falkordb://db:6379/films"}
    assert parse_config({"backend": url}).guard.allowed_databases == ("films", "neo4j", "")
    bolt = {"cypher": "bolt://db:7687", "database": "shop"}
    assert parse_config({"backend": bolt}).guard.allowed_databases == ("shop", "neo4j", "")
    listed = {**url, "databases": ["films", "books"]}
    assert parse_config({"backend": listed}).guard.allowed_databases == (
        "films", "books", "neo4j", "",
    )  # fmt: skip
    with pytest.raises(ConfigError, match=r"backend\.databases"):
        parse_config({"backend": {"databases": [""]}})


def test_another_graph_on_the_same_falkordb_is_unreachable(
    tmp_path: Path, falkordb_server: EmbeddedFalkorDB, secret_graph: str
) -> None:
    with (
        _proxy(tmp_path, falkordb_server) as proxy,
        neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=("u", "p")) as drv,
    ):
        for db in (None, "neo4j", "movies"):  # the served graph, under each of its names
            records, _, _ = drv.execute_query(
                "MATCH (m:Movie) RETURN count(m) AS n", database_=db
            )
            assert records[0]["n"] == 38
        with pytest.raises(nex.ClientError) as refused:
            drv.execute_query("MATCH (s:Secret) RETURN s.pin AS pin", database_=secret_graph)
        assert refused.value.code == "Neo.ClientError.Database.DatabaseNotFound"
        assert "SEC.DATABASE" in str(refused.value.message)
        with (  # an explicit transaction on it
            drv.session(database=secret_graph) as session,
            pytest.raises(nex.ClientError, match=r"SEC\.DATABASE"),
            session.begin_transaction() as tx,
        ):
            tx.run("MATCH (s:Secret) RETURN s.pin AS pin").consume()
        with pytest.raises(nex.ClientError) as used:  # and by USE inside the query
            drv.execute_query(f"USE {secret_graph} MATCH (s:Secret) RETURN s.pin AS pin")
        assert used.value.code == "Neo.ClientError.Security.Forbidden"
        assert "SEC.DATABASE" in str(used.value.message)
        records, _, _ = drv.execute_query("MATCH (m:Movie) RETURN count(m) AS n")
        assert records[0]["n"] == 38  # the connection pool survived the refusals
    with (
        _proxy(tmp_path, falkordb_server) as proxy,
        neo4j.GraphDatabase.driver(f"neo4j://{proxy.address}", auth=("u", "p")) as routed,
        pytest.raises(nex.ClientError, match=r"SEC\.DATABASE"),
    ):
        routed.execute_query("MATCH (n) RETURN count(n) AS n", database_=secret_graph)


def test_listed_databases_are_reachable(
    tmp_path: Path, falkordb_server: EmbeddedFalkorDB, secret_graph: str
) -> None:
    backend = {"databases": ["movies", secret_graph]}
    with (
        _proxy(tmp_path, falkordb_server, backend=backend) as proxy,
        neo4j.GraphDatabase.driver(f"bolt://{proxy.address}", auth=("u", "p")) as drv,
    ):
        records, _, _ = drv.execute_query(
            "MATCH (s:Secret) RETURN s.pin AS pin", database_=secret_graph
        )
        assert [r["pin"] for r in records] == [1234]


def test_password_hashes_verify_only_their_password() -> None:
    stored = hash_password("correct horse", n=2**10)
    assert stored.startswith("scrypt$1024$8$1$")
    assert verify_password("correct horse", stored)
    assert not verify_password("correct hors", stored)
    assert hash_password("correct horse", n=2**10) != stored  # salted
    with pytest.raises(ConfigError, match=r"server\.users\.bob"):
        UserDirectory({"bob": "plain-text"})


def test_proxy_users_check_logons_and_the_audit_names_the_user(
    tmp_path: Path, falkordb_server: EmbeddedFalkorDB
) -> None:
    audit = tmp_path / "audit.jsonl"
    users = {"alice": hash_password("wonderland", n=2**10)}
    with _proxy(
        tmp_path, falkordb_server, server={"users": users}, audit={"path": str(audit)}
    ) as proxy:
        address = f"bolt://{proxy.address}"
        for auth in (("alice", "wrong"), ("mallory", "wonderland"), None):
            with (
                neo4j.GraphDatabase.driver(address, auth=auth) as drv,
                pytest.raises(nex.AuthError),
            ):
                drv.verify_connectivity()
        with neo4j.GraphDatabase.driver(address, auth=("alice", "wonderland")) as drv:
            records, _, _ = drv.execute_query("MATCH (m:Movie) RETURN count(m) AS n")
        assert records[0]["n"] == 38
    lines = [json.loads(line) for line in audit.read_text("utf-8").splitlines()]
    assert [line["user"] for line in lines] == ["alice"]


def test_the_embedded_database_is_not_served_to_the_network_without_users(
    tmp_path: Path,
) -> None:
    data = str(tmp_path / "data")
    config = parse_config({"server": {"bolt": "0.0.0.0:0", "data_dir": data}})
    with pytest.raises(ConfigError, match=r"server\.bolt.*server\] users"):
        asyncio.run(ProxyServer(config).start())
    assert not (tmp_path / "data").exists()  # refused before starting anything
    users = {"alice": hash_password("x", n=2**4)}
    # HTTP checks users (Basic auth) like Bolt
    server = {"bolt": "", "http": "0.0.0.0:0", "data_dir": data}
    with pytest.raises(ConfigError, match=r"server\.http.*server\] users.*tls_client_ca"):
        check_exposure(parse_config({"server": server}))
    check_exposure(parse_config({"server": {**server, "users": users}}))
    # Gremlin checks users (SASL) like Bolt
    with pytest.raises(ConfigError, match=r"server\.gremlin.*server\] users"):
        check_exposure(parse_config({"server": {"bolt": "", "gremlin": "0.0.0.0:0"}}))
    check_exposure(parse_config({"server": {"gremlin": "0.0.0.0:0", "users": users}}))
    check_exposure(parse_config({"server": {"bolt": "0.0.0.0:0", "users": users}}))
    external = {"cypher": "falkordb://db.internal:6379/g", "gremlin": "ws://g.internal:8182/g"}
    check_exposure(parse_config({"server": {"http": "0.0.0.0:0"}, "backend": external}))


def test_hash_password_prints_a_users_line_that_verifies(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from query_guard.cli.main import main

    monkeypatch.setattr("sys.stdin", io.StringIO("wonderland\n"))
    assert main(["hash-password", "--user", "alice"]) == 0
    line = capsys.readouterr().out.strip()
    name, _, stored = line.partition(" = ")
    assert name == '"alice"'
    users = tomllib.loads(f"[server.users]\n{line}\n")["server"]["users"]
    assert verify_password("wonderland", users["alice"]) and stored.startswith('"scrypt$')
    monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
    assert main(["hash-password"]) == 2  # an empty password is refused
