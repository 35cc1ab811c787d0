"""`query-guard export --out DIR` (DESIGN §10, DKGI: the graph as files an agent can read).

`layout` (pure: file names, lines, redaction, the README), `sources` (reading a Cypher or
Gremlin graph in pages), `writer` (streaming pages to files), `cli` (the subcommand).
"""
