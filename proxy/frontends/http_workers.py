"""HTTP requests that belong to another worker of one `serve` (`[server] workers = N`).

An explicit transaction of the Query API lives in the worker that opened it (it holds a backend
transaction), but a client's next request may reach any worker: each worker names itself in the
ids of the transactions it opens, and also serves its HTTP application on a Unix socket
`<worker>.http` in the supervisor's private directory (`query_guard.run.peers`). A request for
another worker's transaction is sent there as the client sent it — method, path, headers, body —
and its answer returned as that worker gave it; the owner checks Host, Origin and credentials
again, as for any request. Neo4j's own clusters ask clients to carry an affinity header instead;
here nothing is asked of the client."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

SUFFIX = ".http"
# hop-by-hop headers and those the two connections set for themselves
NOT_FORWARDED = frozenset({
    "connection", "keep-alive", "transfer-encoding", "content-length", "upgrade", "te",
    "trailer", "proxy-connection", "date", "server",
})  # fmt: skip
CONNECT_SECONDS = 2.0
CLIENT = "X-Query-Guard-Client"  # the client's address, from the worker that forwarded


def socket_of(directory: Path, worker: str) -> Path:
    return directory / f"{worker}{SUFFIX}"


async def forward(request: web.Request, socket: Path, not_found: web.Response) -> web.Response:
    """`request` answered by the worker listening on `socket`; `not_found` when that worker is
    gone (its transactions went with it)."""
    body = await request.read()
    headers = [(k, v) for k, v in request.headers.items()
               if k.lower() not in NOT_FORWARDED and k.lower() != CLIENT.lower()]  # fmt: skip
    headers.append((CLIENT, request.remote or ""))
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_SECONDS)
    try:
        connector = aiohttp.UnixConnector(path=str(socket))
        async with (
            aiohttp.ClientSession(connector=connector, timeout=timeout,
                                  auto_decompress=False) as session,
            session.request(
                request.method, f"http://worker{request.rel_url}", headers=headers, data=body,
                allow_redirects=False, skip_auto_headers=("User-Agent", "Accept-Encoding"),
            ) as answer,
        ):  # fmt: skip
            response = web.Response(status=answer.status, body=await answer.read())
            for key, value in answer.headers.items():
                if key.lower() not in NOT_FORWARDED:
                    response.headers.add(key, value)
            return response
    except (aiohttp.ClientConnectionError, OSError):
        return not_found


def not_found_response(code: str, tx_id: str) -> web.Response:
    error = {"code": code, "message": f"transaction {tx_id} is not open (expired, committed, "
                                      "rolled back, or its worker stopped)"}  # fmt: skip
    return web.Response(status=404, text=json.dumps({"errors": [error]}),
                        content_type="application/json")  # fmt: skip


@web.middleware
async def forwarded_client(request: web.Request, handler: Any) -> web.StreamResponse:
    """A request another worker forwarded (it arrives on this worker's Unix socket, which only
    the workers can reach) keeps its client's address for the audit; the header means nothing
    on any other connection."""
    client = request.headers.get(CLIENT)
    transport = request.transport
    sock = transport.get_extra_info("socket") if transport is not None else None
    if client is not None and sock is not None and sock.family == socket.AF_UNIX:
        request = request.clone(remote=client)
    return await handler(request)  # type: ignore[no-any-return]
