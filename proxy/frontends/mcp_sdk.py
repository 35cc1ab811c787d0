"""The `mcp` SDK's two majors behind one face, so a fresh `pip install` works with either.

mcp 1.x calls the high-level server `FastMCP` (`mcp.server.fastmcp`) and takes the
streamable-HTTP settings in its constructor; mcp 2.x renamed it `MCPServer`
(`mcp.server.mcpserver`), takes them in `streamable_http_app()`, and its result models use
snake_case fields with camelCase aliases. Everything the MCP front needs from the SDK goes
through this module: a server, its ASGI app, tool annotations and tool results (built from the
wire's camelCase names, which both majors validate).
"""

from __future__ import annotations

import json
from importlib import metadata
from typing import Any

import mcp.types as mcp_types

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as _Server

    SDK_MAJOR = 2
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as _Server  # type: ignore[no-redef,import-not-found]

    SDK_MAJOR = 1

NAME = "query-guard"


def our_version() -> str:
    try:
        return metadata.version("query-guard")
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


MCP_PATH = "/mcp"  # where the HTTP front mounts the streamable-HTTP transport


def new_server(instructions: str) -> Any:
    """An SDK server named query-guard (its `serverInfo`) with our version and quiet logging."""
    if SDK_MAJOR == 2:
        server = _Server(NAME, instructions=instructions, version=our_version(),
                         log_level="WARNING")  # fmt: skip
    else:
        server = _Server(
            NAME, instructions=instructions, log_level="WARNING",
            streamable_http_path=MCP_PATH, stateless_http=True, json_response=True,
        )  # fmt: skip
        server._mcp_server.version = our_version()  # 1.x: the SDK's own version otherwise
    return server


def http_app(server: Any) -> Any:
    """The server's streamable-HTTP ASGI app: stateless, JSON responses (every request carries
    what it needs). The SDK's own `Host`/`Origin` check (mcp 2.x turns it on for loopback
    listeners, with loopback names only) is off: the HTTP front checks both for every path,
    `/mcp` included, against `[server] http_allowed_hosts` and `http_cors_origins`."""
    if SDK_MAJOR == 2:
        from mcp.server.transport_security import TransportSecuritySettings

        return server.streamable_http_app(
            streamable_http_path=MCP_PATH, json_response=True, stateless_http=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )  # fmt: skip
    return server.streamable_http_app()


async def run_stdio(server: Any, stdin: Any, stdout: Any) -> None:
    """Serve `server` over the SDK's stdio transport with our own line streams (`stdin`: an
    async iterator of message lines, `stdout`: async `write`/`flush` of text), until `stdin`
    ends. Both majors' `stdio_server` take such streams."""
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server if SDK_MAJOR == 2 else server._mcp_server
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def annotations(*, title: str, read_only: bool) -> Any:
    """Tool annotations: reads only what the proxy's database holds (a closed world)."""
    return mcp_types.ToolAnnotations.model_validate(
        {"title": title, "readOnlyHint": read_only, "openWorldHint": False}
    )


def tool_result(payload: dict[str, Any], *, error: bool = False, text: str | None = None) -> Any:
    """A tool result carrying `payload` as `structuredContent` and as JSON text (or `text`,
    where a plain text says the same); `error` marks a refused or failed call (`isError:
    true`, which agents read as a failed tool call) — the payload still says why and what to
    fix."""
    if text is None:
        text = json.dumps(payload, default=str, ensure_ascii=False)
    return mcp_types.CallToolResult.model_validate(
        {
            "content": [{"type": "text", "text": text}],
            "structuredContent": payload,
            "isError": error,
        }
    )
