"""Bolt, the neo4j wire protocol, spoken by the server side of the proxy.

`packstream` (value codec), `values` (structure semantics per version), `messages` (requests,
responses, chunk framing), `handshake` (version negotiation), `diagnostics` (findings as Bolt
failures / notifications), `streaming` (PULL / DISCARD), `session` (the state machine). The
asyncio server lives in `proxy.frontends.bolt`.
"""
