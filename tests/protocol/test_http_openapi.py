"""schemathesis against the HTTP front's `/openapi.json` (embedded FalkorDB, movie graph; open,
and with `[server] users`): for generated requests to every documented operation, no 5xx and
every response matches the schema of its status code and content type (a bounded example
budget per operation)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

schemathesis = pytest.importorskip("schemathesis")

from schemathesis.checks import positive_data_acceptance  # noqa: E402

from query_guard.config.auth import hash_password  # noqa: E402
from query_guard.config.load import parse_config  # noqa: E402
from query_guard.frontends.openapi import document  # noqa: E402
from query_guard.runner import ProxyThread  # noqa: E402

schema = schemathesis.openapi.from_dict(document())


@pytest.fixture(scope="module", params=["open", "users"])
def base(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An open front, and one with `[server] users` that the generated requests (which carry
    no credentials) reach only with 401s and the open probes."""
    data = tmp_path_factory.mktemp("http-openapi")
    users = {"alice": hash_password("x", n=2**4)} if request.param == "users" else {}
    config = parse_config({
        "server": {"bolt": "", "http": "127.0.0.1:0", "data_dir": str(data), "users": users},
        "repair": {"enabled": False},
        "audit": {"path": str(data / "audit.jsonl")},
    })  # fmt: skip
    with ProxyThread(config) as proxy:
        yield f"http://127.0.0.1:{proxy.server.http.port}"


@schema.parametrize()
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_response_matches_the_openapi_document(base: str, case: schemathesis.Case) -> None:
    # a well-formed request whose query is refused (syntax, a write) answers 400 by design
    case.call_and_validate(base_url=base, excluded_checks=[positive_data_acceptance])


def _post(url: str, body: dict[str, object], headers: dict[str, str]) -> tuple[int, dict]:
    import json
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data, {"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_document_says_what_the_server_refuses() -> None:
    """An empty statement and an Access-Mode outside the enumeration are refused: the
    document declares both."""
    statement = document()["paths"]["/db/{db}/tx/commit"]["post"]["requestBody"]
    items = statement["content"]["application/json"]["schema"]["properties"]["statements"]
    assert items["items"]["properties"]["statement"]["minLength"] == 1
    header = document()["paths"]["/db/{db}/tx/commit"]["post"]["parameters"][-1]
    assert header["name"] == "Access-Mode" and header["schema"]["enum"] == ["READ", "WRITE"]


def test_access_mode_outside_the_enumeration_is_a_400(
    base: str, request: pytest.FixtureRequest
) -> None:
    if request.node.callspec.params["base"] == "users":
        pytest.skip("the open front is enough")
    url = f"{base}/db/neo4j/tx/commit"
    body = {"statements": [{"statement": "MATCH (m:Movie) RETURN count(m) AS c"}]}
    status, answer = _post(url, body, {"Access-Mode": "AAA"})
    assert status == 400
    assert answer["errors"][0]["code"] == "Neo.ClientError.Request.Invalid"
    assert "Access-Mode" in answer["errors"][0]["message"]
    for mode in ("READ", "WRITE"):
        status, answer = _post(url, body, {"Access-Mode": mode})
        assert status == 200 and answer["errors"] == [], answer
        assert answer["results"][0]["data"][0]["row"][0] > 0
    _, refused = _post(url, {"statements": [{"statement": "CREATE (:X)"}]},
                       {"Access-Mode": "READ"})  # fmt: skip
    assert refused["errors"], refused
