"""The FalkorDB backend's transport (proxy.backends.resp, hiredis as the parser) against the
real FalkorDB: a reply that comes too late or a cancelled query never reaches the next query
on the same connection, a busy pool makes callers wait (and gives up with an unavailability
error), a refused login is an unavailability, not a query error."""

from __future__ import annotations

import asyncio

import pytest
import redis

from query_guard.backend import BackendError, BackendUnavailable, collect
from query_guard.backends.embedded import EmbeddedFalkorDB
from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.wire.resp import bulk, command_around, encode_command

# keeps FalkorDB busy for a while and answers with one distinctive row
SLOW = "UNWIND range(1, 10000000) AS x WITH count(x) AS n RETURN n"  # about a second


async def value(backend: FalkorDBBackend, query: str) -> object:
    rows = await collect(await backend.run(query, {}))
    return rows[0][0]


def test_a_late_reply_is_not_the_next_querys_answer(movies_url: str) -> None:
    async def main() -> None:
        backend = FalkorDBBackend(movies_url, max_connections=1, read_timeout=0.3)
        try:
            with pytest.raises(BackendError) as info:
                await value(backend, SLOW)
            assert not isinstance(info.value, BackendUnavailable)
            assert "no reply" in info.value.message
            # the one pooled connection must not hand SLOW's late count to this query; give the
            # late reply time to arrive, and allow a loaded machine to miss 0.3 s twice
            await asyncio.sleep(1.0)
            for attempt in range(3):
                try:
                    assert await value(backend, "RETURN 7") == 7
                    break
                except BackendError as exc:
                    assert "no reply" in exc.message and attempt < 2
        finally:
            await backend.close()

    asyncio.run(main())


def test_a_cancelled_query_does_not_leak_its_reply(movies_url: str) -> None:
    async def main() -> None:
        backend = FalkorDBBackend(movies_url, max_connections=1)
        try:
            slow = asyncio.ensure_future(value(backend, SLOW))
            await asyncio.sleep(0.1)
            slow.cancel()
            with pytest.raises(asyncio.CancelledError):
                await slow
            assert await value(backend, "RETURN 7") == 7
            assert [await value(backend, f"RETURN {i}") for i in range(5)] == list(range(5))
        finally:
            await backend.close()

    asyncio.run(main())


def test_callers_wait_for_a_pooled_connection(movies_url: str) -> None:
    async def main() -> list[object]:
        backend = FalkorDBBackend(movies_url, max_connections=2)
        try:
            return await asyncio.gather(*(value(backend, f"RETURN {i}") for i in range(30)))
        finally:
            await backend.close()

    assert asyncio.run(main()) == list(range(30))


def test_a_refused_login_is_unavailable(tmp_path_factory: pytest.TempPathFactory) -> None:
    with EmbeddedFalkorDB(tmp_path_factory.mktemp("login")) as db:
        assert db.password
        wrong = FalkorDBBackend(db.url.replace(f":{db.password}@", ":wrong@"))

        async def main() -> None:
            try:
                with pytest.raises(BackendUnavailable):
                    await value(wrong, "RETURN 1")
            finally:
                await wrong.close()

        asyncio.run(main())
        with redis.Redis(host=db.host, port=db.port, password=db.password) as client:
            assert client.ping()


def test_a_command_encoded_around_its_statement_equals_the_whole_command() -> None:
    """FalkorDB's query command is framed once per graph and schema version; only the
    statement is encoded per query, and the bytes are those of the whole command."""
    args = ("GRAPH.RO_QUERY", "movies", "", "--compact", "version", 7, "timeout", 1000)
    before, after = command_around(args, 2)
    for statement in ("RETURN 1", 'CYPHER t="é" MATCH (m) RETURN m', ""):
        whole = encode_command((*args[:2], statement, *args[3:]))
        assert before + bulk(statement) + after == whole
