"""The LLM repair plugin against a scripted OpenAI-compatible server (a real aiohttp server
speaking POST /v1/chat/completions), on the movie graph in a real FalkorDB."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

from query_guard.backend import collect
from query_guard.backends.falkordb import FalkorDBBackend
from query_guard.build import build_guard
from query_guard.config.load import parse_config
from query_guard.repair.model import BLOCKED, EMPTY, ROWS, RepairOutcome
from query_guard.repair.repairer import build_repairer
from query_guard.rules.llm_repair import from_config, parse_reply
from tests.e2e.test_repair_falkordb import MOVIES

# a name grounding cannot fix by itself (no stored value contains it): the LLM's job
KEANU = (
    "MATCH (p:Person {name: 'Reeves Keanu'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title"
)
FIXED = "MATCH (p:Person {name: 'Keanu Reeves'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title"
QUESTION = "Which movies did Keanu act in?"


class ScriptedLLM:
    """Answers each chat completion with the next scripted content (or sleeps: a timeout)."""

    def __init__(self, *replies: str | float) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        reply = self.replies.pop(0) if self.replies else "I cannot help."
        if isinstance(reply, float):
            await asyncio.sleep(reply)
            reply = "ERROR: X.LATE\nCAUSE: late\nFIX: RETURN 1"
        return web.json_response(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            }
        )


async def with_llm(llm: ScriptedLLM, work: Callable[[str], Awaitable[Any]]) -> Any:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", llm.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        return await work(f"http://127.0.0.1:{port}/v1")
    finally:
        await runner.cleanup()


def repair_with(
    movies_url: str, llm: ScriptedLLM, text: str = KEANU, timeout: float = 5.0, **cfg: Any
) -> tuple[RepairOutcome, list[list[Any]]]:
    async def work(base_url: str) -> tuple[RepairOutcome, list[list[Any]]]:
        llm_cfg = {"base_url": base_url, "model": "test-model", "api_key_env": "QG_TEST_KEY"}
        config = parse_config({"repair": {**cfg, "llm": {**llm_cfg, "timeout_seconds": timeout}}})
        guard = build_guard(config, MOVIES, entry_points=False)
        repairer = build_repairer(guard, config)
        assert repairer is not None
        backend = FalkorDBBackend(movies_url, read_only=True)
        try:
            start = guard.check(text).query
            out = await repairer.run(
                start, execute=backend.run, check=guard.check, question=QUESTION
            )
            return out, (await collect(out.stream) if out.stream else [])
        finally:
            await backend.close()

    return asyncio.run(with_llm(llm, work))


def test_success_with_the_real_request_shape(
    movies_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QG_TEST_KEY", "sk-test")
    llm = ScriptedLLM(
        "Looking at the notes, the name is wrong.\n\n**ERROR:** ENT.LITERAL\n"
        "**CAUSE:** The name is stored as 'Keanu Reeves'.\n**FIX:**\n```cypher\n"
        f"{FIXED}\n```\nThis should work."
    )
    out, rows = repair_with(movies_url, llm)
    assert len(rows) == 7 and out.query.startswith(FIXED)
    assert [a.outcome for a in out.attempts][-1] == ROWS
    assert out.attempts[-1].source == "llm_repair" and out.attempts[-1].code == "ENT.LITERAL"
    (body,) = llm.requests
    assert body["model"] == "test-model" and body["max_tokens"] == 512
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert llm.headers[0]["Authorization"] == "Bearer sk-test"
    system, user = (m["content"] for m in body["messages"])
    assert "ERROR: <one code>" in system and "DIR.REVERSED" in system
    assert "(:Person)-[:ACTED_IN]->(:Movie)" in user and "stored once per pair" in user
    assert f"Question: {QUESTION}" in user and "Outcome: empty result" in user
    assert "'Reeves Keanu' is not stored on Person.name; stored: 'Keanu Reeves'" in user


def test_ping_pong_stops(movies_url: str) -> None:
    other = KEANU.replace("ACTED_IN", "DIRECTED")
    llm = ScriptedLLM(
        f"ERROR: SCH.UNKNOWN_REL_TYPE\nCAUSE: x\nFIX: {other}", f"ERROR: X.Y\nFIX: {KEANU}"
    )
    out, rows = repair_with(movies_url, llm, relaxation=False)
    assert out.stop == "ping-pong" and rows == [] and len(llm.requests) == 2
    assert out.query.startswith(other)


def test_the_same_code_twice_stops(movies_url: str) -> None:
    llm = ScriptedLLM(
        "ERROR: ENT.LITERAL\nCAUSE: a\nFIX: " + KEANU.replace("'Reeves Keanu'", "'Keanu X'"),
        "ERROR: ENT.LITERAL\nCAUSE: b\nFIX: " + KEANU.replace("'Reeves Keanu'", "'K. Reeves'"),
        "ERROR: ENT.LITERAL\nCAUSE: c\nFIX: " + FIXED,
    )
    out, rows = repair_with(movies_url, llm, tier1=False, relaxation=False)
    assert out.stop == "same diagnosis twice" and len(llm.requests) == 2
    assert "'K. Reeves'" in out.query and rows == []


def test_a_candidate_with_delete_is_blocked_and_never_runs(movies_url: str) -> None:
    llm = ScriptedLLM(
        "ERROR: PAT.X\nCAUSE: start over\nFIX: MATCH (n) DETACH DELETE n",
        f"ERROR: ENT.LITERAL\nCAUSE: name\nFIX: {FIXED}",
    )
    out, rows = repair_with(movies_url, llm)
    blocked = [a for a in out.attempts if a.outcome == BLOCKED]
    assert len(blocked) == 1 and "SEC.WRITE" in (blocked[0].error or "")
    assert len(rows) == 7
    second = llm.requests[1]["messages"][1]["content"]
    assert "Outcome: error: the proposed rewrite was blocked" in second


def test_a_timeout_is_handled(movies_url: str, caplog: pytest.LogCaptureFixture) -> None:
    llm = ScriptedLLM(1.5)
    out, rows = repair_with(movies_url, llm, timeout=0.3)
    # the call was given up (logged, skipped): the late answer never became a candidate
    failed = [r.getMessage() for r in caplog.records if "repair plugin" in r.getMessage()]
    assert failed and "llm_repair failed" in failed[0] and "Timeout" in failed[0]
    assert out.stop == "no candidate" and rows == []
    assert out.query == out.attempts[0].query and out.attempts[0].outcome == EMPTY


@pytest.mark.parametrize(
    ("reply", "query", "code"),
    [
        ("ERROR: DIR.REVERSED\nCAUSE: arrow\nFIX: MATCH (a)<-[:X]-(b) RETURN a",
         "MATCH (a)<-[:X]-(b) RETURN a", "DIR.REVERSED"),
        ("```\nERROR: AGG.DISTINCT\nCAUSE: dupes\nFIX: MATCH (a)\nRETURN DISTINCT a\n```",
         "MATCH (a)\nRETURN DISTINCT a", "AGG.DISTINCT"),
        ("Sure!\n```cypher\nMATCH (n) RETURN n\n```", "MATCH (n) RETURN n", None),
        ("error: `ent.literal`\nfix: `MATCH (n) RETURN n`\n\nExplanation follows.",
         "MATCH (n) RETURN n", "ENT.LITERAL"),
        ("ERROR: SCH.NO_PATH\nCAUSE: nothing to do", None, None),
        ("", None, None),
    ],
)  # fmt: skip
def test_parse_reply(reply: str, query: str | None, code: str | None) -> None:
    got = parse_reply(reply)
    if query is None:
        assert got is None
    else:
        assert got is not None and got.query == query and got.code == code


def test_off_unless_configured() -> None:
    assert from_config({}) is None and from_config({"llm": {"model": "m"}}) is None
    config = parse_config({"repair": {"llm": {"base_url": "http://127.0.0.1:9/v1"}}})
    guard = build_guard(config, MOVIES, entry_points=False)
    assert build_repairer(guard, config) is not None
    assert guard.pm.has_plugin("llm_repair")
    plain = build_guard(parse_config({}), MOVIES, entry_points=False)
    build_repairer(plain, parse_config({}))
    assert not plain.pm.has_plugin("llm_repair")
    assert json.dumps(config.repair["llm"])  # the validated table stays plain data
