"""A fake LLM for the library compatibility tests: a real HTTP server on a loopback port that
speaks OpenAI's chat-completions API, so LLM-app libraries talk to it through their own OpenAI
classes (`base_url=`) exactly as they would to a hosted model.

It answers deterministically. A prompt that hands the model query results to phrase (the
"Information:" block of the libraries' answer prompts) is answered with that block verbatim,
so a chain's final answer shows exactly which rows reached the model; every other prompt (the
text-to-Cypher prompts) is answered with the canned `reply` the test set. Each request's
messages are kept in `prompts`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from typing import Any

from aiohttp import web

from tests.background_loop import BackgroundLoop

# "Information:\n{context}\n\nQuestion: …" (langchain) / "Information:\n {context}\n Helpful…"
_INFORMATION = re.compile(r"Information:\s*\n(.*?)\n\s*(?:Question:|Helpful Answer:)", re.S)


class FakeLLM:
    """`with FakeLLM() as llm: llm.reply = "MATCH …"`; point clients at `llm.base_url`."""

    model = "gpt-4o-mini"  # a name every client library knows (context size, tokenizer)

    def __init__(self) -> None:
        self.reply = ""
        self.prompts: list[str] = []
        self._ids = itertools.count(1)
        self._loop: BackgroundLoop | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def answer(self, prompt: str) -> str:
        """What the fake model says to `prompt`."""
        information = _INFORMATION.search(prompt)
        return information.group(1).strip() if information else self.reply

    # ------------------------------------------------------------------ HTTP

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        prompt = "\n".join(_text(m.get("content")) for m in body.get("messages", []))
        self.prompts.append(prompt)
        content = self.answer(prompt)
        ident = f"chatcmpl-fake-{next(self._ids)}"
        base = {"id": ident, "created": int(time.time()), "model": body.get("model", self.model)}
        if body.get("stream"):
            return await _stream(request, base, content)
        usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": len(content.split())}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
            "logprobs": None,
        }
        return web.json_response(
            {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        )

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def start(self) -> FakeLLM:
        self._loop = BackgroundLoop()
        self._loop.call(self._start())
        return self

    def stop(self) -> None:
        if self._loop is not None:
            if self._runner is not None:
                self._loop.call(self._runner.cleanup())
            self._loop.close_loop()
            self._loop = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a content list."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


async def _stream(request: web.Request, base: dict[str, Any], content: str) -> web.StreamResponse:
    """The same answer as server-sent events (`stream: true`): one content chunk, then stop."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    chunk = {**base, "object": "chat.completion.chunk"}
    deltas = [({"role": "assistant", "content": content}, None), ({}, "stop")]
    for delta, finish in deltas:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        await response.write(f"data: {json.dumps({**chunk, 'choices': [choice]})}\n\n".encode())
        await asyncio.sleep(0)
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response
