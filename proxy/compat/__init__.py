"""Compatibility with Neo4j-only client libraries: system procedures the proxy answers from its
schema catalog (`procedures`), written into the query as literal rows (`rewrite`)."""
