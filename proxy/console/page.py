"""The console's routes on the HTTP front: `GET /ui` (the page), `/ui/state.json` (what the
page polls: a sequence number that changes with every query), `/ui/panels` (the live part of
the page, re-rendered) and `/ui/static/*` (its script, style sheet and icon, package data).

Everything is rendered by Jinja2 with autoescaping on (a query's text is the client's, which
may be an attacker's), served with a Content-Security-Policy that allows only this server's
own script and style sheet (no inline script, no other origin), and behind the front's own
Host/Origin checks and credentials (`http_policy`, `http_auth`), as every other path."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from query_guard.codes import CODES
from query_guard.console.diff import side_by_side
from query_guard.console.feed import FeedState, QueryFeed, Snapshot
from query_guard.console.peers import all_seqs, all_states, provide
from query_guard.run.peers import Peers

HERE = Path(__file__).resolve().parent
STATIC = {  # the files under /ui/static/ and their media types (nothing else is served)
    "console.js": "text/javascript; charset=utf-8",
    "console.css": "text/css; charset=utf-8",
    "icon.svg": "image/svg+xml",
}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}
EXAMPLES = 20  # experience examples listed


class Console:
    """One per HTTP front: `feed` is the server's `QueryFeed`, `experience` its library (or
    None); `attach` puts the console on an aiohttp application, with the other workers of
    one `serve` as `peers` (None: one process; `query_guard.console.peers`)."""

    def __init__(
        self, feed: QueryFeed, experience: Any = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.feed = feed
        self.experience = experience
        self.clock = clock
        self.peers: Peers | None = None
        self.templates = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        )  # fmt: skip
        self.templates.filters.update(clock=_clock, meaning=_meaning, bars=bars)
        self.templates.globals["side_by_side"] = side_by_side

    def attach(self, app: web.Application, peers: Peers | None = None) -> None:
        self.peers = peers
        if peers is not None:
            provide(peers, self.feed)
        router = app.router
        router.add_get("/ui", self.page)
        router.add_get("/ui/", self.page)
        router.add_get("/ui/state.json", self.state)
        router.add_get("/ui/panels", self.panels)
        router.add_get("/ui/static/{name}", self.static)

    async def page(self, request: web.Request) -> web.Response:
        return self._html("console.html", await self._view())

    async def panels(self, request: web.Request) -> web.Response:
        return self._html("panels.html", await self._view())

    async def state(self, request: web.Request) -> web.Response:
        seq = await all_seqs(self.peers, self.feed) if self.peers is not None else self.feed.seq
        response = web.json_response({"seq": seq, "minute": int(self.clock() // 60)})
        response.headers.update(HEADERS)
        return response

    async def static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC:
            raise web.HTTPNotFound()
        response = web.Response(body=(HERE / "static" / name).read_bytes())
        response.headers.update(HEADERS)
        response.headers["Content-Type"] = STATIC[name]
        response.headers["Cache-Control"] = "no-cache"
        return response

    async def _view(self) -> dict[str, Any]:
        snapshot: Snapshot = (await self._state()).snapshot(int(self.feed.clock() // 60))
        experience = None
        if self.experience is not None:
            examples = await self.experience.listing(EXAMPLES)
            experience = {"size": self.experience.size, "examples": examples}
        return {"s": snapshot, "experience": experience, "minute": int(self.clock() // 60)}

    async def _state(self) -> FeedState:
        if self.peers is None:
            return self.feed.state()
        return await all_states(self.peers, self.feed)

    def _html(self, template: str, view: dict[str, Any]) -> web.Response:
        text = self.templates.get_template(template).render(view)
        response = web.Response(text=text, content_type="text/html", charset="utf-8")
        response.headers.update(HEADERS)
        return response


def _clock(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%H:%M:%S")


def _meaning(code: str) -> str:
    known = CODES.get(code)
    return known.meaning if known is not None else ""


def bars(counts: tuple[int, ...], width: int = 120, height: int = 24) -> list[dict[str, int]]:
    """Bars of an SVG sparkline (x, y, w, h in user units), one per minute, highest = full."""
    top = max(counts, default=0) or 1
    step = width / max(len(counts), 1)
    return [
        {"x": round(i * step, 1), "w": max(round(step - 1, 1), 1),
         "h": max(round(height * n / top), 1 if n else 0), "y": height - round(height * n / top)}
        for i, n in enumerate(counts)
    ]  # fmt: skip
