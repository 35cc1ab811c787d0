"""The `query-guard` command and its subcommands."""
