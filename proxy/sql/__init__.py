"""SQL through the same guard: parsed with sqlglot (any of its dialects), judged by the `sql_*`
rule plugins, spans in the client's text."""
