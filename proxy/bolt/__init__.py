"""Bolt, the neo4j wire protocol, spoken by the server side of the proxy.

`packstream` (value codec), `values` (structure semantics per version), `temporal` (client
temporal parameters kept lossless), `messages` (requests, responses, chunk framing),
`handshake` (version negotiation), `diagnostics` (findings as Bolt failures / notifications),
`context` (what a server's connections share), `conversation` (one connection's state),
`session` (the state machine), `queries` (RUN through the guard), `streaming` (PULL /
DISCARD). Our upstream client: `upstream` (one connection) and `relay_results`, used by
`query_guard.backends.bolt_relay`. The asyncio server lives in `query_guard.frontends.bolt`.
"""
