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

from query_guard.auth import hash_password  # noqa: E402
from query_guard.config import parse_config  # noqa: E402
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
