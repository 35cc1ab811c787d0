"""The guard pipeline, pure and synchronous: the `Language` strategy, the hooks, the rule
registry and the rules' typed options. It knows no query language: each language package
builds its own `Language`, and `query_guard.build` hands them to the `Guard`."""
