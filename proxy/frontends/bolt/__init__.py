"""The Bolt front: Bolt, the neo4j wire protocol, spoken by the server side of the proxy.

`server` (the asyncio listener, plain or TLS), `connection` (one client connection's bytes:
handshake, chunk framing, flow control), `context` (what a server's connections share),
`conversation` (one connection's state), `session` (the state machine), `queries` (RUN through
the runner), `streaming` (PULL / DISCARD), `diagnostics` (findings as Bolt failures and
notifications), `limits` (connection caps). The codecs both directions
share are in `query_guard.wire` (`packstream`, `bolt_values`, `bolt_temporal`,
`bolt_messages`, `bolt_handshake`); the client side towards an upstream Bolt server is in
`query_guard.backends` (`bolt_upstream`, `bolt_results`, `bolt_relay`).
"""
