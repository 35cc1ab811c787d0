"""TLS on the Bolt listener (`[server] tls_cert` / `tls_key` / `tls_client_ca`) and to Bolt
upstreams (`[backend] tls_verify` / `tls_ca`), with certificates from a test CA (trustme) and
the real neo4j driver: `bolt+s://` and `neo4j+s://` work with the right CA and fail with a
wrong one; a plaintext client cannot talk to a TLS-only listener; mTLS wants a client
certificate. The upstream side is a second proxy relaying to the first over `bolt+s://`.
The Gremlin and HTTP listeners serve `wss://` and `https://` with the same certificate."""

from __future__ import annotations

import json
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
import trustme
from neo4j import exceptions as nex

from query_guard.backends.embedded import EmbeddedFalkorDB
from query_guard.config.load import parse_config
from query_guard.config.tls import server_context
from query_guard.errors import ConfigError
from query_guard.runner import ProxyThread
from tests.conftest import graph_url
from tests.corpora import DATA

COUNT = "MATCH (m:Movie) RETURN count(m) AS n"
AUTH = ("u", "p")


class Pki:
    """A test CA, the proxy's certificate (localhost and 127.0.0.1), a client certificate,
    and an unrelated CA, as PEM files."""

    def __init__(self, tmp: Path) -> None:
        self.ca = trustme.CA()
        server = self.ca.issue_cert("localhost", "127.0.0.1")
        client = self.ca.issue_cert("client@example.test")
        self.ca_pem = tmp / "ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_pem))
        self.cert, self.key = tmp / "server.pem", tmp / "server.key"
        server.private_key_and_cert_chain_pem.write_to_path(str(self.cert))
        server.private_key_pem.write_to_path(str(self.key))
        self.client_cert, self.client_key = tmp / "client.pem", tmp / "client.key"
        client.cert_chain_pems[0].write_to_path(str(self.client_cert))
        client.private_key_pem.write_to_path(str(self.client_key))
        self.other_ca_pem = tmp / "other-ca.pem"
        trustme.CA().cert_pem.write_to_path(str(self.other_ca_pem))


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


def _config(tmp: Path, url: str, **sections: Any) -> Any:
    raw: dict[str, Any] = {
        "server": {"bolt": "127.0.0.1:0", "data_dir": str(tmp / "data")},
        "backend": {"cypher": url},
        "guard": {"discover_schema": False},
        "repair": {"enabled": False},
    }
    for name, table in sections.items():
        raw[name] = {**raw[name], **table} if name in raw else table
    return parse_config(raw)


@pytest.fixture(scope="module")
def tls_proxy(
    pki: Pki, falkordb_server: EmbeddedFalkorDB, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ProxyThread]:
    tmp = tmp_path_factory.mktemp("tls-proxy")
    tls = {"tls_cert": str(pki.cert), "tls_key": str(pki.key)}
    with ProxyThread(_config(tmp, graph_url(falkordb_server, "movies"), server=tls)) as proxy:
        yield proxy


def _port(proxy: ProxyThread) -> int:
    return proxy.server.bolt_port


def _driver(url: str, ca: Path, **config: Any) -> neo4j.Driver:
    """`+s` schemes trust the system store only (the driver takes no CA with them): the test
    points OpenSSL's default CA file at `ca` (SSL_CERT_FILE, set by the caller); plain schemes
    get `encrypted=True` with `trusted_certificates=TrustCustomCAs(ca)`."""
    if "+s" not in url:
        config.update(encrypted=True, trusted_certificates=neo4j.TrustCustomCAs(str(ca)))
    return neo4j.GraphDatabase.driver(url, auth=AUTH, **config)


SCHEMES = ["bolt+s", "neo4j+s", "bolt", "neo4j"]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_driver_connects_over_tls_with_the_right_ca(
    tls_proxy: ProxyThread, pki: Pki, scheme: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(pki.ca_pem))
    with _driver(f"{scheme}://localhost:{_port(tls_proxy)}", pki.ca_pem) as drv:
        records, _, _ = drv.execute_query(COUNT)
        assert records[0]["n"] == 38
        assert drv.encrypted


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_driver_refuses_a_proxy_the_ca_did_not_sign(
    tls_proxy: ProxyThread, pki: Pki, scheme: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(pki.other_ca_pem))
    with (
        _driver(f"{scheme}://localhost:{_port(tls_proxy)}", pki.other_ca_pem) as drv,
        pytest.raises(nex.ServiceUnavailable),
    ):
        drv.verify_connectivity()


def test_a_plaintext_client_is_refused_on_a_tls_listener(tls_proxy: ProxyThread) -> None:
    with (
        neo4j.GraphDatabase.driver(f"bolt://localhost:{_port(tls_proxy)}", auth=AUTH) as drv,
        pytest.raises(nex.ServiceUnavailable),
    ):
        drv.verify_connectivity()
    # On the wire: the Bolt magic is not a TLS ClientHello, so no Bolt version comes back.
    with socket.create_connection(("127.0.0.1", _port(tls_proxy)), timeout=5) as sock:
        sock.sendall(b"\x60\x60\xb0\x17" + b"\x00\x00\x08\x05" + b"\x00" * 12)
        reply = sock.recv(64)
    assert len(reply) != 4 or reply[:2] != b"\x00\x00"


def test_the_listener_speaks_tls_1_2_and_1_3(tls_proxy: ProxyThread, pki: Pki) -> None:
    for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
        context = ssl.create_default_context(cafile=str(pki.ca_pem))
        context.minimum_version = context.maximum_version = version
        with (
            socket.create_connection(("127.0.0.1", _port(tls_proxy)), timeout=5) as sock,
            context.wrap_socket(sock, server_hostname="localhost") as tls,
        ):
            tls.sendall(b"\x60\x60\xb0\x17" + b"\x00\x00\x08\x05" + b"\x00" * 12)
            assert tls.recv(4) == b"\x00\x00\x08\x05"  # Bolt 5.8 agreed, inside TLS


def test_mutual_tls_wants_a_client_certificate_the_ca_signed(
    pki: Pki, falkordb_server: EmbeddedFalkorDB, tmp_path: Path
) -> None:
    tls = {"tls_cert": str(pki.cert), "tls_key": str(pki.key), "tls_client_ca": str(pki.ca_pem)}
    config = _config(tmp_path, graph_url(falkordb_server, "movies"), server=tls)
    with ProxyThread(config) as proxy:
        url = f"bolt://localhost:{_port(proxy)}"
        with _driver(url, pki.ca_pem) as drv, pytest.raises(nex.ServiceUnavailable):
            drv.verify_connectivity()
        cert = neo4j.auth_management.ClientCertificate(
            str(pki.client_cert), str(pki.client_key)
        )
        with _driver(url, pki.ca_pem, client_certificate=cert) as drv:
            records, _, _ = drv.execute_query(COUNT)
        assert records[0]["n"] == 38


def test_upstream_tls_is_verified_by_default(
    tls_proxy: ProxyThread, pki: Pki, tmp_path: Path
) -> None:
    """A second proxy whose backend is the TLS proxy above: it trusts the test CA only when
    `tls_ca` names it; `tls_verify = false` connects to anything (tests only)."""
    upstream = f"bolt+s://localhost:{_port(tls_proxy)}"
    trusting = {"tls_ca": str(pki.ca_pem), "credentials": "configured"}
    backend = {**trusting, "user": "u"}
    with (
        ProxyThread(_config(tmp_path / "a", upstream, backend=backend)) as chained,
        neo4j.GraphDatabase.driver(f"bolt://{chained.address}", auth=AUTH) as drv,
    ):
        records, _, _ = drv.execute_query(COUNT)
        assert records[0]["n"] == 38
    untrusting = {"credentials": "configured", "user": "u"}
    with pytest.raises(Exception, match=r"(?i)certificate|CertVerification"):
        ProxyThread(_config(tmp_path / "b", upstream, backend=untrusting)).start()
    unverified = {**untrusting, "tls_verify": False}
    with (
        ProxyThread(_config(tmp_path / "c", upstream, backend=unverified)) as chained,
        neo4j.GraphDatabase.driver(f"bolt://{chained.address}", auth=AUTH) as drv,
    ):
        records, _, _ = drv.execute_query(COUNT)
        assert records[0]["n"] == 38


def test_tls_settings_that_cannot_work_are_refused_naming_the_key(
    pki: Pki, tmp_path: Path
) -> None:
    assert server_context(str(pki.cert), str(pki.key)).minimum_version == ssl.TLSVersion.TLSv1_2
    with pytest.raises(ConfigError, match=r"server\.tls_key"):
        server_context(str(pki.cert), "")
    with pytest.raises(ConfigError, match=r"server\.tls_cert"):
        server_context(str(pki.cert), str(pki.client_key))  # the key of another certificate
    with pytest.raises(ConfigError, match=r"server\.tls_client_ca"):
        server_context(str(pki.cert), str(pki.key), str(tmp_path / "missing.pem"))


def test_the_gremlin_listener_serves_wss_with_the_same_certificate(
    pki: Pki, falkordb_server: EmbeddedFalkorDB, tmp_path: Path
) -> None:
    from gremlin_python.driver.aiohttp.transport import AiohttpTransport
    from gremlin_python.driver.client import Client

    tls = {"tls_cert": str(pki.cert), "tls_key": str(pki.key)}
    server = {"bolt": "", "gremlin": "127.0.0.1:0", **tls}
    modern = {"gremlin_data": [str(DATA / "tinkerpop-modern.json")]}
    config = _config(
        tmp_path, graph_url(falkordb_server, "movies"), server=server, backend=modern
    )
    with ProxyThread(config) as proxy:
        port = proxy.server.gremlin.port
        trusted = ssl.create_default_context(cafile=str(pki.ca_pem))
        client = Client(
            f"wss://localhost:{port}/gremlin", "g",
            transport_factory=lambda: AiohttpTransport(ssl_options=trusted),
        )  # fmt: skip
        try:
            assert client.submit("g.V().hasLabel('person').count()").all().result() == [4]
        finally:
            client.close()
        with pytest.raises(OSError):  # plaintext (ws:// / http://) on the TLS port: dropped
            urllib.request.urlopen(f"http://localhost:{port}/gremlin", timeout=10)


def test_the_http_listener_serves_https_with_the_same_certificate(
    pki: Pki, falkordb_server: EmbeddedFalkorDB, tmp_path: Path
) -> None:
    tls = {"tls_cert": str(pki.cert), "tls_key": str(pki.key)}
    server = {"bolt": "", "http": "127.0.0.1:0", **tls}
    config = _config(tmp_path, graph_url(falkordb_server, "movies"), server=server)
    with ProxyThread(config) as proxy:
        port = proxy.server.http.port
        trusted = ssl.create_default_context(cafile=str(pki.ca_pem))
        body = json.dumps({"statement": COUNT}).encode()
        request = urllib.request.Request(
            f"https://localhost:{port}/db/neo4j/query/v2", body,
            {"Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, context=trusted, timeout=10) as reply:
            assert json.loads(reply.read())["data"]["values"] == [[38]]
        with pytest.raises(OSError):  # plaintext HTTP on the TLS port: dropped, no answer
            urllib.request.urlopen(f"http://localhost:{port}/health", timeout=10)
        other = ssl.create_default_context(cafile=str(pki.other_ca_pem))
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            urllib.request.urlopen(f"https://localhost:{port}/health", context=other, timeout=10)
