"""SASL PLAIN on the Gremlin front, as Gremlin Server does it: gremlinpython's
`Client(username=, password=)` and `DriverRemoteConnection` work unchanged (407 challenge,
`authentication` op, the original request answered), wrong credentials get 401 and never reach
the engine, and the HTTP form takes HTTP Basic auth."""

from __future__ import annotations

import asyncio
import base64
import uuid
from collections.abc import Iterator
from typing import Any

import aiohttp
import graphersal as gs
import pytest
from gremlin_python.driver.client import Client
from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.driver.request import RequestMessage
from gremlin_python.driver.serializer import GraphBinarySerializersV1, GraphSONSerializersV3d0
from gremlin_python.process.anonymous_traversal import traversal

from query_guard.backends.graphersal import GraphersalBackend
from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.frontends.gremlin_ws import GremlinFrontend
from query_guard.repair.model import RepairSettings
from query_guard.run.gremlin import GremlinExecution
from query_guard.run.guards import LanguageGuard
from query_guard.run.runner import Route, Runner
from tests.background_loop import BackgroundLoop

USERS = {"alice": "s3cret"}
SERIALIZERS = {"graphbinary": GraphBinarySerializersV1, "graphson": GraphSONSerializersV3d0}


class CountingBackend(GraphersalBackend):
    """The real embedded engine, counting what reaches it."""

    calls = 0

    async def submit(self, traversal: Any, bindings: Any = None) -> list[Any]:
        CountingBackend.calls += 1
        return await super().submit(traversal, bindings)


async def _verify(auth: dict[str, Any]) -> bool:
    await asyncio.sleep(0)  # the proxy's user check is awaitable (scrypt off the loop)
    return USERS.get(auth.get("principal", "")) == auth.get("credentials")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    loop = BackgroundLoop()
    guard = build_guard(parse_config({}), entry_points=False)
    backend = CountingBackend(gs.Graph.tinkerpop_modern())

    async def start() -> GremlinFrontend:
        execution = GremlinExecution(backend, RepairSettings(enabled=False))
        runner = Runner({"gremlin": Route(LanguageGuard(guard, "gremlin"), execution)})
        front = GremlinFrontend("127.0.0.1", 0, runner, authenticate=_verify)
        await front.start()
        return front

    front = loop.call(start())
    yield f"ws://127.0.0.1:{front.port}/gremlin"
    loop.call(front.close())
    loop.call(backend.close())
    loop.close_loop()


@pytest.mark.parametrize("serializer", sorted(SERIALIZERS))
def test_client_with_credentials_is_answered(url: str, serializer: str) -> None:
    c = Client(url, "g", username="alice", password="s3cret",
               message_serializer=SERIALIZERS[serializer]())  # fmt: skip
    try:
        rows = c.submit("g.V().has('name', n).values('age')", {"n": "marko"}).all().result()
        assert rows == [29]
        # the connection stays authenticated: the next request is answered directly
        assert c.submit("g.V().hasLabel('person').count()").all().result() == [4]
    finally:
        c.close()


def test_remote_traversals_authenticate_too(url: str) -> None:
    conn = DriverRemoteConnection(url, "g", username="alice", password="s3cret")
    try:
        g = traversal().with_remote(conn)
        assert sorted(g.V().has("name", "marko").out("knows").values("name").to_list()) == [
            "josh", "vadas",
        ]  # fmt: skip
    finally:
        conn.close()


@pytest.mark.parametrize(("user", "password"), [("alice", "wrong"), ("mallory", "s3cret")])
def test_wrong_credentials_get_401_and_nothing_runs(url: str, user: str, password: str) -> None:
    before = CountingBackend.calls
    c = Client(url, "g", username=user, password=password)
    try:
        with pytest.raises(GremlinServerError) as info:
            c.submit("g.V().has('name', 'marko').values('age')").all().result()
        assert info.value.status_code == 401
    finally:
        c.close()
    assert CountingBackend.calls == before


def test_without_credentials_the_client_is_challenged(url: str) -> None:
    c = Client(url, "g")
    try:
        with pytest.raises(Exception, match="requires authentication"):
            c.submit("g.V().has('name', 'marko').values('age')").all().result()
    finally:
        c.close()


def test_http_form_takes_basic_auth(url: str) -> None:
    address = url.replace("ws://", "http://")
    body = {"gremlin": "g.V().has('name', 'vadas').values('age')"}

    async def post(auth: aiohttp.BasicAuth | None) -> int:
        async with (
            aiohttp.ClientSession() as session,
            session.post(address, json=body, auth=auth) as resp,
        ):
            return resp.status

    assert asyncio.run(post(aiohttp.BasicAuth("alice", "s3cret"))) == 200
    assert asyncio.run(post(aiohttp.BasicAuth("alice", "nope"))) == 401
    assert asyncio.run(post(None)) == 401


def test_authentication_sent_first_then_requests_are_answered(url: str) -> None:
    """A driver that authenticates before its first request (no 407 round trip)."""
    serializer = GraphBinarySerializersV1()
    sasl = base64.b64encode(b"\0alice\0s3cret").decode()

    def frame(op: str, args: dict[str, Any]) -> tuple[str, bytes]:
        request_id = str(uuid.uuid4())
        message = RequestMessage("", op, args)
        return request_id, serializer.serialize_message(request_id, message)

    async def exchange() -> list[tuple[bool, int, Any]]:
        answers = []
        async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
            for op, args in (("authentication", {"sasl": sasl}),
                             ("eval", {"gremlin": "g.V().has('name', 'josh').values('age')",
                                       "aliases": {"g": "g"}})):  # fmt: skip
                request_id, data = frame(op, args)
                await ws.send_bytes(data)
                reply = serializer.deserialize_message((await ws.receive(timeout=10)).data)
                same_id = str(reply["requestId"]) == request_id
                answers.append((same_id, reply["status"]["code"], reply["result"]["data"]))
        return answers

    (auth_same, auth_code, _), (eval_same, eval_code, rows) = asyncio.run(exchange())
    assert auth_same and auth_code == 204
    assert eval_same and eval_code == 200 and rows == [32]
